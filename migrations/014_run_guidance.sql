-- Guidance the user gave a running research (a steering update): every later model call of the
-- run reads it. One row per message, numbered by the workflow; a retried write is a no-op.
CREATE TABLE run_guidance (
  research_id text NOT NULL,
  seq integer NOT NULL,
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (research_id, seq)
);
