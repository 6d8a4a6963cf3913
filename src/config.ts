// The one place that reads process.env. Everything else receives a typed Config.
import { z } from 'zod';
import { ConfigError } from './shared/errors';
import { DEFAULT_LLM_HEARTBEAT_TIMEOUT, DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE, LLM_ROLES, type LlmRole } from './shared/constants';
import { DEFAULT_RETRY, Duration, durationToMs, TENANT_PATTERN, type RetrySettings } from './shared/schemas';
import { loadTemporalProfile, type TemporalProfile } from './infra/temporal-connection';

const port = z.coerce.number().int().min(0).max(65_535);
/** Comma-separated `host` or `host:port` entries (allow lists of the SSRF guard). */
const hostList = z
  .string()
  .default('')
  .transform((v) =>
    v
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));
const optionalUrl = optionalString.pipe(z.url({ message: 'expected an http(s) URL' }).optional());

/** USD per million tokens, "model=input/output" pairs separated by commas. */
const priceTable = z
  .string()
  .default('')
  .transform((raw, ctx) => {
    const table: Record<string, { input: number; output: number }> = {};
    for (const entry of raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const m = /^([^=]+)=([\d.]+)\/([\d.]+)$/.exec(entry);
      if (!m) {
        ctx.addIssue({ code: 'custom', message: `"${entry}" is not model=input/output (USD per million tokens)` });
        return z.NEVER;
      }
      table[m[1]!.trim()] = { input: Number(m[2]), output: Number(m[3]) };
    }
    return table;
  });

/** `key=tenant` pairs; errors name the entry's position, never the key. */
const apiKeyTable = z
  .string()
  .default('')
  .transform((raw, ctx) => {
    const keys: { key: string; tenant: string }[] = [];
    const entries = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const [i, entry] of entries.entries()) {
      const eq = entry.lastIndexOf('=');
      const key = entry.slice(0, eq);
      const tenant = entry.slice(eq + 1);
      if (eq < 0 || key.length < 16 || !TENANT_PATTERN.test(tenant)) {
        ctx.addIssue({
          code: 'custom',
          message: `entry ${i + 1} is not key=tenant (a key of at least 16 characters; a tenant of 1-64 letters, digits, ".", "_" or "-")`,
        });
        return z.NEVER;
      }
      keys.push({ key, tenant });
    }
    return keys;
  });

/** `name=number` pairs (SEARCH_RATE_LIMITS, TENANT_WEIGHTS, TENANT_PRIORITIES): each name must match
 *  `name`, each number `value`; a bad entry is named with the shape it should have (`what`). */
const namedNumbers = (name: RegExp, value: z.ZodNumber, what: string) =>
  z
    .string()
    .default('')
    .transform((raw, ctx) => {
      const out: Record<string, number> = {};
      for (const entry of raw
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)) {
        const eq = entry.lastIndexOf('=');
        const key = entry.slice(0, eq);
        const n = value.safeParse(Number(entry.slice(eq + 1)));
        if (eq <= 0 || !name.test(key) || !n.success) {
          ctx.addIssue({ code: 'custom', message: `"${entry}" is not ${what}` });
          return z.NEVER;
        }
        out[key] = n.data;
      }
      return out;
    });

export interface Fairness {
  weights: Record<string, number>;
  priorities: Record<string, number>;
  /** 0: no limit. */
  maxRuns: number;
}

/** Output limits by role: room for the longest answer each role should write (a plan, a turn of
 *  tool calls, a program, a verdict, a report), so no request runs on until the timeout. */
export const DEFAULT_MAX_TOKENS: Record<LlmRole, number> = {
  coordinator: 512,
  planner: 2_048,
  researcher: 2_048,
  coder: 3_072,
  judge: 768,
  reporter: 4_096,
};

/** `<NAME>_<ROLE>` variables for every role, optional. */
function roleSettings<N extends string, T extends z.ZodTypeAny>(name: N, schema: T) {
  return Object.fromEntries(LLM_ROLES.map((role) => [`${name}_${role.toUpperCase()}`, schema.optional()])) as Record<
    `${N}_${Uppercase<LlmRole>}`,
    z.ZodOptional<T>
  >;
}

// Keys are the environment variable names, so an error message can name the variable as-is.
const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  DATA_DIR: z.string().default('.data'),

  // Where Temporal is and how to reach it: src/infra/temporal-connection.ts decides, through the SDK's
  // environment configuration (a temporal.toml profile with these and the other TEMPORAL_TLS_* and
  // TEMPORAL_GRPC_META_* variables over it, as the Temporal CLI). Here they are only checked.
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: optionalString,
  TEMPORAL_PROFILE: optionalString,
  TEMPORAL_CONFIG_FILE: optionalString,
  TEMPORAL_API_KEY: optionalString,
  // The SDK takes anything but "true" or "1" as false: a typo must not turn TLS off.
  TEMPORAL_TLS: optionalString.pipe(z.enum(['true', 'false', '1', '0'], { message: 'expected true or false' }).optional()),
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: optionalString.pipe(
    z
      .enum(['false', '0'], {
        message: 'not supported by the TypeScript SDK; set TEMPORAL_TLS_SERVER_NAME to a name the server certificate has',
      })
      .optional(),
  ),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  TEMPORAL_CLI_PATH: optionalString,
  PATH: z.string().default(''),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  // Worker Versioning: set a build id and the worker polls as that version of the deployment
  // ('auto': a hash of the code). Unset: an unversioned worker (dev, one-machine deploys).
  TEMPORAL_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/, 'letters, digits, "_" and "-" (Temporal refuses "." and ":" in it), at most 100')
    .default('deep-research'),
  TEMPORAL_WORKER_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$/, 'letters, digits, "_", "-", "+" and "." (no "/"), at most 100')
    .optional(),

  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'expected postgres://user:pass@host:port/db')
      .optional(),
  ),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(100).default(10),
  PGLITE_PORT: port.default(5433),

  API_HOST: z.string().default('127.0.0.1'),
  API_PORT: port.default(3000),
  API_KEYS: apiKeyTable,
  /** Fair sharing: a tenant's share of the workers when several wait (Temporal fairness weight, default 1). */
  TENANT_WEIGHTS: namedNumbers(TENANT_PATTERN, z.number().positive().max(1_000), 'tenant=weight (a positive number)'),
  /** A tenant's priority: 1 (first) to 5 (last), default 3; its runs' tasks are dispatched in that order. */
  TENANT_PRIORITIES: namedNumbers(TENANT_PATTERN, z.number().int().min(1).max(5), 'tenant=priority (1-5)'),
  /** Runs of one tenant researching at once; more wait in the tenant's queue (0: no limit). */
  TENANT_MAX_RUNS: z.coerce.number().int().min(0).max(10_000).default(0),
  /** Where the CLI's client commands find the API, and the key they send. */
  DEEP_RESEARCH_API: optionalUrl,
  DEEP_RESEARCH_KEY: optionalString,
  /** A worker's /metrics port (0: any free port, printed at start). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9464),
  METRICS_HOST: z.string().default('127.0.0.1'),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalString,
  OTEL_TRACES_EXPORTER: optionalString,
  OTEL_SDK_DISABLED: optionalString,
  OTEL_SERVICE_NAME: z.string().default('deep-research'),
  RATE_LIMIT_SUBMITS: z.coerce.number().int().min(1).max(100_000).default(30),
  RATE_LIMIT_READS: z.coerce.number().int().min(1).max(1_000_000).default(1_200),

  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: optionalUrl,
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  LLM_MODEL_COORDINATOR: optionalString,
  LLM_MODEL_PLANNER: optionalString,
  LLM_MODEL_RESEARCHER: optionalString,
  LLM_MODEL_CODER: optionalString,
  LLM_MODEL_JUDGE: optionalString,
  LLM_MODEL_REPORTER: optionalString,
  LLM_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(120_000),
  ...roleSettings('LLM_TIMEOUT_MS', z.coerce.number().int().min(1_000).max(3_600_000)),
  ...roleSettings('LLM_MAX_TOKENS', z.coerce.number().int().min(16).max(1_000_000)),
  /** The model's context window in tokens; learned from the server (llama.cpp's /props, vLLM's
   *  max_model_len) when not set. */
  LLM_CONTEXT_TOKENS: z.coerce.number().int().min(512).max(10_000_000).optional(),
  LLM_PRICES: priceTable,
  LLM_CONTEXT_CHARS: z.coerce.number().int().min(4_000).max(4_000_000).default(200_000),
  /** A second OpenAI-compatible provider, used while the first is down (src/activities/llm/providers.ts). */
  LLM_FALLBACK_BASE_URL: optionalUrl,
  LLM_FALLBACK_API_KEY: optionalString,
  LLM_FALLBACK_MODEL: optionalString,
  ...roleSettings('LLM_FALLBACK_MODEL', z.string().trim().min(1)),
  /** How long the primary must have been failing (no success in between) before calls go to the fallback. */
  LLM_FALLBACK_AFTER: Duration.default('2m'),
  /** Model requests in flight per provider in one worker (the adaptive limit's ceiling); LLM_CONCURRENCY when unset. */
  LLM_PROVIDER_CONCURRENCY: z.coerce.number().int().min(1).max(512).optional(),

  SEARXNG_URL: optionalUrl,
  SEARCH_PROVIDERS: optionalString.transform((v) =>
    v === undefined
      ? undefined
      : v
          .split(',')
          .map((x) => x.trim().toLowerCase())
          .filter(Boolean),
  ),
  SEARCH_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(15_000),
  SEARCH_RATE_LIMITS: namedNumbers(/^[a-z]+$/, z.number().positive(), 'provider=requestsPerSecond'),
  SEARCH_QUEUE_RATE: z.coerce.number().positive().max(1_000).default(20),
  MCP_CONFIG: optionalString,
  SANDBOX_IMAGE: z.string().min(1).default('deep-research-sandbox:latest'),
  SANDBOX_MEMORY_MB: z.coerce.number().int().min(64).max(16_384).default(512),
  SANDBOX_CPUS: z.coerce.number().positive().max(16).default(1),
  SANDBOX_PIDS: z.coerce.number().int().min(16).max(4_096).default(128),
  SANDBOX_TIMEOUT_S: z.coerce.number().int().min(1).max(3_600).default(60),
  SANDBOX_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  DOCKER_SOCKET: z.string().min(1).default('/var/run/docker.sock'),
  RESEARCHER_PYTHON: z.enum(['auto', 'true', 'false'], { message: 'expected auto, true or false' }).default('auto'),
  SEARCH_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(8),
  TAVILY_API_KEY: optionalString,
  TAVILY_BASE_URL: z.url().default('https://api.tavily.com'),
  BRAVE_API_KEY: optionalString,
  BRAVE_BASE_URL: z.url().default('https://api.search.brave.com'),
  WIKIPEDIA_BASE_URL: z.url().default('https://en.wikipedia.org'),
  OPENALEX_BASE_URL: z.url().default('https://api.openalex.org'),
  OPENALEX_MAILTO: optionalString,
  ARXIV_BASE_URL: z.url().default('https://export.arxiv.org'),
  CRAWL_ALLOW_HOSTS: hostList,
  /** Signs webhook deliveries (HMAC-SHA256); without it, requests that ask for a webhook are refused. */
  WEBHOOK_SECRET: optionalString.refine((v) => v === undefined || v.length >= 16, 'WEBHOOK_SECRET must be at least 16 characters'),
  /** Hosts (`host` or `host:port`) a webhook may reach although private, as CRAWL_ALLOW_HOSTS. */
  WEBHOOK_ALLOW_HOSTS: hostList,
  /** The shortest interval a schedule may repeat at. */
  SCHEDULE_MIN_INTERVAL: Duration.default('1m'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(10_000),
  CRAWL_MAX_BYTES: z.coerce.number().int().min(10_000).max(100_000_000).default(5_000_000),
  CRAWL_TIMEOUT_MS: z.coerce.number().int().min(500).max(300_000).default(20_000),
  CRAWL_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  CRAWL_RESPECT_ROBOTS: z
    .enum(['true', 'false'], { message: 'expected true or false' })
    .default('true')
    .transform((v) => v === 'true'),
  CRAWL_USER_AGENT: z.string().min(1).default('deep-research-bot/0.1 (+https://github.com/deep-research)'),
  SEARCH_MAX_RESULTS: z.coerce.number().int().min(1).max(20).default(5),
  LLM_QUEUE_RATE: z.coerce.number().positive().max(10_000).default(10),
  LLM_CONCURRENCY: z.coerce.number().int().min(1).max(512).default(16),
  RETRY_INITIAL_INTERVAL: Duration.default(DEFAULT_RETRY.initialInterval),
  RETRY_MAX_INTERVAL: Duration.default(DEFAULT_RETRY.maximumInterval),
  LLM_HEARTBEAT_TIMEOUT: Duration.default(DEFAULT_LLM_HEARTBEAT_TIMEOUT),
  WORKER_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).optional(),
  /** Workflows a worker keeps in memory between their tasks (the sticky cache); the SDK sizes it from the heap when unset. */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).optional(),
  /** Workflow stack traces for the `__stack_trace` query (the Web UI's Stack Trace tab): a stack recorded for every promise a workflow makes. */
  WORKFLOW_STACK_TRACES: z
    .enum(['true', 'false'], { message: 'expected true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  /** The isolate watchdog that stops a workflow which does not yield: one per activation (patched SDK), or the SDK's own one per call into the VM. */
  WORKFLOW_VM_WATCHDOG: z
    .enum(['per-activation', 'per-call'], { message: 'expected per-activation or per-call' })
    .default('per-activation'),
  /** V8's old-generation growth after a full collection, in percent of the live heap (0: V8's adaptive factor, up to 300%). */
  HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(1_000).default(50),
  /** Largest semi-space of the process's worker threads (workflow thread, page extraction), in MB (0: V8's default, 16). */
  THREAD_SEMI_SPACE_MB: z.coerce.number().int().min(0).max(256).default(4),
  EMBEDDING_MODEL: z.string().min(1).default('text-embedding-3-small'),
  EMBEDDING_BASE_URL: optionalUrl,
  EMBEDDING_API_KEY: optionalString,
  EMBEDDING_DIMENSIONS: z.coerce.number().int().min(1).max(16_000).optional(),
  EMBEDDING_BATCH: z.coerce.number().int().min(1).max(2_048).default(64),
  KB_MAX_FILE_BYTES: z.coerce.number().int().min(1_000).max(1_000_000_000).default(25_000_000),
  KB_MAX_DOCUMENTS: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  KB_CHUNK_TOKENS: z.coerce.number().int().min(50).max(8_000).default(350),
  KB_CHUNK_OVERLAP: z.coerce.number().int().min(0).max(2_000).default(50),
});

export interface Config {
  env: 'development' | 'production' | 'test';
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  dataDir: string;
  temporal: {
    /** TEMPORAL_ADDRESS, else the profile's. Unset means "start the embedded dev server" in `dev`,
     *  and localhost:7233 elsewhere. */
    address: string | undefined;
    /** TEMPORAL_NAMESPACE, else the profile's, else "default". */
    namespace: string;
    /** The rest of the connection (TLS, API key, gRPC headers) and where each setting came from. */
    connection: TemporalProfile;
    taskQueue: string;
    cliPath: string | undefined;
    /** Directories searched for a `temporal` binary (the process PATH). */
    searchPath: string;
    port: number;
    uiPort: number;
    /** Worker Versioning: the deployment and this worker's build id ('auto' = the code's hash);
     *  undefined for an unversioned worker. */
    deployment: { name: string; buildId: string } | undefined;
  };
  database: { url: string | undefined; poolMax: number; pglitePort: number };
  api: {
    host: string;
    port: number;
    /** API_KEYS: keys given in the environment, each with its tenant (more live in PostgreSQL). */
    keys: { key: string; tenant: string }[];
    /** Requests per minute and tenant: new runs, and everything else. */
    rateLimits: { submits: number; reads: number };
    /** Fair sharing between tenants: fairness weights, priority keys, runs at once per tenant. */
    fairness: Fairness;
  };
  /** OpenTelemetry tracing (src/infra/tracing.ts). */
  tracing: { enabled: boolean; serviceName: string };
  /** Where a standalone worker serves /metrics. */
  metrics: { host: string; port: number };
  /** The CLI's client commands: the API's URL and the key to send. */
  client: { api: string; key: string | undefined };
  llm: {
    apiKey: string | undefined;
    baseUrl: string | undefined;
    models: Record<LlmRole, string>;
    /** The default time one model request may take (LLM_TIMEOUT_MS). */
    timeoutMs: number;
    /** Per role (LLM_TIMEOUT_MS_<ROLE>, else LLM_TIMEOUT_MS): a request that takes longer while
     *  the server answers is "too slow" (src/activities/llm/call.ts). */
    timeouts: Record<LlmRole, number>;
    /** Output limit per role (LLM_MAX_TOKENS_<ROLE>): every request carries max_tokens. */
    maxTokens: Record<LlmRole, number>;
    /** LLM_CONTEXT_TOKENS, when the operator sets the window instead of letting it be learned. */
    contextTokens: number | undefined;
    prices: Record<string, { input: number; output: number }>;
    /** Characters of conversation a researcher may send (about 4 per token). */
    contextChars: number;
    /** LLM activities per second across all workers (the LLM task queue's limit). */
    queueRate: number;
    /** LLM activities at once in one worker. */
    concurrency: number;
    /** The ceiling of each provider's adaptive in-flight limit (LLM_PROVIDER_CONCURRENCY, else LLM_CONCURRENCY). */
    providerConcurrency: number;
    /** The second provider (LLM_FALLBACK_*), when LLM_FALLBACK_BASE_URL or LLM_FALLBACK_API_KEY is set. */
    fallback:
      | {
          apiKey: string | undefined;
          baseUrl: string | undefined;
          /** LLM_FALLBACK_MODEL_<ROLE>, else LLM_FALLBACK_MODEL, else the primary's model for the role. */
          models: Record<LlmRole, string>;
          /** LLM_FALLBACK_AFTER in milliseconds. */
          afterMs: number;
        }
      | undefined;
  };
  search: {
    /** Enabled providers; by default the keyless ones (plus SearXNG when SEARXNG_URL is set). */
    providers: string[];
    searxngUrl: string | undefined;
    maxResults: number;
    timeoutMs: number;
    tavily: { apiKey: string | undefined; baseUrl: string };
    brave: { apiKey: string | undefined; baseUrl: string };
    wikipediaUrl: string;
    openAlexUrl: string;
    openAlexMailto: string | undefined;
    arxivUrl: string;
    /** Requests per second per provider in one worker (arXiv asks for one every 3 s). */
    rateLimits: Record<string, number>;
    /** Search activities per second across all workers (the search task queue's limit). */
    queueRate: number;
    /** Search activities at once in one worker. */
    concurrency: number;
  };
  sandbox: {
    image: string;
    memoryMb: number;
    cpus: number;
    pids: number;
    timeoutSeconds: number;
    concurrency: number;
    dockerSocket: string;
    /** The researcher's python tool: offered when this worker's Docker has the image (auto),
     *  always (true: the sandbox queue's workers have Docker, this one need not), or never. */
    researcherPython: 'auto' | 'true' | 'false';
  };
  /** JSON file listing MCP servers (stdio or streamable HTTP) and the roles that may use them. */
  mcp: { configPath: string | undefined };
  crawl: { allowHosts: string[]; maxBytes: number; timeoutMs: number; connectTimeoutMs: number; respectRobots: boolean; userAgent: string };
  webhook: { secret: string | undefined; allowHosts: string[]; timeoutMs: number };
  /** Recurring research (POST /v1/schedules). */
  schedules: { minInterval: string };
  /** How fast outside calls are retried (no attempt limit: a run's maxOutage bounds them). */
  retry: RetrySettings;
  /** The knowledge base: uploads, chunking, and the OpenAI-compatible /embeddings endpoint. */
  knowledge: {
    embedding: {
      /** False when no endpoint is configured at all: retrieval is full-text only, and says so. */
      enabled: boolean;
      model: string;
      baseUrl: string | undefined;
      apiKey: string | undefined;
      dimensions: number | undefined;
      /** Chunks per /embeddings request (one activity each). */
      batch: number;
      timeoutMs: number;
    };
    maxFileBytes: number;
    /** Documents per collection. */
    maxDocuments: number;
    chunkTokens: number;
    chunkOverlap: number;
  };
  worker: {
    /** How long a stopping worker lets activities in flight finish: by default an LLM request's timeout and 15 s. */
    shutdownGraceMs: number;
    /** WORKER_MAX_CACHED_WORKFLOWS; undefined: the SDK's own sizing. */
    maxCachedWorkflows: number | undefined;
    /** WORKFLOW_STACK_TRACES: whether workflow threads record the stack traces the Web UI shows (patched SDK; off by default: recording them costs about a quarter of those threads' CPU). */
    stackTraces: boolean;
    /** WORKFLOW_VM_WATCHDOG: one isolate watchdog per activation (patched SDK; the default), or per call into the VM as the SDK does. */
    vmWatchdog: 'per-activation' | 'per-call';
  };
  /** V8 heap sizing of the long-running commands (src/infra/heap.ts). */
  heap: {
    /** HEAP_GROWTH_PERCENT */
    growthPercent: number;
    /** THREAD_SEMI_SPACE_MB */
    threadSemiSpaceMb: number;
  };
}

/** True when some OpenAI-compatible endpoint is configured. */
export function llmConfigured(config: Pick<Config, 'llm'>): boolean {
  return config.llm.apiKey !== undefined || config.llm.baseUrl !== undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ variable: String(i.path[0] ?? '(environment)'), reason: i.message }));
    const lines = issues.map((i) => `  ${i.variable}: ${i.reason}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`, issues);
  }
  const e = parsed.data;
  const needs: Record<string, [keyof typeof e, string]> = {
    searxng: ['SEARXNG_URL', 'a SearXNG URL'],
    tavily: ['TAVILY_API_KEY', 'a Tavily key'],
    brave: ['BRAVE_API_KEY', 'a Brave key'],
  };
  const known = ['searxng', 'tavily', 'brave', 'wikipedia', 'openalex', 'arxiv'];
  const searchIssues: { variable: string; reason: string }[] = [];
  for (const p of e.SEARCH_PROVIDERS ?? []) {
    if (!known.includes(p))
      searchIssues.push({ variable: 'SEARCH_PROVIDERS', reason: `unknown provider "${p}" (known: ${known.join(', ')})` });
    const need = needs[p];
    if (need && !e[need[0]]) searchIssues.push({ variable: need[0], reason: `SEARCH_PROVIDERS includes ${p}, which needs ${need[1]}` });
  }
  if (searchIssues.length) {
    throw new ConfigError(`Invalid configuration:\n${searchIssues.map((i) => `  ${i.variable}: ${i.reason}`).join('\n')}`, searchIssues);
  }
  const temporal = loadTemporalProfile(env);
  const models = Object.fromEntries(
    LLM_ROLES.map((role) => [role, e[`LLM_MODEL_${role.toUpperCase()}` as keyof typeof e] ?? e.LLM_MODEL]),
  ) as Record<LlmRole, string>;
  const perRole = (name: 'LLM_TIMEOUT_MS' | 'LLM_MAX_TOKENS', fallback: (role: LlmRole) => number) =>
    Object.fromEntries(
      LLM_ROLES.map((role) => [role, (e[`${name}_${role.toUpperCase()}` as keyof typeof e] as number | undefined) ?? fallback(role)]),
    ) as Record<LlmRole, number>;
  return {
    env: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    dataDir: e.DATA_DIR,
    temporal: {
      address: temporal.address,
      namespace: temporal.namespace ?? DEFAULT_NAMESPACE,
      connection: temporal,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      searchPath: e.PATH,
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      deployment: e.TEMPORAL_WORKER_BUILD_ID ? { name: e.TEMPORAL_DEPLOYMENT_NAME, buildId: e.TEMPORAL_WORKER_BUILD_ID } : undefined,
    },
    database: { url: e.DATABASE_URL, poolMax: e.DATABASE_POOL_MAX, pglitePort: e.PGLITE_PORT },
    api: {
      host: e.API_HOST,
      port: e.API_PORT,
      keys: e.API_KEYS,
      fairness: { weights: e.TENANT_WEIGHTS, priorities: e.TENANT_PRIORITIES, maxRuns: e.TENANT_MAX_RUNS },
      rateLimits: { submits: e.RATE_LIMIT_SUBMITS, reads: e.RATE_LIMIT_READS },
    },
    metrics: { host: e.METRICS_HOST, port: e.METRICS_PORT },
    tracing: {
      enabled:
        Boolean(e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) &&
        e.OTEL_TRACES_EXPORTER !== 'none' &&
        e.OTEL_SDK_DISABLED !== 'true',
      serviceName: e.OTEL_SERVICE_NAME,
    },
    client: {
      api: e.DEEP_RESEARCH_API ?? `http://${e.API_HOST === '0.0.0.0' || e.API_HOST === '::' ? '127.0.0.1' : e.API_HOST}:${e.API_PORT}`,
      key: e.DEEP_RESEARCH_KEY,
    },
    llm: {
      apiKey: e.OPENAI_API_KEY,
      baseUrl: e.OPENAI_BASE_URL,
      models,
      timeoutMs: e.LLM_TIMEOUT_MS,
      timeouts: perRole('LLM_TIMEOUT_MS', () => e.LLM_TIMEOUT_MS),
      maxTokens: perRole('LLM_MAX_TOKENS', (role) => DEFAULT_MAX_TOKENS[role]),
      contextTokens: e.LLM_CONTEXT_TOKENS,
      prices: e.LLM_PRICES,
      contextChars: e.LLM_CONTEXT_CHARS,
      queueRate: e.LLM_QUEUE_RATE,
      concurrency: e.LLM_CONCURRENCY,
      providerConcurrency: e.LLM_PROVIDER_CONCURRENCY ?? e.LLM_CONCURRENCY,
      fallback:
        e.LLM_FALLBACK_BASE_URL || e.LLM_FALLBACK_API_KEY
          ? {
              apiKey: e.LLM_FALLBACK_API_KEY,
              baseUrl: e.LLM_FALLBACK_BASE_URL,
              models: Object.fromEntries(
                LLM_ROLES.map((role) => [
                  role,
                  e[`LLM_FALLBACK_MODEL_${role.toUpperCase()}` as keyof typeof e] ?? e.LLM_FALLBACK_MODEL ?? models[role],
                ]),
              ) as Record<LlmRole, string>,
              afterMs: durationToMs(e.LLM_FALLBACK_AFTER),
            }
          : undefined,
    },
    search: {
      providers: e.SEARCH_PROVIDERS ?? [...(e.SEARXNG_URL ? ['searxng'] : []), 'wikipedia', 'openalex', 'arxiv'],
      searxngUrl: e.SEARXNG_URL,
      maxResults: e.SEARCH_MAX_RESULTS,
      timeoutMs: e.SEARCH_TIMEOUT_MS,
      tavily: { apiKey: e.TAVILY_API_KEY, baseUrl: e.TAVILY_BASE_URL },
      brave: { apiKey: e.BRAVE_API_KEY, baseUrl: e.BRAVE_BASE_URL },
      wikipediaUrl: e.WIKIPEDIA_BASE_URL,
      openAlexUrl: e.OPENALEX_BASE_URL,
      openAlexMailto: e.OPENALEX_MAILTO,
      arxivUrl: e.ARXIV_BASE_URL,
      rateLimits: { searxng: 5, tavily: 5, brave: 1, wikipedia: 10, openalex: 10, arxiv: 0.34, ...e.SEARCH_RATE_LIMITS },
      queueRate: e.SEARCH_QUEUE_RATE,
      concurrency: e.SEARCH_CONCURRENCY,
    },
    mcp: { configPath: e.MCP_CONFIG },
    sandbox: {
      image: e.SANDBOX_IMAGE,
      memoryMb: e.SANDBOX_MEMORY_MB,
      cpus: e.SANDBOX_CPUS,
      pids: e.SANDBOX_PIDS,
      timeoutSeconds: e.SANDBOX_TIMEOUT_S,
      concurrency: e.SANDBOX_CONCURRENCY,
      dockerSocket: e.DOCKER_SOCKET,
      researcherPython: e.RESEARCHER_PYTHON,
    },
    crawl: {
      allowHosts: e.CRAWL_ALLOW_HOSTS,
      maxBytes: e.CRAWL_MAX_BYTES,
      timeoutMs: e.CRAWL_TIMEOUT_MS,
      connectTimeoutMs: e.CRAWL_CONNECT_TIMEOUT_MS,
      respectRobots: e.CRAWL_RESPECT_ROBOTS,
      userAgent: e.CRAWL_USER_AGENT,
    },
    webhook: { secret: e.WEBHOOK_SECRET, allowHosts: e.WEBHOOK_ALLOW_HOSTS, timeoutMs: e.WEBHOOK_TIMEOUT_MS },
    schedules: { minInterval: e.SCHEDULE_MIN_INTERVAL },
    retry: { initialInterval: e.RETRY_INITIAL_INTERVAL, maximumInterval: e.RETRY_MAX_INTERVAL, heartbeatTimeout: e.LLM_HEARTBEAT_TIMEOUT },
    knowledge: {
      embedding: {
        enabled: Boolean(e.EMBEDDING_BASE_URL || e.EMBEDDING_API_KEY || e.OPENAI_BASE_URL || e.OPENAI_API_KEY),
        model: e.EMBEDDING_MODEL,
        baseUrl: e.EMBEDDING_BASE_URL ?? e.OPENAI_BASE_URL,
        apiKey: e.EMBEDDING_API_KEY ?? e.OPENAI_API_KEY,
        dimensions: e.EMBEDDING_DIMENSIONS,
        batch: e.EMBEDDING_BATCH,
        timeoutMs: e.LLM_TIMEOUT_MS,
      },
      maxFileBytes: e.KB_MAX_FILE_BYTES,
      maxDocuments: e.KB_MAX_DOCUMENTS,
      chunkTokens: e.KB_CHUNK_TOKENS,
      chunkOverlap: Math.min(e.KB_CHUNK_OVERLAP, Math.floor(e.KB_CHUNK_TOKENS / 2)),
    },
    worker: {
      shutdownGraceMs: e.WORKER_SHUTDOWN_GRACE_MS ?? e.LLM_TIMEOUT_MS + 15_000,
      maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
      stackTraces: e.WORKFLOW_STACK_TRACES,
      vmWatchdog: e.WORKFLOW_VM_WATCHDOG,
    },
    heap: { growthPercent: e.HEAP_GROWTH_PERCENT, threadSemiSpaceMb: e.THREAD_SEMI_SPACE_MB },
  };
}
