import type pg from 'pg';
import type OpenAI from 'openai';
import type { Config } from '../config';
import { createLlmCaller } from './llm';
import { createResearchActivities } from './research';
import { searxngProvider } from './search/searxng';
import { createLlmCallStore, createResearchStore, createStoreActivities } from './store';

export interface ActivityDeps {
  config: Pick<Config, 'llm' | 'search'>;
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
  return {
    ...createResearchActivities({
      call,
      store: createResearchStore(deps.pool),
      search: deps.config.search.searxngUrl ? searxngProvider(deps.config.search.searxngUrl) : undefined,
      searchMaxResults: deps.config.search.maxResults,
    }),
    ...createStoreActivities({ pool: deps.pool }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
