-- The report as data (src/shared/report-doc.ts): title, notes, sections, charts and references,
-- which the Markdown and every export are rendered from. Null in reports written before it: those
-- are read as one section of their stored Markdown.
ALTER TABLE reports ADD COLUMN doc jsonb;
ALTER TABLE report_versions ADD COLUMN doc jsonb;
