-- One attempt at a time pays for an LLM call: an attempt claims the call key before it sends the
-- request and renews the claim while it waits; another attempt of the same activity (alive at the
-- same time after a heartbeat timeout) waits for the claim's result instead of paying again.
CREATE TABLE llm_call_leases (
  call_key    text PRIMARY KEY,
  holder      text NOT NULL,
  expires_at  timestamptz NOT NULL
);

-- Every HTTP request to the model with the usage it reported, append-only: repair rounds and
-- answers that could not be used count too.
CREATE TABLE llm_requests (
  id                bigserial PRIMARY KEY,
  research_id       text NOT NULL,
  call_key          text NOT NULL,
  model             text NOT NULL,
  prompt_tokens     integer NOT NULL,
  completion_tokens integer NOT NULL,
  cost_usd          numeric(12, 6) NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX llm_requests_research ON llm_requests (research_id);
