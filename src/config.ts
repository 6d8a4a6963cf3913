// The one place that reads process.env. Everything else receives a typed Config.
import { z } from 'zod';
import { ConfigError } from './shared/errors';
import {
  DEFAULT_LLM_HEARTBEAT_TIMEOUT,
  DEFAULT_MIN_OUTAGE,
  DEFAULT_NAMESPACE,
  DEFAULT_TASK_QUEUE,
  LLM_ROLES,
  type LlmRole,
} from './shared/constants';
import { Duration, TENANT_PATTERN, type RetrySettings } from './shared/schemas';
import { DEFAULT_RETRY, durationToMs } from './shared/plain';
import { loadTemporalProfile, type TemporalProfile } from './infra/temporal-connection';
import type { StartSettings } from './infra/process-start';

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
/** `true` or `false` (anything else refused), read as a boolean; unset: `fallback`. */
const trueOrFalse = (fallback: boolean) =>
  z
    .enum(['true', 'false'], { message: 'expected true or false' })
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true');
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

/** Limits per tenant (TENANT_MAX_*, enforced by src/api/quotas.ts); 0 turns one off. */
export interface TenantQuotas {
  schedules: number;
  collections: number;
  /** Documents across all of the tenant's collections and sessions. */
  documents: number;
  /** Bytes of stored document files across the tenant's collections. */
  storedBytes: number;
  /** Event streams (server-sent events) open at once, per API process. */
  streams: number;
  /** Research runs started and not yet ended (queued, reviewing or researching). */
  runsInFlight: number;
}

/** A per-tenant quota (TENANT_MAX_*): a count, `0` for no limit. */
const quota = (fallback: number, description: string) =>
  z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(fallback).describe(`${description}; \`0\`: no limit`);

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

/** `<NAME>_<ROLE>` variables for every role, optional, each with the same description. */
function roleSettings<N extends string, T extends z.ZodTypeAny>(name: N, schema: T, description: string) {
  return Object.fromEntries(LLM_ROLES.map((role) => [`${name}_${role.toUpperCase()}`, schema.optional().describe(description)])) as Record<
    `${N}_${Uppercase<LlmRole>}`,
    z.ZodOptional<T>
  >;
}

// Keys are the environment variable names, so an error message can name the variable as-is.
export const EnvSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'production', 'test'])
    .default('development')
    .describe('the kind of environment the process runs in: `development`, `production` or `test`'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info').describe('`debug`, `info`, `warn`, `error`'),
  DATA_DIR: z
    .string()
    .default('.data')
    .describe(
      "Temporal's SQLite file (write-ahead log, `synchronous=normal`: a killed server loses nothing, a power cut may lose the last commits) and PGlite's data",
    ),

  // Where Temporal is and how to reach it: src/infra/temporal-connection.ts decides, through the SDK's
  // environment configuration (a temporal.toml profile with these and the other TEMPORAL_TLS_* and
  // TEMPORAL_GRPC_META_* variables over it, as the Temporal CLI). Here they are only checked.
  TEMPORAL_ADDRESS: optionalString.describe(
    "a running Temporal server (`host:port` of its frontend); unset (and no profile's address), `dev` starts its own and `worker`/`api` use `127.0.0.1:TEMPORAL_PORT`",
  ),
  TEMPORAL_NAMESPACE: optionalString.describe("namespace; unset: the profile's, else `default`"),
  TEMPORAL_PROFILE: optionalString.describe(
    'the profile of the `temporal.toml` to use; unset: `default` (see [Connecting to a Temporal cluster or Temporal Cloud](scaling-and-deploys.md#connecting-to-a-temporal-cluster-or-temporal-cloud))',
  ),
  TEMPORAL_CONFIG_FILE: optionalString.describe(
    "the `temporal.toml` profiles are read from; unset: `~/.config/temporalio/temporal.toml` (the CLI's, when it exists)",
  ),
  TEMPORAL_API_KEY: optionalString.describe('sent as `Authorization: Bearer …`; turns TLS on unless `TEMPORAL_TLS=false`'),
  // The SDK takes anything but "true" or "1" as false: a typo must not turn TLS off.
  TEMPORAL_TLS: optionalString
    .pipe(z.enum(['true', 'false', '1', '0'], { message: 'expected true or false' }).optional())
    .describe(
      "`true` for TLS with the system's CAs; `false` turns it off. The other `TEMPORAL_TLS_*` variables (mTLS, CA, server name) and `TEMPORAL_GRPC_META_*` are read as the Temporal CLI reads them (see [Connecting to a Temporal cluster or Temporal Cloud](scaling-and-deploys.md#connecting-to-a-temporal-cluster-or-temporal-cloud))",
    ),
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: optionalString
    .pipe(
      z
        .enum(['false', '0'], {
          message: 'not supported by the TypeScript SDK; set TEMPORAL_TLS_SERVER_NAME to a name the server certificate has',
        })
        .optional(),
    )
    .describe('`true` is refused: the TypeScript SDK cannot do it; set `TEMPORAL_TLS_SERVER_NAME` to a name the certificate has instead'),
  TEMPORAL_TASK_QUEUE: z
    .string()
    .min(1)
    .default(DEFAULT_TASK_QUEUE)
    .describe('task queue of the research workflows (and the prefix of the `<queue>-llm`, `-sandbox` and `-browser` queues)'),
  TEMPORAL_CLI_PATH: optionalString.describe('the `temporal` binary to use'),
  PATH: z
    .string()
    .default('')
    .describe("directories searched for `temporal` when `TEMPORAL_CLI_PATH` is not set (the process's own `PATH`)"),
  TEMPORAL_PORT: port.default(7233).describe('port of the embedded dev server'),
  TEMPORAL_UI_PORT: port.default(8233).describe("port of the embedded dev server's Web UI"),
  TEMPORAL_METRICS_PORT: port
    .optional()
    .describe('port on which the embedded dev server serves its own Prometheus metrics (requests by operation, persistence); unset: none'),
  // Worker Versioning: set a build id and the worker polls as that version of the deployment
  // ('auto': a hash of the code). Unset: an unversioned worker. `dev` names its own build after its
  // workflow code, whatever this says (src/cli/earlier-builds.ts).
  TEMPORAL_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/, 'letters, digits, "_" and "-" (Temporal refuses "." and ":" in it), at most 100')
    .default('deep-research')
    .describe(
      "Worker Versioning: the deployment this worker's versions belong to (letters, digits, `_`, `-`; see [Deploying a new version](scaling-and-deploys.md#deploying-a-new-version))",
    ),
  TEMPORAL_WORKER_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$/, 'letters, digits, "_", "-", "+" and "." (no "/"), at most 100')
    .optional()
    .describe(
      "Worker Versioning: this build's id, e.g. the image tag or git commit; `auto` = a hash of `src/`, `prompts/` and the lockfile; unset, the worker is unversioned",
    ),
  TEMPORAL_WORKER_PROMOTE: trueOrFalse(false).describe(
    'Worker Versioning, for `deep-research worker` with a build id: `true` makes this build the current version when the worker starts, and moves runs pinned to builds whose workers are gone (no poll in two minutes) to it (as `dev` does, see [dev across a code change](scaling-and-deploys.md#dev-across-a-code-change)); `docker-compose.yml` sets it. `false`: the rollout is yours (`temporal worker deployment set-current-version`)',
  ),
  NEW_BUILD_CHECK: optionalString
    .pipe(Duration.optional())
    .describe(
      'Worker Versioning: how often a run waiting for its review looks for a newer target build of its deployment, to continue there; unset: 5 minutes',
    ),

  DATABASE_URL: optionalString
    .pipe(
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'expected postgres://user:pass@host:port/db')
        .optional(),
    )
    .describe('PostgreSQL (`postgres://user:pass@host:port/db`); unset, `dev` serves an embedded PGlite database'),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(100).default(10).describe('connections per process'),
  DATABASE_NAMED_STATEMENTS: trueOrFalse(true).describe(
    "`true`: statements are prepared once per connection to `DATABASE_URL` (less of the server's CPU); `false` for a pooler that moves a client between server sessions and does not track prepared statements (PgBouncer before 1.21 in transaction mode). Never for the embedded PGlite",
  ),
  PGLITE_PORT: port.default(5433).describe('loopback port of the embedded database'),

  API_HOST: z.string().default('127.0.0.1').describe('address the HTTP API listens on'),
  API_PORT: port.default(3000).describe('port the HTTP API listens on'),
  API_KEYS: apiKeyTable.describe(
    '`key=tenant,...`; keys of at least 16 characters (more with `deep-research keys create`); none: see [Keys and tenants](http-api.md#keys-and-tenants)',
  ),
  API_ALLOWED_HOSTS: hostList.describe(
    "`host` or `host:port` names the API answers to besides loopback ones (`localhost`, `127.0.0.1`, `[::1]`): without keys the `Host` header must be one of them (a page of another name that resolves to this machine, DNS rebinding, gets 421) and a browser's POST, PUT, PATCH or DELETE must come from the API's own page or a page of a listed name; with keys the `Host` is checked only when this is set. Health checks answer to any name",
  ),
  /** Fair sharing: a tenant's share of the workers when several wait (Temporal fairness weight, default 1). */
  TENANT_WEIGHTS: namedNumbers(TENANT_PATTERN, z.number().positive().max(1_000), 'tenant=weight (a positive number)').describe(
    "fair sharing: `tenant=weight` (share of the workers when tenants' tasks wait); a tenant not listed has 1",
  ),
  /** A tenant's priority: 1 (first) to 5 (last), default 3; its runs' tasks are dispatched in that order. */
  TENANT_PRIORITIES: namedNumbers(TENANT_PATTERN, z.number().int().min(1).max(5), 'tenant=priority (1-5)').describe(
    'fair sharing: `tenant=1..5` (priority key, 1 first); a tenant not listed has 3',
  ),
  /** Runs of one tenant researching at once; more wait in the tenant's queue (0: no limit). */
  TENANT_MAX_RUNS: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(0)
    .describe("runs of one tenant researching at once (`0`: no limit); more wait in the tenant's admission queue and show their place"),
  /** Where the CLI's client commands find the API, and the key they send. */
  DEEP_RESEARCH_API: optionalUrl.describe(
    "where the CLI's client commands find the API; unset: `http://127.0.0.1:3000` (from `API_HOST` and `API_PORT`)",
  ),
  DEEP_RESEARCH_KEY: optionalString.describe("the key the CLI's client commands send"),
  /** A worker's /metrics port (0: any free port, printed at start). */
  METRICS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65_535)
    .default(9464)
    .describe(
      "port `deep-research worker` serves `/metrics` on (`0`: any free port, printed at start); the API and `dev` serve it on the API's port",
    ),
  METRICS_HOST: z.string().default('127.0.0.1').describe('address `deep-research worker` serves `/metrics` on'),
  METRICS_TENANT_NAMES: trueOrFalse(false).describe(
    "`true`: `/metrics` (served without a key) labels runs started with the tenant's name; `false`: one count for all tenants",
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.describe(
    "OpenTelemetry tracing over OTLP/HTTP (unset: off): one trace follows a run from the API's HTTP request through the workflow and its step children to every activity (the Temporal SDK's OpenTelemetry plugin); the exporter's other `OTEL_*` variables (headers, protocol) apply",
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalString.describe('the traces endpoint, instead of `OTEL_EXPORTER_OTLP_ENDPOINT`'),
  OTEL_TRACES_EXPORTER: optionalString.describe('`none` turns tracing off'),
  OTEL_SDK_DISABLED: optionalString.describe('`true` turns tracing off'),
  OTEL_SERVICE_NAME: z.string().default('deep-research').describe('the service name of the traces'),
  CHAT_COMPLETION_WAIT: Duration.default('5m').describe(
    'how long a non-streaming `POST /v1/chat/completions` waits for the report before it answers with the run id and where to fetch it ([OpenAI-compatible endpoint](http-api.md#openai-compatible-endpoint))',
  ),
  RATE_LIMIT_SUBMITS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(30)
    .describe('new runs a tenant may submit per minute (per API process)'),
  RATE_LIMIT_READS: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(1_200)
    .describe('other requests a tenant may make per minute (per API process)'),
  RATE_LIMIT_UPLOADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(60)
    .describe('documents a tenant may add to its collections per minute (per API process)'),
  TENANT_MAX_SCHEDULES: quota(20, 'schedules a tenant may have (`403` above it)'),
  TENANT_MAX_COLLECTIONS: quota(50, 'collections a tenant may have (`403` above it)'),
  TENANT_MAX_DOCUMENTS: quota(5_000, "documents across a tenant's collections and sessions (`403` above it)"),
  TENANT_MAX_STORED_BYTES: quota(2_000_000_000, "bytes of document files a tenant's collections may hold (`403` above it)"),
  TENANT_MAX_STREAMS: quota(20, 'event streams a tenant may keep open at once, per API process (`429` above it)'),
  TENANT_MAX_RUNS_IN_FLIGHT: quota(
    100,
    'research runs of a tenant started and not yet ended, queued and waiting for review included (`429` above it); `TENANT_MAX_RUNS` limits those researching at once',
  ),
  RUN_MAX_TOKENS: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000_000)
    .default(400_000)
    .describe(
      'token budget (prompt and completion) of a run whose request sets no `options.maxTokens`, and the most a request may set (`0`: none); when it is spent the run stops researching and writes its report from what it has',
    ),
  RUN_MIN_OUTAGE: Duration.default(DEFAULT_MIN_OUTAGE).describe(
    'the shortest `options.maxOutage` a request may set (`400 max_outage_too_short` below it): a shorter one would fail a run on the first slow answer of the LLM or a blip of PostgreSQL',
  ),

  OPENAI_API_KEY: optionalString.describe('key for the LLM endpoint'),
  OPENAI_BASE_URL: optionalUrl.describe('any OpenAI-compatible endpoint (vLLM, Ollama, DeepSeek, DashScope, …); unset: OpenAI'),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini').describe('model for every role without its own'),
  LLM_MODEL_COORDINATOR: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_MODEL_PLANNER: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_MODEL_RESEARCHER: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_MODEL_CODER: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_MODEL_JUDGE: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_MODEL_REPORTER: optionalString.describe(
    'model of that role (`COORDINATOR`, `PLANNER`, `RESEARCHER`, `CODER`, `JUDGE`, `REPORTER`); unset: `LLM_MODEL`',
  ),
  LLM_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(3_600_000)
    .default(120_000)
    .describe("one LLM HTTP request (below the activity's 5-minute timeout)"),
  ...roleSettings(
    'LLM_TIMEOUT_MS',
    z.coerce.number().int().min(1_000).max(3_600_000),
    'one request of that role; a request that runs out while the server still answers is *too slow*: asked once more with half the output limit, then the role falls back (an unreachable server is an outage and is waited out); unset: `LLM_TIMEOUT_MS`',
  ),
  ...roleSettings(
    'LLM_MAX_TOKENS',
    z.coerce.number().int().min(16).max(1_000_000),
    `output limit sent with every request of that role (\`max_tokens\`, \`max_completion_tokens\` for OpenAI), lowered to what the context window leaves; unset: ${LLM_ROLES.map((role) => `${role} ${DEFAULT_MAX_TOKENS[role]}`).join(', ')}`,
  ),
  /** The model's context window in tokens; learned from the server (llama.cpp's /props, vLLM's
   *  max_model_len) when not set. */
  LLM_CONTEXT_TOKENS: z.coerce
    .number()
    .int()
    .min(512)
    .max(10_000_000)
    .optional()
    .describe(
      "the model's context window; unset, read from the server (llama.cpp's `/props`, vLLM's `max_model_len`) or learned from its first overflow error. Prompts are counted in tokens (estimated) and trimmed in the middle of their longest part to leave the output room",
    ),
  LLM_PRICES: priceTable.describe('`model=input/output` USD per million tokens, comma-separated, for cost estimates'),
  RESEARCHER_CONTEXT_TOKENS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(1_000_000)
    .optional()
    .describe(
      "tokens of conversation a researcher step sends (in the model's tokenizer family) before its oldest tool results are trimmed and, when that is not enough, it must answer; unset: 50000, or `LLM_CONTEXT_CHARS`/4 when that is set",
    ),
  LLM_CONTEXT_CHARS: z.coerce
    .number()
    .int()
    .min(4_000)
    .max(4_000_000)
    .optional()
    .describe('deprecated: `RESEARCHER_CONTEXT_TOKENS` in characters (divided by 4)'),
  RESEARCHER_TOOL_RESULT_TOKENS: z.coerce
    .number()
    .int()
    .min(200)
    .max(100_000)
    .default(2_500)
    .describe(
      'tokens one tool result may hold, shared fairly among its pages and search hits (each shortened to its share, the lowest-ranked hits left out when even a share is too small to use; only what is shown counts as read)',
    ),
  LLM_TOKENIZER: z
    .enum(['auto', 'o200k', 'cl100k'], { message: 'expected auto, o200k or cl100k' })
    .default('auto')
    .describe(
      "the tokenizer family budgets are counted in: `auto` takes `o200k` for OpenAI's gpt-4o, gpt-4.1, gpt-5, o-series and gpt-oss models and `cl100k` for the rest (gpt-4, Qwen and Llama 3 descend from it)",
    ),
  /** A second OpenAI-compatible provider, used while the first is down (src/activities/llm/providers.ts). */
  LLM_FALLBACK_BASE_URL: optionalUrl.describe(
    'a second OpenAI-compatible provider, used while the primary is down (see [A fallback provider](llm-servers.md#a-fallback-provider-and-adaptive-concurrency))',
  ),
  LLM_FALLBACK_API_KEY: optionalString.describe("the fallback provider's key; this or `LLM_FALLBACK_BASE_URL` turns the fallback on"),
  LLM_FALLBACK_MODEL: optionalString.describe("the fallback's model; unset: the primary's model names"),
  LLM_REWRITE_MODELS: hostList.describe(
    "comma-separated models a report rewrite (`POST /v1/research/:id/report`, `model`) may name besides the roles' own models",
  ),
  ...roleSettings(
    'LLM_FALLBACK_MODEL',
    z.string().trim().min(1),
    "the fallback's model of that role; unset: `LLM_FALLBACK_MODEL`, else the primary's model of the role",
  ),
  /** How long the primary must have been failing (no success in between) before calls go to the fallback. */
  LLM_FALLBACK_AFTER: Duration.default('2m').describe(
    'how long the primary must have been failing with outage errors, with no success in between, before requests go to the fallback',
  ),
  /** Model requests in flight per provider in one worker (the adaptive limit's ceiling); LLM_CONCURRENCY when unset. */
  LLM_PROVIDER_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(512)
    .optional()
    .describe("where each worker's adaptive limit of requests in flight per provider starts, and its ceiling; unset: `LLM_CONCURRENCY`"),

  SEARXNG_URL: optionalUrl.describe('a SearXNG instance'),
  SEARCH_PROVIDERS: optionalString
    .transform((v) =>
      v === undefined
        ? undefined
        : v
            .split(',')
            .map((x) => x.trim().toLowerCase())
            .filter(Boolean),
    )
    .describe(
      'enabled providers: `searxng`, `tavily`, `brave`, `exa`, `serper` (the web), `wikipedia`, `openalex`, `arxiv`, `pubmed`, `semanticscholar`; each query goes to those of its topic (see [Search providers](tools.md#search-providers)); unset: `wikipedia,openalex,arxiv,pubmed,semanticscholar` (plus `searxng` first when `SEARXNG_URL` is set)',
    ),
  SEARCH_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(15_000).describe('one provider request'),
  SEARCH_RATE_LIMITS: namedNumbers(/^[a-z]+$/, z.number().positive(), 'provider=requestsPerSecond').describe(
    '`provider=requests per second` in one worker, over the built-in `arxiv=0.34,brave=1,searxng=5,tavily=5,exa=5,serper=5,wikipedia=10,openalex=10,semanticscholar=1` and `pubmed=1` (`4` with `NCBI_API_KEY`; a PubMed search is two requests)',
  ),
  MCP_CONFIG: optionalString.describe('JSON file of MCP servers (see [MCP tools](tools.md#mcp-tools))'),
  SANDBOX_IMAGE: z.string().min(1).default('deep-research-sandbox:latest').describe('image coder programs run in'),
  SANDBOX_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(64)
    .max(16_384)
    .default(512)
    .describe('memory of one sandbox run (memory = memory + swap)'),
  SANDBOX_CPUS: z.coerce.number().positive().max(16).default(1).describe('CPUs of one sandbox run'),
  SANDBOX_PIDS: z.coerce.number().int().min(16).max(4_096).default(128).describe('processes of one sandbox run'),
  SANDBOX_TIMEOUT_S: z.coerce.number().int().min(1).max(3_600).default(60).describe('wall-clock limit of one sandbox run, in seconds'),
  SANDBOX_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(2)
    .describe('sandbox runs at once per worker (they have their own `<queue>-sandbox` task queue)'),
  DOCKER_SOCKET: z.string().min(1).default('/var/run/docker.sock').describe('the Docker engine the worker starts sandboxes with'),
  RESEARCHER_PYTHON: z
    .enum(['auto', 'true', 'false'], { message: 'expected auto, true or false' })
    .default('auto')
    .describe(
      "the researcher's `python` tool: `auto` offers it while this worker's Docker engine answers and has the image (checked at most once a minute), `true` always (the sandbox queue's workers have Docker, this one need not), `false` never",
    ),
  TAVILY_API_KEY: optionalString.describe("Tavily's API key"),
  TAVILY_BASE_URL: z.url().default('https://api.tavily.com').describe("Tavily's API"),
  BRAVE_API_KEY: optionalString.describe("Brave Search's API key"),
  BRAVE_BASE_URL: z.url().default('https://api.search.brave.com').describe("Brave Search's API"),
  WIKIPEDIA_BASE_URL: z.url().default('https://en.wikipedia.org').describe('the Wikipedia searched (keyless)'),
  OPENALEX_BASE_URL: z.url().default('https://api.openalex.org').describe('OpenAlex (keyless)'),
  OPENALEX_MAILTO: optionalString.describe('an email address sent to OpenAlex as `mailto` with each request'),
  ARXIV_BASE_URL: z.url().default('https://export.arxiv.org').describe('arXiv (keyless)'),
  PUBMED_BASE_URL: z.url().default('https://eutils.ncbi.nlm.nih.gov').describe("PubMed's E-utilities (keyless)"),
  NCBI_API_KEY: optionalString.describe("an NCBI API key: PubMed's limit goes from 3 to 10 requests a second"),
  SEMANTIC_SCHOLAR_BASE_URL: z.url().default('https://api.semanticscholar.org').describe("Semantic Scholar's Graph API (keyless)"),
  SEMANTIC_SCHOLAR_API_KEY: optionalString.describe(
    'a Semantic Scholar API key (`x-api-key`): a rate of its own instead of the pool keyless requests share',
  ),
  EXA_API_KEY: optionalString.describe("Exa's API key"),
  EXA_BASE_URL: z.url().default('https://api.exa.ai').describe("Exa's API"),
  SERPER_API_KEY: optionalString.describe("Serper's API key (Google results)"),
  SERPER_BASE_URL: z.url().default('https://google.serper.dev').describe("Serper's API"),
  CRAWL_ALLOW_HOSTS: hostList.describe('`host` or `host:port` entries the SSRF guard lets through (development and tests only)'),
  /** Signs webhook deliveries (HMAC-SHA256); without it, requests that ask for a webhook are refused. */
  WEBHOOK_SECRET: optionalString
    .refine((v) => v === undefined || v.length >= 16, 'WEBHOOK_SECRET must be at least 16 characters')
    .describe('signs webhook deliveries (HMAC-SHA256; at least 16 characters); without it, webhooks are refused'),
  /** Hosts (`host` or `host:port`) a webhook may reach although private, as CRAWL_ALLOW_HOSTS. */
  WEBHOOK_ALLOW_HOSTS: hostList.describe('hosts (`host` or `host:port`) a webhook may reach although private'),
  /** The shortest interval a schedule may repeat at. */
  SCHEDULE_MIN_INTERVAL: Duration.default('1m').describe(
    'the shortest interval a schedule may repeat at: its `every`, and the shortest gap between the start times of its `cron`',
  ),
  WEBHOOK_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(500)
    .max(120_000)
    .default(10_000)
    .describe('how long one webhook delivery attempt may take'),
  CRAWL_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(10_000)
    .max(100_000_000)
    .default(5_000_000)
    .describe('largest page read, in bytes counted after decompression'),
  CRAWL_TIMEOUT_MS: z.coerce.number().int().min(500).max(300_000).default(20_000).describe('time limit of one page read'),
  CRAWL_CONNECT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(5_000)
    .describe('time limit of the connection of one page read'),
  CRAWL_RESPECT_ROBOTS: trueOrFalse(true).describe('whether robots.txt is respected'),
  CRAWL_USER_AGENT: z
    .string()
    .min(1)
    .default('deep-research-bot/0.1 (+https://github.com/deep-research)')
    .describe('the user agent pages are read as, and robots.txt is read for'),
  SEARCH_MAX_RESULTS: z.coerce.number().int().min(1).max(20).default(5).describe('results kept per query'),
  BROWSER: z
    .enum(['auto', 'true', 'false'], { message: 'expected auto, true or false' })
    .default('auto')
    .describe(
      'whether this worker reads JavaScript-rendered pages in headless Chromium (polls the `<queue>-browser` task queue): `auto` when `CHROMIUM_PATH` or `chromium` on `PATH` is found, `true` always, `false` never (see [Pages that need a browser](tools.md#pages-that-need-a-browser))',
    ),
  CHROMIUM_PATH: optionalString.describe('the Chromium executable pages are rendered with; by default `chromium` on `PATH`'),
  BROWSER_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(16)
    .default(1)
    .describe('pages rendered at once per worker, each in a render host of its own (a process with its own Chromium)'),
  BROWSER_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(300_000)
    .default(30_000)
    .describe('time limit of one page rendered in the browser, from the first request to the text taken'),
  BROWSER_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(100_000)
    .max(500_000_000)
    .default(20_000_000)
    .describe('bytes all responses of one rendered page may add up to (document, scripts, data; images, media and fonts are not loaded)'),
  BROWSER_MAX_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(256)
    .max(65_536)
    .default(1_536)
    .describe(
      "memory one page's render may hold, in MB: the private resident memory of the render host's whole process tree (Chromium's processes and the host); past it the page is skipped and its browser stopped",
    ),
  BROWSER_WAIT: optionalString
    .pipe(Duration.optional())
    .describe(
      'how long a page that needs a browser waits for a worker with one to take it before it is skipped, saying so (a deployment with `BROWSER=false` everywhere); unset: 1 minute',
    ),
  LLM_QUEUE_RATE: z.coerce
    .number()
    .positive()
    .max(10_000)
    .default(10)
    .describe(
      "LLM activities (page extraction included) per second across all workers (the `<queue>-llm` task queue's limit, so many runs on one key slow down together instead of collecting 429s)",
    ),
  LLM_CONCURRENCY: z.coerce.number().int().min(1).max(512).default(16).describe('LLM activities at once per worker'),
  RETRY_INITIAL_INTERVAL: Duration.default(DEFAULT_RETRY.initialInterval).describe(
    "first backoff of retried outside calls (LLM, PostgreSQL, search, Docker); there is no attempt limit, a run's `maxOutage` bounds the wait",
  ),
  RETRY_MAX_INTERVAL: Duration.default(DEFAULT_RETRY.maximumInterval).describe('longest backoff of retried outside calls'),
  LLM_HEARTBEAT_TIMEOUT: Duration.default(DEFAULT_LLM_HEARTBEAT_TIMEOUT).describe(
    "how long a worker making an LLM call may stay silent (a network cut, a frozen process) before another worker gets the call; the second attempt waits for the first one's answer rather than paying again. A run's background phase (one activity making several calls) may stay silent twice as long",
  ),
  WORKER_SHUTDOWN_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .optional()
    .describe(
      'on SIGTERM, how long activities in flight may finish; what still runs then goes back to Temporal as retryable; unset: `LLM_TIMEOUT_MS` + 15000',
    ),
  /** Workflows a worker keeps in memory between their tasks (the sticky cache); the SDK sizes it from the heap when unset. */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce
    .number()
    .int()
    .min(0)
    .max(100_000)
    .optional()
    .describe(
      "workflows a worker keeps in memory between their tasks; unset: the SDK's, sized from the heap. Smaller is not cheaper: at 100 runs, 60 cost 2.8× the workflow thread's CPU (replays) and saved no memory (`bench:load --env`)",
    ),
  /** Workflow stack traces for the `__stack_trace` query (the Web UI's Stack Trace tab): a stack recorded for every promise a workflow makes. */
  WORKFLOW_STACK_TRACES: trueOrFalse(true).describe(
    "on, as in the SDK: a stack trace is kept for every promise a workflow makes, so the Web UI's Stack Trace tab (the `__stack_trace` query) shows where a run waits. `false` (opt-in) turns that off and the workflow threads use about a quarter less CPU (`npm run bench:workflow-cpu`); the tab then says stack traces are not enabled. The switch is a one-line patch of `@temporalio/worker` (`patches/`, applied by `npm install`'s postinstall; see [Temporal SDK patch](development.md#temporal-sdk-patch))",
  ),
  /** The isolate watchdog that stops a workflow which does not yield: the SDK's own one per call into the VM, or one per activation (patched SDK, opt-in). */
  WORKFLOW_VM_WATCHDOG: z
    .enum(['per-activation', 'per-call'], { message: 'expected per-activation or per-call' })
    .default('per-call')
    .describe(
      'the watchdog that stops a workflow which does not yield within 5 s (its workflow task fails with "Script execution timed out"). `per-call` is the SDK\'s own, one per call into the workflow sandbox, at least three per activation, each starting a thread. `per-activation` (opt-in) runs each activation under one watchdog: the SDK\'s CPU is 1.2× that (`npm run bench:workflow-cpu`). A patch of `@temporalio/worker` (see [Temporal SDK patch](development.md#temporal-sdk-patch))',
    ),
  /** V8's old-generation growth after a full collection, in percent of the live heap (0: V8's adaptive factor, up to 300%). */
  HEAP_GROWTH_PERCENT: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000)
    .default(50)
    .describe(
      "how far V8 lets the old generation of `dev`, `worker` and `api` grow past what survived the last full collection before it collects again. `0` is V8's own factor, up to 300% for a process that allocates fast: at 100 runs in flight it let the main heap reach twice its live size. Lower holds less memory for a little more collecting",
    ),
  /** Largest semi-space of the process's worker threads (workflow thread, page extraction), in MB (0: V8's default, 16). */
  THREAD_SEMI_SPACE_MB: z.coerce
    .number()
    .int()
    .min(0)
    .max(256)
    .default(4)
    .describe(
      "the largest semi-space (half the young generation) of the worker threads these commands start: the workflow thread and page extraction. `0` is V8's 16 MB, which the workflow thread filled with 32 MB it never needed",
    ),
  /** The C allocator of `dev`, `worker` and `api` (src/infra/process-start.ts). */
  ALLOCATOR: z
    .string()
    .trim()
    .default('auto')
    .refine(
      (v) => v === 'auto' || v === 'system' || v.startsWith('/'),
      'auto, system, or the absolute path of a shared library such as libjemalloc.so.2',
    )
    .describe(
      "the C allocator of `dev`, `worker` and `api`. `auto` uses jemalloc where it is installed (Debian: `libjemalloc2`; the image has it) and the system's otherwise; `system` keeps glibc's; a path names a library to preload. glibc keeps what the native threads (Temporal Core, V8's helpers) free: 500 workflows in the sticky cache took about 400 KB each under glibc and 165 KB under jemalloc (`npm run bench:workflow-memory -- --allocators`). The process replaces itself once at start to load it (same process id); the processes it starts do not inherit it",
    ),
  /** The main thread's largest semi-space, in MB (0: V8's default), set at start (src/infra/process-start.ts). */
  MAIN_SEMI_SPACE_MB: z.coerce
    .number()
    .int()
    .min(0)
    .max(256)
    .default(16)
    .describe(
      "the largest semi-space (half the young generation) of the main thread of `dev`, `worker` and `api`. `0` is V8's: 64 MB on a 64-bit Node, which a worker with a thousand runs in flight filled (128 MB of young generation). V8 reads it only when the process starts, so the process replaces itself once at start to set it (as for `ALLOCATOR`), unless `--max-semi-space-size` is already among Node's options",
    ),
  EMBEDDING_MODEL: z.string().min(1).default('text-embedding-3-small').describe('model of the OpenAI-compatible `/embeddings` endpoint'),
  EMBEDDING_BASE_URL: optionalUrl.describe(
    'the embeddings endpoint; unset: `OPENAI_BASE_URL`. With no endpoint or key at all, retrieval is full text only',
  ),
  EMBEDDING_API_KEY: optionalString.describe("the embeddings endpoint's key; unset: `OPENAI_API_KEY`"),
  EMBEDDING_DIMENSIONS: z.coerce
    .number()
    .int()
    .min(1)
    .max(16_000)
    .optional()
    .describe('dimensions asked of the embedding model (optional)'),
  EMBEDDING_BATCH: z.coerce
    .number()
    .int()
    .min(1)
    .max(2_048)
    .default(64)
    .describe('chunks per `/embeddings` request (four requests at a time)'),
  KB_MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(1_000_000_000)
    .default(25_000_000)
    .describe('largest document a collection takes (`413` above it)'),
  KB_MAX_DOCUMENTS: z.coerce.number().int().min(1).max(1_000_000).default(1_000).describe('documents per collection (`413` above it)'),
  KB_CHUNK_TOKENS: z.coerce
    .number()
    .int()
    .min(50)
    .max(8_000)
    .default(350)
    .describe('tokens per chunk (whole sentences, with the heading path)'),
  KB_CHUNK_OVERLAP: z.coerce
    .number()
    .int()
    .min(0)
    .max(2_000)
    .default(50)
    .describe('tokens neighbouring chunks share (at most half of `KB_CHUNK_TOKENS`)'),
  KB_PARSE_THREADS: z.coerce.number().int().min(1).max(16).default(1).describe('documents parsed at once, each on a thread of its own'),
  KB_PARSE_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(64)
    .max(16_384)
    .default(512)
    .describe("memory (heap and buffers) one document's parse thread may hold; past it the document fails"),
  KB_PARSE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(540_000)
    .default(120_000)
    .describe("wall time one document's parse may take; past it the document fails"),
  KB_PARSE_MAX_INFLATED_MB: z.coerce
    .number()
    .min(1)
    .max(16_384)
    .default(200)
    .describe('bytes, in MB, a document may decompress to (Office ZIP entries, PDF streams each time they are decoded)'),
  KB_PARSE_MAX_PAGES: z.coerce.number().int().min(1).max(1_000_000).default(2_000).describe('pages of a PDF, slides of a PPTX'),
  KB_PARSE_MAX_SHEETS: z.coerce.number().int().min(1).max(100_000).default(100).describe('worksheets of an XLSX'),
  KB_PARSE_MAX_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(100_000).describe('rows of one worksheet or CSV file'),
  KB_PARSE_MAX_COLUMNS: z.coerce.number().int().min(1).max(100_000).default(1_000).describe('columns of one row (XLSX, CSV)'),
  KB_PARSE_MAX_ZIP_ENTRIES: z.coerce.number().int().min(10).max(1_000_000).default(10_000).describe('files inside an Office document'),
  KB_PARSE_MAX_CHARS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(100_000_000)
    .default(2_000_000)
    .describe("characters of a document's text that are kept (the rest is cut, not refused)"),
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
    /** The embedded dev server's own Prometheus metrics port (TEMPORAL_METRICS_PORT); undefined: none. */
    metricsPort: number | undefined;
    /** Worker Versioning: the deployment and this worker's build id ('auto' = the code's hash);
     *  undefined for an unversioned worker. */
    deployment: { name: string; buildId: string } | undefined;
    /** TEMPORAL_DEPLOYMENT_NAME, also for `dev`, whose worker is always a version of it. */
    deploymentName: string;
    /** TEMPORAL_WORKER_PROMOTE: a versioned worker makes its build current and takes over runs of gone builds. */
    promote: boolean;
  };
  database: { url: string | undefined; poolMax: number; namedStatements: boolean; pglitePort: number };
  api: {
    host: string;
    port: number;
    /** API_KEYS: keys given in the environment, each with its tenant (more live in PostgreSQL). */
    keys: { key: string; tenant: string }[];
    /** API_ALLOWED_HOSTS: names answered besides loopback ones (src/api/host-guard.ts); absent: none. */
    allowedHosts?: string[];
    /** Requests per minute and tenant: those that start runs, documents added, and everything else. */
    rateLimits: { submits: number; reads: number; uploads: number };
    /** What one tenant may hold and do at once (TENANT_MAX_*). */
    quotas: TenantQuotas;
    /** RUN_MAX_TOKENS: a run's token budget when its request sets none, and the most one may set (0: none). */
    runMaxTokens: number;
    /** RUN_MIN_OUTAGE: the shortest options.maxOutage a request may set. */
    minOutage: string;
    /** Fair sharing between tenants: fairness weights, priority keys, runs at once per tenant. */
    fairness: Fairness;
    /** CHAT_COMPLETION_WAIT: how long a non-streaming chat completion waits for the report (absent: its default). */
    chatWaitMs?: number;
  };
  /** OpenTelemetry tracing (src/infra/tracing.ts). */
  tracing: { enabled: boolean; serviceName: string };
  /** Where a standalone worker serves /metrics. */
  metrics: { host: string; port: number; tenantNames: boolean };
  /** The CLI's client commands: the API's URL and the key to send. */
  client: { api: string; key: string | undefined };
  llm: {
    apiKey: string | undefined;
    baseUrl: string | undefined;
    models: Record<LlmRole, string>;
    /** Models a report rewrite may name besides the roles' (LLM_REWRITE_MODELS). */
    rewriteModels: string[];
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
    /** Tokens of conversation a researcher may send before it must answer. */
    conversationTokens: number;
    /** Tokens one researcher tool result may hold, shared among its pages and hits. */
    toolResultTokens: number;
    /** The family tokens are counted in (LLM_TOKENIZER). */
    tokenizer: 'auto' | 'o200k' | 'cl100k';
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
    exa: { apiKey: string | undefined; baseUrl: string };
    serper: { apiKey: string | undefined; baseUrl: string };
    pubmed: { apiKey: string | undefined; baseUrl: string };
    semanticScholar: { apiKey: string | undefined; baseUrl: string };
    wikipediaUrl: string;
    openAlexUrl: string;
    openAlexMailto: string | undefined;
    arxivUrl: string;
    /** Requests per second per provider in one worker (arXiv asks for one every 3 s). */
    rateLimits: Record<string, number>;
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
  /** Headless Chromium for pages whose text is rendered by JavaScript (src/activities/crawl/browser.ts). */
  browser: {
    /** BROWSER: poll the browser queue when Chromium is found (auto), always, or never. */
    mode: 'auto' | 'true' | 'false';
    /** CHROMIUM_PATH; undefined: `chromium` on PATH. */
    chromiumPath: string | undefined;
    /** PATH, where `chromium` is looked for. */
    searchPath: string;
    concurrency: number;
    timeoutMs: number;
    maxBytes: number;
    /** BROWSER_MAX_MEMORY_MB: memory of one render's process tree. */
    maxMemoryMb: number;
  };
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
    /** Parsing on threads of their own, within these caps (KB_PARSE_*); past one a document fails
     *  (src/activities/knowledge/parse-thread.ts, parse-caps.ts). */
    parse: {
      threads: number;
      memoryMb: number;
      timeoutMs: number;
      caps: {
        /** Bytes a document may decompress to in total: ZIP entries, PDF streams (decoded, summed
         *  over every decoding, so one stream shared by many pages counts once per page). */
        maxInflatedBytes: number;
        /** Pages of a PDF, slides of a deck. */
        maxPages: number;
        /** Worksheets of a workbook. */
        maxSheets: number;
        /** Rows of one sheet or CSV file. */
        maxRows: number;
        /** Columns of one row. */
        maxColumns: number;
        /** Entries in a ZIP (Office) file. */
        maxZipEntries: number;
        /** Characters of text kept (the rest is cut, not refused). */
        maxChars: number;
      };
    };
  };
  worker: {
    /** How long a stopping worker lets activities in flight finish: by default an LLM request's timeout and 15 s. */
    shutdownGraceMs: number;
    /** WORKER_MAX_CACHED_WORKFLOWS; undefined: the SDK's own sizing. */
    maxCachedWorkflows: number | undefined;
    /** WORKFLOW_STACK_TRACES: whether workflow threads record the stack traces the Web UI shows (on, as in the SDK; off is an opt-in of the patched SDK that saves about a quarter of those threads' CPU). */
    stackTraces: boolean;
    /** WORKFLOW_VM_WATCHDOG: one isolate watchdog per call into the VM as the SDK does (the default), or per activation (patched SDK, opt-in). */
    vmWatchdog: 'per-activation' | 'per-call';
  };
  /** ALLOCATOR, MAIN_SEMI_SPACE_MB: what the long-running commands settle at start (src/infra/process-start.ts). */
  start: StartSettings;
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

/** The environment as the schema parsed it: the variables' values, defaults filled in. */
type Env = z.infer<typeof EnvSchema>;
type ConfigIssue = { variable: string; reason: string };

/** ALLOCATOR and MAIN_SEMI_SPACE_MB alone, for the launcher, which settles them before the program
 *  is loaded; undefined when either is invalid (loadConfig then reports it). */
export function startSettings(env: NodeJS.ProcessEnv = process.env): StartSettings | undefined {
  const allocator = EnvSchema.shape.ALLOCATOR.safeParse(env.ALLOCATOR);
  const semi = EnvSchema.shape.MAIN_SEMI_SPACE_MB.safeParse(env.MAIN_SEMI_SPACE_MB);
  return allocator.success && semi.success ? { allocator: allocator.data, mainSemiSpaceMb: semi.data } : undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parseEnv(env);
  checkSearchProviders(e);
  const temporal = loadTemporalProfile(env);
  return {
    env: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    dataDir: e.DATA_DIR,
    temporal: temporalConfig(e, temporal),
    database: {
      url: e.DATABASE_URL,
      poolMax: e.DATABASE_POOL_MAX,
      namedStatements: e.DATABASE_NAMED_STATEMENTS,
      pglitePort: e.PGLITE_PORT,
    },
    api: apiConfig(e),
    metrics: { host: e.METRICS_HOST, port: e.METRICS_PORT, tenantNames: e.METRICS_TENANT_NAMES },
    tracing: tracingConfig(e),
    client: clientConfig(e),
    llm: llmConfig(e),
    search: searchConfig(e),
    mcp: { configPath: e.MCP_CONFIG },
    sandbox: sandboxConfig(e),
    crawl: crawlConfig(e),
    browser: {
      mode: e.BROWSER,
      chromiumPath: e.CHROMIUM_PATH,
      searchPath: e.PATH,
      concurrency: e.BROWSER_CONCURRENCY,
      timeoutMs: e.BROWSER_TIMEOUT_MS,
      maxBytes: e.BROWSER_MAX_BYTES,
      maxMemoryMb: e.BROWSER_MAX_MEMORY_MB,
    },
    webhook: { secret: e.WEBHOOK_SECRET, allowHosts: e.WEBHOOK_ALLOW_HOSTS, timeoutMs: e.WEBHOOK_TIMEOUT_MS },
    schedules: { minInterval: e.SCHEDULE_MIN_INTERVAL },
    retry: {
      initialInterval: e.RETRY_INITIAL_INTERVAL,
      maximumInterval: e.RETRY_MAX_INTERVAL,
      heartbeatTimeout: e.LLM_HEARTBEAT_TIMEOUT,
      ...(e.BROWSER_WAIT ? { browserWait: e.BROWSER_WAIT } : {}),
      ...(e.NEW_BUILD_CHECK ? { newBuildCheck: e.NEW_BUILD_CHECK } : {}),
    },
    knowledge: knowledgeConfig(e),
    worker: workerConfig(e),
    start: { allocator: e.ALLOCATOR, mainSemiSpaceMb: e.MAIN_SEMI_SPACE_MB },
    heap: { growthPercent: e.HEAP_GROWTH_PERCENT, threadSemiSpaceMb: e.THREAD_SEMI_SPACE_MB },
  };
}

/** Every issue, one line each, naming the variable (never its value: it may be a secret). */
function invalidConfiguration(issues: ConfigIssue[]): ConfigError {
  return new ConfigError(`Invalid configuration:\n${issues.map((i) => `  ${i.variable}: ${i.reason}`).join('\n')}`, issues);
}

function parseEnv(env: NodeJS.ProcessEnv): Env {
  const parsed = EnvSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw invalidConfiguration(parsed.error.issues.map((i) => ({ variable: String(i.path[0] ?? '(environment)'), reason: i.message })));
}

const KNOWN_SEARCH_PROVIDERS = [
  'searxng',
  'tavily',
  'brave',
  'exa',
  'serper',
  'wikipedia',
  'openalex',
  'arxiv',
  'pubmed',
  'semanticscholar',
];
/** The providers that cannot work without a variable of their own. */
const SEARCH_PROVIDER_NEEDS: Record<string, [keyof Env, string]> = {
  searxng: ['SEARXNG_URL', 'a SearXNG URL'],
  tavily: ['TAVILY_API_KEY', 'a Tavily key'],
  brave: ['BRAVE_API_KEY', 'a Brave key'],
  exa: ['EXA_API_KEY', 'an Exa key'],
  serper: ['SERPER_API_KEY', 'a Serper key'],
};

/** SEARCH_PROVIDERS names known providers, each with what it needs. */
function checkSearchProviders(e: Env): void {
  const issues: ConfigIssue[] = [];
  for (const p of e.SEARCH_PROVIDERS ?? []) {
    if (!KNOWN_SEARCH_PROVIDERS.includes(p))
      issues.push({ variable: 'SEARCH_PROVIDERS', reason: `unknown provider "${p}" (known: ${KNOWN_SEARCH_PROVIDERS.join(', ')})` });
    const need = SEARCH_PROVIDER_NEEDS[p];
    if (need && !e[need[0]]) issues.push({ variable: need[0], reason: `SEARCH_PROVIDERS includes ${p}, which needs ${need[1]}` });
  }
  if (issues.length) throw invalidConfiguration(issues);
}

function temporalConfig(e: Env, profile: TemporalProfile): Config['temporal'] {
  return {
    address: profile.address,
    namespace: profile.namespace ?? DEFAULT_NAMESPACE,
    connection: profile,
    taskQueue: e.TEMPORAL_TASK_QUEUE,
    cliPath: e.TEMPORAL_CLI_PATH,
    searchPath: e.PATH,
    port: e.TEMPORAL_PORT,
    uiPort: e.TEMPORAL_UI_PORT,
    metricsPort: e.TEMPORAL_METRICS_PORT,
    deployment: e.TEMPORAL_WORKER_BUILD_ID ? { name: e.TEMPORAL_DEPLOYMENT_NAME, buildId: e.TEMPORAL_WORKER_BUILD_ID } : undefined,
    deploymentName: e.TEMPORAL_DEPLOYMENT_NAME,
    promote: e.TEMPORAL_WORKER_PROMOTE,
  };
}

function apiConfig(e: Env): Config['api'] {
  return {
    host: e.API_HOST,
    port: e.API_PORT,
    keys: e.API_KEYS,
    allowedHosts: e.API_ALLOWED_HOSTS,
    fairness: { weights: e.TENANT_WEIGHTS, priorities: e.TENANT_PRIORITIES, maxRuns: e.TENANT_MAX_RUNS },
    rateLimits: { submits: e.RATE_LIMIT_SUBMITS, reads: e.RATE_LIMIT_READS, uploads: e.RATE_LIMIT_UPLOADS },
    quotas: {
      schedules: e.TENANT_MAX_SCHEDULES,
      collections: e.TENANT_MAX_COLLECTIONS,
      documents: e.TENANT_MAX_DOCUMENTS,
      storedBytes: e.TENANT_MAX_STORED_BYTES,
      streams: e.TENANT_MAX_STREAMS,
      runsInFlight: e.TENANT_MAX_RUNS_IN_FLIGHT,
    },
    runMaxTokens: e.RUN_MAX_TOKENS,
    minOutage: e.RUN_MIN_OUTAGE,
    chatWaitMs: durationToMs(e.CHAT_COMPLETION_WAIT),
  };
}

function tracingConfig(e: Env): Config['tracing'] {
  return {
    enabled:
      Boolean(e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) &&
      e.OTEL_TRACES_EXPORTER !== 'none' &&
      e.OTEL_SDK_DISABLED !== 'true',
    serviceName: e.OTEL_SERVICE_NAME,
  };
}

/** The CLI reaches the API where it listens; an API listening on every address is reached on loopback. */
function clientConfig(e: Env): Config['client'] {
  const host = e.API_HOST === '0.0.0.0' || e.API_HOST === '::' ? '127.0.0.1' : e.API_HOST;
  return { api: e.DEEP_RESEARCH_API ?? `http://${host}:${e.API_PORT}`, key: e.DEEP_RESEARCH_KEY };
}

function llmConfig(e: Env): Config['llm'] {
  const models = roleModels(e);
  return {
    apiKey: e.OPENAI_API_KEY,
    baseUrl: e.OPENAI_BASE_URL,
    models,
    rewriteModels: e.LLM_REWRITE_MODELS,
    timeoutMs: e.LLM_TIMEOUT_MS,
    timeouts: perRole(e, 'LLM_TIMEOUT_MS', () => e.LLM_TIMEOUT_MS),
    maxTokens: perRole(e, 'LLM_MAX_TOKENS', (role) => DEFAULT_MAX_TOKENS[role]),
    contextTokens: e.LLM_CONTEXT_TOKENS,
    prices: e.LLM_PRICES,
    conversationTokens: e.RESEARCHER_CONTEXT_TOKENS ?? (e.LLM_CONTEXT_CHARS ? Math.floor(e.LLM_CONTEXT_CHARS / 4) : 50_000),
    toolResultTokens: e.RESEARCHER_TOOL_RESULT_TOKENS,
    tokenizer: e.LLM_TOKENIZER,
    queueRate: e.LLM_QUEUE_RATE,
    concurrency: e.LLM_CONCURRENCY,
    providerConcurrency: e.LLM_PROVIDER_CONCURRENCY ?? e.LLM_CONCURRENCY,
    fallback: fallbackProvider(e, models),
  };
}

/** LLM_MODEL_<ROLE>, else LLM_MODEL. */
function roleModels(e: Env): Record<LlmRole, string> {
  return Object.fromEntries(LLM_ROLES.map((role) => [role, e[`LLM_MODEL_${role.toUpperCase()}` as keyof Env] ?? e.LLM_MODEL])) as Record<
    LlmRole,
    string
  >;
}

/** `<name>_<ROLE>` for every role, else `fallback(role)`. */
function perRole(e: Env, name: 'LLM_TIMEOUT_MS' | 'LLM_MAX_TOKENS', fallback: (role: LlmRole) => number): Record<LlmRole, number> {
  return Object.fromEntries(
    LLM_ROLES.map((role) => [role, (e[`${name}_${role.toUpperCase()}` as keyof Env] as number | undefined) ?? fallback(role)]),
  ) as Record<LlmRole, number>;
}

/** The second provider, when LLM_FALLBACK_BASE_URL or LLM_FALLBACK_API_KEY is set. */
function fallbackProvider(e: Env, models: Record<LlmRole, string>): Config['llm']['fallback'] {
  if (!(e.LLM_FALLBACK_BASE_URL || e.LLM_FALLBACK_API_KEY)) return undefined;
  return {
    apiKey: e.LLM_FALLBACK_API_KEY,
    baseUrl: e.LLM_FALLBACK_BASE_URL,
    models: Object.fromEntries(
      LLM_ROLES.map((role) => [role, e[`LLM_FALLBACK_MODEL_${role.toUpperCase()}` as keyof Env] ?? e.LLM_FALLBACK_MODEL ?? models[role]]),
    ) as Record<LlmRole, string>,
    afterMs: durationToMs(e.LLM_FALLBACK_AFTER),
  };
}

function searchConfig(e: Env): Config['search'] {
  return {
    providers: e.SEARCH_PROVIDERS ?? [...(e.SEARXNG_URL ? ['searxng'] : []), 'wikipedia', 'openalex', 'arxiv', 'pubmed', 'semanticscholar'],
    searxngUrl: e.SEARXNG_URL,
    maxResults: e.SEARCH_MAX_RESULTS,
    timeoutMs: e.SEARCH_TIMEOUT_MS,
    tavily: { apiKey: e.TAVILY_API_KEY, baseUrl: e.TAVILY_BASE_URL },
    brave: { apiKey: e.BRAVE_API_KEY, baseUrl: e.BRAVE_BASE_URL },
    exa: { apiKey: e.EXA_API_KEY, baseUrl: e.EXA_BASE_URL },
    serper: { apiKey: e.SERPER_API_KEY, baseUrl: e.SERPER_BASE_URL },
    pubmed: { apiKey: e.NCBI_API_KEY, baseUrl: e.PUBMED_BASE_URL },
    semanticScholar: { apiKey: e.SEMANTIC_SCHOLAR_API_KEY, baseUrl: e.SEMANTIC_SCHOLAR_BASE_URL },
    wikipediaUrl: e.WIKIPEDIA_BASE_URL,
    openAlexUrl: e.OPENALEX_BASE_URL,
    openAlexMailto: e.OPENALEX_MAILTO,
    arxivUrl: e.ARXIV_BASE_URL,
    rateLimits: {
      ...{ searxng: 5, tavily: 5, brave: 1, exa: 5, serper: 5, wikipedia: 10, openalex: 10, arxiv: 0.34, semanticscholar: 1 },
      // NCBI allows 3 requests a second without a key, 10 with one; each search makes two.
      pubmed: e.NCBI_API_KEY ? 4 : 1,
      ...e.SEARCH_RATE_LIMITS,
    },
  };
}

function sandboxConfig(e: Env): Config['sandbox'] {
  return {
    image: e.SANDBOX_IMAGE,
    memoryMb: e.SANDBOX_MEMORY_MB,
    cpus: e.SANDBOX_CPUS,
    pids: e.SANDBOX_PIDS,
    timeoutSeconds: e.SANDBOX_TIMEOUT_S,
    concurrency: e.SANDBOX_CONCURRENCY,
    dockerSocket: e.DOCKER_SOCKET,
    researcherPython: e.RESEARCHER_PYTHON,
  };
}

function crawlConfig(e: Env): Config['crawl'] {
  return {
    allowHosts: e.CRAWL_ALLOW_HOSTS,
    maxBytes: e.CRAWL_MAX_BYTES,
    timeoutMs: e.CRAWL_TIMEOUT_MS,
    connectTimeoutMs: e.CRAWL_CONNECT_TIMEOUT_MS,
    respectRobots: e.CRAWL_RESPECT_ROBOTS,
    userAgent: e.CRAWL_USER_AGENT,
  };
}

/** Embeddings use the LLM endpoint and key unless EMBEDDING_* name their own. */
function knowledgeConfig(e: Env): Config['knowledge'] {
  return {
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
    parse: {
      threads: e.KB_PARSE_THREADS,
      memoryMb: e.KB_PARSE_MEMORY_MB,
      timeoutMs: e.KB_PARSE_TIMEOUT_MS,
      caps: {
        maxInflatedBytes: Math.round(e.KB_PARSE_MAX_INFLATED_MB * 1_000_000),
        maxPages: e.KB_PARSE_MAX_PAGES,
        maxSheets: e.KB_PARSE_MAX_SHEETS,
        maxRows: e.KB_PARSE_MAX_ROWS,
        maxColumns: e.KB_PARSE_MAX_COLUMNS,
        maxZipEntries: e.KB_PARSE_MAX_ZIP_ENTRIES,
        maxChars: e.KB_PARSE_MAX_CHARS,
      },
    },
  };
}

function workerConfig(e: Env): Config['worker'] {
  return {
    shutdownGraceMs: e.WORKER_SHUTDOWN_GRACE_MS ?? e.LLM_TIMEOUT_MS + 15_000,
    maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    stackTraces: e.WORKFLOW_STACK_TRACES,
    vmWatchdog: e.WORKFLOW_VM_WATCHDOG,
  };
}
