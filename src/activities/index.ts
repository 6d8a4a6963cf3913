import type pg from 'pg';
import type OpenAI from 'openai';
import type { Config } from '../config';
import Docker from 'dockerode';
import { createCoderActivities } from './coder';
import { createCrawlActivities } from './crawl';
import { createSandboxActivities } from './sandbox';
import { createMcpActivities, loadMcpConfig } from './mcp';
import { createLlmCaller, createLlmClient } from './llm';
import { createConversationStore, createResearcherActivities } from './researcher';
import { createResearchActivities } from './research';
import { buildProviders } from './search/providers';
import { createLlmCallStore, createResearchStore, createStoreActivities } from './store';

export interface ActivityDeps {
  config: Pick<Config, 'llm' | 'search' | 'crawl' | 'mcp' | 'temporal' | 'sandbox'>;
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
  const sb = deps.config.sandbox;
  return {
    ...researcher,
    ...createCoderActivities({ call, store, limits: sb }),
    ...createSandboxActivities({
      docker: new Docker({ socketPath: sb.dockerSocket }),
      pool: deps.pool,
      limits: { image: sb.image, memoryMb: sb.memoryMb, cpus: sb.cpus, pids: sb.pids, timeoutSeconds: sb.timeoutSeconds, outputBytes: 65_536, artifactFiles: 20, artifactFileBytes: 5_000_000, artifactTotalBytes: 20_000_000 },
    }),
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
