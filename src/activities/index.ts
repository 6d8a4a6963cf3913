// Every activity the worker registers, in groups by the options they run with: the workflows
// proxy each group with its own timeouts and retry policy (src/workflows/proxies.ts), so calling
// an activity through the wrong proxy is a type error. Workflows import these types only.
import Docker from 'dockerode';
import type OpenAI from 'openai';
import type pg from 'pg';
import type { Config } from '../config';
import { createCrawlActivities } from './crawl';
import { createLlm } from './llm/call';
import { createLlmClient } from './llm/client';
import { createMcpActivities, loadMcpConfig } from './mcp';
import { createPersistActivities } from './persist';
import { createCoderActivities } from './roles/coder';
import { createConversationActivities } from './roles/conversation';
import { createCoordinatorActivities } from './roles/coordinator';
import { createJudgeActivities } from './roles/judge';
import { createLegacyStepActivities } from './roles/legacy';
import { createPlannerActivities } from './roles/planner';
import { createReporterActivities } from './roles/reporter';
import { createResearcherActivities } from './roles/researcher';
import { createSandboxActivities } from './sandbox';
import { createSearchActivities } from './search';
import { buildProviders } from './search/providers';
import { createStore } from './store';

export interface ActivityDeps {
  config: Pick<Config, 'llm' | 'search' | 'crawl' | 'mcp' | 'temporal' | 'sandbox'>;
  pool: pg.Pool;
  llmClient?: OpenAI;
}

/** Sandbox limits beyond the configurable ones: output and artifact caps. */
const SANDBOX_CAPS = { outputBytes: 65_536, artifactFiles: 20, artifactFileBytes: 5_000_000, artifactTotalBytes: 20_000_000 };

export function createActivities(deps: ActivityDeps) {
  const store = createStore(deps.pool);
  let client = deps.llmClient;
  const llm = createLlm({
    config: deps.config,
    calls: store.llmCalls,
    leases: store.llmLeases,
    client: () => (client ??= createLlmClient(deps.config)),
  });
  const sb = deps.config.sandbox;
  const sandbox = createSandboxActivities({
    docker: new Docker({ socketPath: sb.dockerSocket }),
    store,
    limits: { image: sb.image, memoryMb: sb.memoryMb, cpus: sb.cpus, pids: sb.pids, timeoutSeconds: sb.timeoutSeconds, ...SANDBOX_CAPS },
  });
  const conversation = createConversationActivities({ store });
  return {
    /** Model calls (LLM_OPTIONS). */
    llm: {
      ...createCoordinatorActivities({ llm }),
      ...createPlannerActivities({ llm, store }),
      ...createResearcherActivities({ llm, store, contextChars: deps.config.llm.contextChars }),
      ...createCoderActivities({ llm, store, limits: sb }),
      ...createJudgeActivities({ llm, store }),
      ...createReporterActivities({ llm, store }),
      ...createLegacyStepActivities({ llm, store }),
    },
    /** PostgreSQL only (STORE_OPTIONS). */
    store: { ...createPersistActivities({ store }), ...conversation },
    /** One query across the search providers, on the rate-limited search queue (SEARCH_OPTIONS). */
    search: createSearchActivities({
      store,
      providers: buildProviders({ ...deps.config.search, userAgent: deps.config.crawl.userAgent }),
      maxResults: deps.config.search.maxResults,
    }),
    /** One page read for a goal: fetch, extract, one model call (CRAWL_OPTIONS). */
    crawl: createCrawlActivities({ config: deps.config, store, llm }),
    /** Docker, on the sandbox queue (SANDBOX_OPTIONS). */
    sandbox: { runCode: sandbox.runCode },
    /** Other people's servers (MCP_OPTIONS). */
    mcp: createMcpActivities({
      config: loadMcpConfig(deps.config.mcp.configPath),
      envPath: deps.config.temporal.searchPath,
      writeToolResult: (i) => conversation.appendToolResult(i),
    }),
    /** Not an activity: the worker's sweep of containers a crashed worker left behind. */
    sweepSandboxes: sandbox.sweepSandboxes,
  };
}

export type ActivityGroups = ReturnType<typeof createActivities>;
export type LlmActivities = ActivityGroups['llm'];
export type StoreActivities = ActivityGroups['store'];
export type SearchActivities = ActivityGroups['search'];
export type CrawlActivities = ActivityGroups['crawl'];
export type SandboxActivities = ActivityGroups['sandbox'];
export type McpActivities = ActivityGroups['mcp'];

/** The outside system each activity waits for when it is retried, for "waiting for …" reports. */
export function activityDependencies(groups: ActivityGroups): Record<string, string> {
  const named = (group: object, dependency: string) => Object.fromEntries(Object.keys(group).map((k) => [k, dependency]));
  return {
    ...named(groups.store, 'PostgreSQL'),
    ...named(groups.llm, 'the LLM'),
    ...named(groups.crawl, 'the LLM (page reading)'),
    ...named(groups.search, 'the search provider'),
    ...named(groups.sandbox, 'Docker'),
    ...named(groups.mcp, 'an MCP server'),
  };
}

/** The flat map the worker registers: every activity of every group, by name. */
export function activityMap(groups: ActivityGroups) {
  return { ...groups.llm, ...groups.store, ...groups.search, ...groups.crawl, ...groups.sandbox, ...groups.mcp };
}
export type Activities = ReturnType<typeof activityMap>;
