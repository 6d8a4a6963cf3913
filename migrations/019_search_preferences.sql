-- A tenant's search preferences (PUT /v1/search-preferences): the providers its runs use (null: all
-- configured), domains whose results rank higher, and domains whose results are dropped unless
-- nothing else is left. A run's own bans (run_banned_domains) stay hard.
CREATE TABLE search_preferences (
  tenant         text PRIMARY KEY,
  providers      text[],
  prefer_domains text[] NOT NULL DEFAULT '{}',
  avoid_domains  text[] NOT NULL DEFAULT '{}',
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- A run's search settings, written with its row by the workflow: the period its sources must be
-- from (options.timeRange, resolved against the workflow's start time, inclusive dates) and the
-- providers it chose (options.searchProviders). The search and crawl activities read them with
-- the run's bans and its tenant's preferences in one query.
ALTER TABLE research_runs ADD COLUMN search_from date;
ALTER TABLE research_runs ADD COLUMN search_to date;
ALTER TABLE research_runs ADD COLUMN search_providers text[];

-- Publication dates where a provider or the page itself says: a run with a time range drops what
-- is known to be outside it, and the model reads the date with the source.
ALTER TABLE sources ADD COLUMN published date;
ALTER TABLE pages ADD COLUMN published date;
