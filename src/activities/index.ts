// Every activity the worker registers, in groups by the options they run with: the workflows
// proxy each group with its own timeouts and retry policy (src/workflows/proxies.ts), so calling
// an activity through the wrong proxy is a type error. Workflows import these types only.
import Docker from 'dockerode';
import type OpenAI from 'openai';
import type pg from 'pg';
import type { Config } from '../config';
import { createCrawlActivities } from './crawl';
import { createBrowserActivities } from './crawl/browser-activities';
import { createLlm } from './llm/call';
import { createLlmClient } from './llm/client';
import { createMcpActivities, loadMcpConfig } from './mcp';
import { createPersistActivities } from './persist';
import { createReportVersionActivities } from './report-versions';
import { createPhaseActivities } from './phases';
import { createRoleActivities } from './roles';
import { createPageExtractor } from './roles/extractor';
import { createTopicClassifier } from './roles/search-topic';
import { sandboxPackages } from './roles/coder';
import { createConversationActivities } from './role-kit/conversation';
import { createReportAssembly } from './roles/report-section';
import type { PythonTool } from './role-kit/role';
import { researcherBudgets } from './role-kit/tool-budget';
import { createSandboxActivities } from './sandbox';
import { createSandboxProbe } from './sandbox/probe';
import { createSearchActivities } from './search';
import { buildProviders } from './search/providers';
import { createStore } from './store';
import { createSafeFetcher, DEFAULT_ALLOWED_TYPES } from './crawl/safe-fetch';
import { WEB_PORTS } from './crawl/ssrf';
import { createEmbedder } from './knowledge/embed';
import { createIngestActivities } from './knowledge/ingest';
import { ParseSandbox } from './knowledge/parse-thread';
import { createMemoryActivities } from './knowledge/memory';
import { createRetriever } from './knowledge/retrieve';
import { createKnowledgeSearchActivities } from './knowledge/search';
import { contentTypeOf, DOC_FORMATS } from './knowledge/parse';
import { createWebhookActivities } from './notify/webhook';

export interface ActivityDeps {
  config: Pick<Config, 'llm' | 'search' | 'crawl' | 'browser' | 'mcp' | 'temporal' | 'sandbox' | 'knowledge' | 'webhook'>;
  pool: pg.Pool;
  llmClient?: OpenAI;
}

/** Sandbox limits beyond the configurable ones: output and artifact caps. */
const SANDBOX_CAPS = { outputBytes: 65_536, artifactFiles: 20, artifactFileBytes: 5_000_000, artifactTotalBytes: 20_000_000 };

/** The researcher's python tool as configured: off, always offered, or offered while the sandbox can run. */
function researcherPython(sb: ActivityDeps['config']['sandbox'], sandboxUsable: () => Promise<boolean>): PythonTool | undefined {
  if (sb.researcherPython === 'false') return undefined;
  const spec = { timeoutSeconds: sb.timeoutSeconds, memoryMb: sb.memoryMb, packages: sandboxPackages() };
  return { spec, usable: sandboxUsable };
}

/**
 * The sandbox's activities on this worker's Docker engine; whether that engine answers and has the
 * image (probed; a yes kept a minute, a no 5 s: this worker polls the sandbox queue only while it
 * does); and
 * whether sandbox runs (coder steps, the python tool) can be served: this worker's engine, or the
 * operator's word (RESEARCHER_PYTHON=true: the sandbox queue's workers have Docker, this one need
 * not). A deployment whose model workers lack Docker while its sandbox workers have it says so
 * with RESEARCHER_PYTHON=true; otherwise the planner plans research steps only.
 */
function sandboxOf(sb: ActivityDeps['config']['sandbox'], store: ReturnType<typeof createStore>) {
  const docker = new Docker({ socketPath: sb.dockerSocket });
  const sandbox = createSandboxActivities({
    docker,
    store,
    limits: { image: sb.image, memoryMb: sb.memoryMb, cpus: sb.cpus, pids: sb.pids, timeoutSeconds: sb.timeoutSeconds, ...SANDBOX_CAPS },
  });
  const dockerReady = createSandboxProbe(docker, sb.image);
  return { sandbox, dockerReady, canRunCode: sb.researcherPython === 'true' ? async () => true : dockerReady };
}

/** Documents added by URL are fetched like crawled pages: SSRF guard, size and time limits. */
function documentFetcher(crawl: ActivityDeps['config']['crawl'], maxFileBytes: number) {
  return createSafeFetcher({
    allowHosts: crawl.allowHosts,
    allowedPorts: WEB_PORTS,
    maxBytes: Math.max(crawl.maxBytes, maxFileBytes),
    connectTimeoutMs: crawl.connectTimeoutMs,
    totalTimeoutMs: crawl.timeoutMs * 3,
    maxRedirects: 5,
    userAgent: crawl.userAgent,
    // Office files are often served as octet-stream: their bytes, not the header, say what they are.
    allowedTypes: [...new Set([...DEFAULT_ALLOWED_TYPES, ...DOC_FORMATS.map(contentTypeOf), 'application/octet-stream'])],
  });
}

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
  const { sandbox, dockerReady, canRunCode } = sandboxOf(sb, store);
  // (Tests that need no model pass an empty llm section.)
  const budgets = researcherBudgets({ ...deps.config.llm, model: deps.config.llm.models?.researcher ?? '' });
  const conversation = createConversationActivities({ store, budgets });
  const kbConfig = deps.config.knowledge;
  const embedder = createEmbedder(kbConfig.embedding);
  const retrieve = createRetriever({ kb: store.knowledge, embedder });
  const kbSearch = createKnowledgeSearchActivities({ store, retrieve });
  // Uploads and files the crawler reads (PDF, Office) are parsed on the same threads, under the same caps.
  const parser = new ParseSandbox(kbConfig.parse);
  const ingest = createIngestActivities({
    store,
    embedder,
    fetcher: documentFetcher(deps.config.crawl, kbConfig.maxFileBytes),
    limits: kbConfig,
    parser,
  });
  const memory = createMemoryActivities({ store, embedder, chunkTokens: kbConfig.chunkTokens, chunkOverlap: kbConfig.chunkOverlap });
  const mcp = createMcpActivities({
    config: loadMcpConfig(deps.config.mcp.configPath),
    envPath: deps.config.temporal.searchPath,
    writeToolResult: (i) => conversation.appendToolResult(i),
  });
  const search = createSearchActivities({
    store,
    providers: buildProviders({ ...deps.config.search, userAgent: deps.config.crawl.userAgent }),
    maxResults: deps.config.search.maxResults,
    embedder,
    classifierFor: (researchId: string) => createTopicClassifier({ llm, store }, researchId),
  });
  const crawl = createCrawlActivities({ config: deps.config, store, extract: createPageExtractor(llm), counter: budgets.counter, parser });
  // The searches, page reads and knowledge searches the background phase (researchBackground) and
  // the researcher's turns run in-process.
  const web = { webSearch: search.webSearch, crawlPage: crawl.crawlPage, knowledgeSearch: kbSearch.knowledgeSearch };
  const modelCallDeps = {
    llm,
    store,
    canRunCode,
    budgets,
    python: researcherPython(sb, canRunCode),
    discoverMcp: mcp.discoverMcpTools,
    sandbox: sb,
    web,
  };
  return {
    /** Model calls (LLM_OPTIONS): every role's activities and the phases' that chain them. */
    llm: { ...createRoleActivities(modelCallDeps), ...createPhaseActivities(modelCallDeps) },
    /** PostgreSQL only (STORE_OPTIONS). */
    // Only what a workflow calls: the conversation's writers are called by the researcher's turn
    // and by the MCP tool call, inside their activities.
    store: {
      ...createPersistActivities({ store }),
      trimConversation: conversation.trimConversation,
      ...createReportAssembly({ store }),
      ...createReportVersionActivities({ store }),
    },
    /** One page read for a goal: fetch, extract, one model call (CRAWL_OPTIONS). */
    crawl,
    /** Docker, on the sandbox queue (SANDBOX_OPTIONS). */
    sandbox: { runCode: sandbox.runCode },
    /** Reading documents into the knowledge base, on the main queue: fetch, parse and chunk, finish. */
    knowledge: {
      fetchDocument: ingest.fetchDocument,
      parseDocument: ingest.parseDocument,
      finishDocument: ingest.finishDocument,
      listUsableCollections: kbSearch.listUsableCollections,
      loadSessionMemory: memory.loadSessionMemory,
      // One query embedding and a few SQL queries: on the main queue, where researchers called it before.
      knowledgeSearch: kbSearch.knowledgeSearch,
    },
    /** Calls that embed text (the embeddings endpoint is the LLM provider's): on the LLM queue. */
    embedding: {
      embedChunks: ingest.embedChunks,
      indexSessionReport: memory.indexSessionReport,
    },
    /** Other people's servers (MCP_OPTIONS); the tools are found by the researcher's first turn. */
    mcp: { callMcpTool: mcp.callMcpTool },
    /** Signed POSTs to a run's webhook, on the main queue. */
    notify: createWebhookActivities({ ...deps.config.webhook, userAgent: deps.config.crawl.userAgent }),
    /** Not activities: the web tools the model-call activities run in-process (tests call them too). */
    web,
    /** Not an activity: the worker's sweep of containers a crashed worker left behind. */
    sweepSandboxes: sandbox.sweepSandboxes,
    /** Not an activity: whether this worker's Docker engine answers and has the sandbox image. */
    dockerReady,
    ...browserGroup(deps, store),
  };
}

export type ActivityGroups = ReturnType<typeof createActivities>;
export type LlmActivities = ActivityGroups['llm'];
export type StoreActivities = ActivityGroups['store'];
export type CrawlActivities = ActivityGroups['crawl'];
export type SandboxActivities = ActivityGroups['sandbox'];
export type McpActivities = ActivityGroups['mcp'];
export type KnowledgeActivities = ActivityGroups['knowledge'];
export type EmbeddingActivities = ActivityGroups['embedding'];
export type NotifyActivities = ActivityGroups['notify'];
export type BrowserActivities = ActivityGroups['browser'];

/** The outside system each activity waits for when it is retried, for "waiting for …" reports. */
export function activityDependencies(groups: ActivityGroups): Record<string, string> {
  const named = (group: object, dependency: string) => Object.fromEntries(Object.keys(group).map((k) => [k, dependency]));
  return {
    ...named(groups.store, 'PostgreSQL'),
    ...named(groups.llm, 'the LLM'),
    ...named(groups.crawl, 'the LLM (page reading)'),
    ...named(groups.sandbox, 'Docker'),
    ...named(groups.mcp, 'an MCP server'),
    ...named(groups.knowledge, 'PostgreSQL'),
    ...named(groups.embedding, 'the embeddings endpoint'),
    ...named(groups.notify, 'the webhook receiver'),
    ...named(groups.browser, 'the browser'),
    // The background phase in one activity waits for whichever of them is down.
    researchBackground: 'the LLM or the search providers',
    classifyThenBackground: 'the LLM or the search providers',
  };
}

/** The flat map the worker registers: every activity of every group, by name. */
export function activityMap(groups: ActivityGroups) {
  return {
    ...groups.llm,
    ...groups.store,
    ...groups.crawl,
    ...groups.sandbox,
    ...groups.mcp,
    ...groups.knowledge,
    ...groups.embedding,
    ...groups.notify,
  };
}
export type Activities = ReturnType<typeof activityMap>;

/** Pages rendered in headless Chromium, on the browser queue only (src/worker.ts), and the browser's close. */
function browserGroup(deps: ActivityDeps, store: ReturnType<typeof createStore>) {
  const { renderPage, closeBrowser } = createBrowserActivities({ config: deps.config, store });
  return { browser: { renderPage }, closeBrowser };
}
