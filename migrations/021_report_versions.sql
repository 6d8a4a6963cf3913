-- Report versions. Version 1 is the run's own report (the reports table), which never changes once
-- the run has ended; a rewrite (POST /v1/research/:id/report) writes version 2, 3, … from the same
-- findings and sources. The run's own report keeps what it was written from (the research
-- question, the accepted step results' document keys, the run's notes), so a rewrite reads
-- exactly those; runs that ended before this column have it derived from their stored documents.
ALTER TABLE reports ADD COLUMN basis jsonb;

CREATE TABLE report_versions (
  research_id       text NOT NULL,
  version           integer NOT NULL CHECK (version >= 2),
  tenant            text NOT NULL,
  status            text NOT NULL DEFAULT 'writing' CHECK (status IN ('writing', 'ready', 'failed')),
  -- What the rewrite was asked for: { reportLength?, locale?, audience?, instructions?, model? }.
  options           jsonb NOT NULL,
  error             text,
  -- The rewrite's own token usage and cost (never added to the run's).
  prompt_tokens     integer NOT NULL DEFAULT 0,
  completion_tokens integer NOT NULL DEFAULT 0,
  cost_usd          numeric(12, 6) NOT NULL DEFAULT 0,
  idempotency_key   text,
  request_hash      text NOT NULL,
  -- The report as written, like a row of reports (null while writing).
  title             text,
  locale            text,
  markdown          text,
  references_       jsonb,
  removed_citations jsonb NOT NULL DEFAULT '[]',
  removed_links     jsonb NOT NULL DEFAULT '[]',
  grounding         jsonb,
  citation_checks   jsonb NOT NULL DEFAULT '[]',
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (research_id, version)
);
CREATE UNIQUE INDEX report_versions_idempotency ON report_versions (research_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
