-- One row per finished sandbox run, keyed by the activity that made it: a retried activity
-- returns the stored result instead of running the code again.
CREATE TABLE sandbox_runs (
  call_key    text PRIMARY KEY,
  research_id text NOT NULL,
  step_id     text NOT NULL,
  attempt     integer NOT NULL,
  status      text NOT NULL,
  result      jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Files the code wrote to /output (charts, CSV), served by the API and linked from the report.
CREATE TABLE artifacts (
  research_id  text NOT NULL,
  artifact_id  text NOT NULL,
  step_id      text NOT NULL,
  name         text NOT NULL,
  content_type text NOT NULL,
  bytes        bytea NOT NULL,
  size         integer NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (research_id, artifact_id)
);
