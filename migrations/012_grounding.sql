-- What the claim check found: the figures (citations checked, supported, flagged, removed) and
-- each citation it flagged or removed, with the sentence and the reason.
ALTER TABLE reports ADD COLUMN grounding jsonb;
ALTER TABLE reports ADD COLUMN citation_checks jsonb NOT NULL DEFAULT '[]';
