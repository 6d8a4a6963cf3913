-- The models a run named for its roles (options.models): every LLM call of the run reads them with
-- its claim on the call (src/activities/store/runs.ts), so a run's child steps use them too.
ALTER TABLE research_runs ADD COLUMN llm_models jsonb;
