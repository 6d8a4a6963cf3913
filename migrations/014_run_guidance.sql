-- Guidance the user gave a running research (a steering update): every later model call of the
-- run reads it. One row per message, numbered by the workflow; a retried write is a no-op.
CREATE TABLE run_guidance (
  research_id text NOT NULL,
  seq integer NOT NULL,
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (research_id, seq)
);

-- Domains the user banned from a running research: its searches drop their results, its crawler
-- refuses their pages and its report leaves out the sources already gathered from them.
CREATE TABLE run_banned_domains (
  research_id text NOT NULL,
  domain text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (research_id, domain)
);
