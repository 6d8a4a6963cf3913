-- The workflow numbers its writes of a run's row: a write that arrives late (a retried activity,
-- a background write) never replaces a newer one, and a terminal status is never overwritten.
ALTER TABLE research_runs ADD COLUMN write_seq integer NOT NULL DEFAULT 0;
