-- One row per research run; id is the Temporal workflow id.
CREATE TABLE research_runs (
  id             text PRIMARY KEY,
  tenant         text NOT NULL DEFAULT 'default',
  question       text NOT NULL,
  status         text NOT NULL,
  outcome        text,
  locale         text,
  answer         text,
  error          text,
  prompt_tokens  integer NOT NULL DEFAULT 0,
  completion_tokens integer NOT NULL DEFAULT 0,
  cost_usd       numeric(12, 6) NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  completed_at   timestamptz
);
CREATE INDEX research_runs_tenant_created ON research_runs (tenant, created_at DESC);

-- Every finished LLM call, keyed by the activity that made it (workflow run id + activity id).
-- A retried activity whose earlier attempt already got an answer reuses it: no call is paid twice.
CREATE TABLE llm_calls (
  call_key          text PRIMARY KEY,
  research_id       text NOT NULL,
  role              text NOT NULL,
  model             text NOT NULL,
  prompt_name       text NOT NULL,
  response          jsonb NOT NULL,
  prompt_tokens     integer NOT NULL,
  completion_tokens integer NOT NULL,
  cost_usd          numeric(12, 6) NOT NULL,
  duration_ms       integer NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX llm_calls_research ON llm_calls (research_id);
