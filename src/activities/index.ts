import type pg from 'pg';
import type OpenAI from 'openai';
import type { Config } from '../config';
import { createCrawlActivities } from './crawl';
import { createLlmCaller } from './llm';
import { createResearchActivities } from './research';
import { searxngProvider } from './search/searxng';
import { createLlmCallStore, createResearchStore, createStoreActivities } from './store';

export interface ActivityDeps {
  config: Pick<Config, 'llm' | 'search' | 'crawl'>;
  pool: pg.Pool;
  llmClient?: OpenAI;
}

/** Every activity the worker registers; workflows import this type only. */
export function createActivities(deps: ActivityDeps) {
  const call = createLlmCaller({
    config: deps.config,
    calls: createLlmCallStore(deps.pool),
    ...(deps.llmClient ? { client: deps.llmClient } : {}),
  });
  const store = createResearchStore(deps.pool);
  return {
    ...createCrawlActivities({ config: deps.config, store, call }),
    ...createResearchActivities({
      call,
      store,
      search: deps.config.search.searxngUrl ? searxngProvider(deps.config.search.searxngUrl) : undefined,
      searchMaxResults: deps.config.search.maxResults,
    }),
    ...createStoreActivities({ pool: deps.pool }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
