-- Everything a research run retrieved or wrote, kept out of Temporal's history.
ALTER TABLE research_runs ADD COLUMN phase text;
ALTER TABLE research_runs ADD COLUMN plan jsonb;
ALTER TABLE research_runs ADD COLUMN plan_version integer;

-- Sources a run retrieved. source_id is stable: 'S' + 8 hex of sha256(normalised URL).
CREATE TABLE sources (
  research_id  text NOT NULL,
  source_id    text NOT NULL,
  url          text NOT NULL,
  title        text NOT NULL DEFAULT '',
  content      text NOT NULL DEFAULT '',
  provider     text NOT NULL,
  score        double precision,
  first_seq    bigserial,
  retrieved_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (research_id, source_id)
);

-- Long texts of a run: the background brief, each step attempt's result. key is e.g.
-- 'background' or 'step/<stepId>/<attempt>'.
CREATE TABLE documents (
  research_id text NOT NULL,
  key         text NOT NULL,
  kind        text NOT NULL,
  content     text NOT NULL,
  summary     text NOT NULL,
  source_ids  text[] NOT NULL DEFAULT '{}',
  meta        jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (research_id, key)
);

CREATE TABLE reports (
  research_id text PRIMARY KEY,
  title       text NOT NULL,
  locale      text NOT NULL,
  markdown    text NOT NULL,
  -- [{ n, sourceId, url, title }] in reference-list order
  references_ jsonb NOT NULL,
  removed_citations jsonb NOT NULL DEFAULT '[]',
  created_at  timestamptz NOT NULL DEFAULT now()
);
