-- What happened in a run, in order, for GET /v1/research/:id/events (server-sent events): phase
-- and status changes, plans, steps, tool calls, usage, the end. `seq` numbers a run's events
-- without gaps in commit order (an insert that loses the race for a number retries with the
-- next), so a client resuming after event N with Last-Event-ID misses nothing. `event_key` makes
-- a retried write a no-op.
CREATE TABLE run_events (
  research_id text NOT NULL,
  seq         bigint NOT NULL,
  event_key   text NOT NULL,
  type        text NOT NULL,
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (research_id, seq),
  UNIQUE (research_id, event_key)
);
