-- Tokens of model requests whose model has no price (neither LLM_PRICES nor the built-in table):
-- their cost is unknown, and a run's or a rewrite's cost reads so instead of $0.
ALTER TABLE llm_requests ADD COLUMN unpriced_tokens integer NOT NULL DEFAULT 0;
ALTER TABLE report_versions ADD COLUMN unpriced_tokens integer NOT NULL DEFAULT 0;
