-- What the service remembers about a user (per tenant and user id): facts an LLM step learned from
-- the user's own words in a run (question, plan feedback, clarification answers, steering), each
-- with the quotes it came from. The coordinator, planner and reporter read them as data.
CREATE TABLE user_facts (
  id          text PRIMARY KEY,
  tenant      text NOT NULL,
  user_id     text NOT NULL,
  category    text NOT NULL,
  text        text NOT NULL,
  -- The fact's normalized words: a second fact with the same words merges into this one.
  norm        text NOT NULL,
  -- [{researchId, kind, quote, at}]
  evidence    jsonb NOT NULL DEFAULT '[]',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_facts_owner ON user_facts (tenant, user_id, updated_at);

-- A deleted fact leaves its normalized words and its evidence here, so the learning step never
-- teaches it again from that evidence or from anything said before the deletion.
CREATE TABLE user_fact_tombstones (
  id          bigserial PRIMARY KEY,
  tenant      text NOT NULL,
  user_id     text NOT NULL,
  norm        text NOT NULL,
  evidence    jsonb NOT NULL DEFAULT '[]',
  deleted_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_fact_tombstones_owner ON user_fact_tombstones (tenant, user_id);

-- A stored key made with `keys create --no-memory`: its requests neither use nor teach memory.
ALTER TABLE api_keys ADD COLUMN memory boolean NOT NULL DEFAULT true;
