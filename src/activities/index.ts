import type pg from 'pg';
import type OpenAI from 'openai';
import type { Config } from '../config';
import { createLlmActivities } from './llm';
import { createLlmCallStore, createStoreActivities } from './store';

export interface ActivityDeps {
  config: Pick<Config, 'llm'>;
  pool: pg.Pool;
  llmClient?: OpenAI;
}

/** Every activity the worker registers; workflows import this type only. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createLlmActivities({
      config: deps.config,
      calls: createLlmCallStore(deps.pool),
      ...(deps.llmClient ? { client: deps.llmClient } : {}),
    }),
    ...createStoreActivities({ pool: deps.pool }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
