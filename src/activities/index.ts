import type pg from 'pg';
import type OpenAI from 'openai';
import type { Config } from '../config';
import { createCrawlActivities } from './crawl';
import { createMcpActivities, loadMcpConfig } from './mcp';
import { createLlmCaller, createLlmClient } from './llm';
import { createConversationStore, createResearcherActivities } from './researcher';
import { createResearchActivities } from './research';
import { buildProviders } from './search/providers';
import { createLlmCallStore, createResearchStore, createStoreActivities } from './store';

export interface ActivityDeps {
  config: Pick<Config, 'llm' | 'search' | 'crawl' | 'mcp' | 'temporal'>;
  pool: pg.Pool;
  llmClient?: OpenAI;
}

/** Every activity the worker registers; workflows import this type only. */
export function createActivities(deps: ActivityDeps) {
  let client = deps.llmClient;
  const getClient = () => (client ??= createLlmClient(deps.config));
  const calls = createLlmCallStore(deps.pool);
  const call = createLlmCaller({ config: deps.config, calls, client: getClient() });
  const store = createResearchStore(deps.pool);
  const researcher = createResearcherActivities({
    config: deps.config,
    client: getClient,
    calls,
    store,
    conversations: createConversationStore(deps.pool),
    call,
    contextChars: deps.config.llm.contextChars,
  });
  return {
    ...researcher,
    ...createMcpActivities({
      config: loadMcpConfig(deps.config.mcp.configPath),
      envPath: deps.config.temporal.searchPath,
      writeToolResult: (i) => researcher.appendToolResult(i),
    }),
    ...createCrawlActivities({ config: deps.config, store, call }),
    ...createResearchActivities({
      call,
      store,
      providers: buildProviders({ ...deps.config.search, userAgent: deps.config.crawl.userAgent }),
      searchMaxResults: deps.config.search.maxResults,
    }),
    ...createStoreActivities({ pool: deps.pool }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
