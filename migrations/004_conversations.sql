-- A researcher's conversation with the model, one row per message, at positions the workflow
-- chooses: a retried activity rewrites the same position, so nothing is doubled.
CREATE TABLE conversation_messages (
  research_id text NOT NULL,
  conv_key    text NOT NULL,
  seq         integer NOT NULL,
  message     jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (research_id, conv_key, seq)
);
