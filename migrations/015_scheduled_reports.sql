-- Reports written by runs a schedule started: the next run of the same schedule compares its
-- findings and sources with the latest earlier one ("What changed since <date>").
CREATE TABLE scheduled_reports (
  schedule_id text NOT NULL,
  research_id text NOT NULL,
  -- When the run started (the workflow's start time): the order of a schedule's reports.
  started_at  timestamptz NOT NULL,
  -- The document keys of the run's accepted step results.
  step_keys   text[] NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (schedule_id, research_id)
);
CREATE INDEX scheduled_reports_order ON scheduled_reports (schedule_id, started_at DESC);
