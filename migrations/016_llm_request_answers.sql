-- The answer of each HTTP request to the model, written with its usage in one insert: an attempt
-- killed after the answer arrived but before the call log took it (llm_calls) is rebuilt from here
-- by the next attempt, instead of asking (and paying) again.
ALTER TABLE llm_requests ADD COLUMN answer jsonb;
CREATE INDEX llm_requests_call ON llm_requests (call_key, id);
