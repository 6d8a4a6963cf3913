// The HTTP API and what it allows: where it listens, keys and tenants, fair sharing, rate limits,
// quotas, run budgets, schedules and webhooks; and where the CLI's client commands find it.
import { z } from 'zod';
import { DEFAULT_MIN_OUTAGE } from '../shared/constants';
import { Duration, TENANT_PATTERN } from '../shared/schemas';
import { durationToMs } from '../shared/plain';
import { area, hostList, int, namedNumbers, optionalString, optionalUrl, port } from './setting-kit';

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

/** A per-tenant quota (TENANT_MAX_*): a count, `0` for no limit. */
const quota = (fallback: number, description: string) =>
  int(0, Number.MAX_SAFE_INTEGER).default(fallback).describe(`${description}; \`0\`: no limit`);

/** The CLI reaches the API where it listens; an API listening on every address is reached on loopback. */
const reachable = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);

const apiSettings = {
  API_HOST: z.string().default('127.0.0.1').describe('address the HTTP API listens on'),
  API_PORT: port.default(3000).describe('port the HTTP API listens on'),
  API_KEYS: apiKeyTable.describe(
    '`key=tenant,...`; keys of at least 16 characters (more with `deep-research keys create`); none: see [Keys and tenants](http-api.md#keys-and-tenants)',
  ),
  API_ALLOWED_HOSTS: hostList.describe(
    "`host` or `host:port` names the API answers to besides loopback ones (`localhost`, `127.0.0.1`, `[::1]`): without keys the `Host` header must be one of them (a page of another name that resolves to this machine, DNS rebinding, gets 421) and a browser's POST, PUT, PATCH or DELETE must come from the API's own page or a page of a listed name; with keys the `Host` is checked only when this is set. Health checks answer to any name",
  ),
  RATE_LIMIT_SUBMITS: int(1, 100_000).default(30).describe('new runs a tenant may submit per minute (per API process)'),
  RATE_LIMIT_READS: int(1, 1_000_000).default(1_200).describe('other requests a tenant may make per minute (per API process)'),
  RATE_LIMIT_UPLOADS: int(1, 100_000).default(60).describe('documents a tenant may add to its collections per minute (per API process)'),
  CHAT_COMPLETION_WAIT: Duration.default('5m').describe(
    'how long a non-streaming `POST /v1/chat/completions` waits for the report before it answers with the run id and where to fetch it ([OpenAI-compatible endpoint](http-api.md#openai-compatible-endpoint))',
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
  TENANT_MAX_RUNS: int(0, 10_000)
    .default(0)
    .describe("runs of one tenant researching at once (`0`: no limit); more wait in the tenant's admission queue and show their place"),
  TENANT_MAX_SCHEDULES: quota(20, 'schedules a tenant may have (`403` above it)'),
  TENANT_MAX_COLLECTIONS: quota(50, 'collections a tenant may have (`403` above it)'),
  TENANT_MAX_DOCUMENTS: quota(5_000, "documents across a tenant's collections and sessions (`403` above it)"),
  TENANT_MAX_STORED_BYTES: quota(2_000_000_000, "bytes of document files a tenant's collections may hold (`403` above it)"),
  TENANT_MAX_STREAMS: quota(20, 'event streams a tenant may keep open at once, per API process (`429` above it)'),
  TENANT_MAX_RUNS_IN_FLIGHT: quota(
    100,
    'research runs of a tenant started and not yet ended, queued and waiting for review included (`429` above it); `TENANT_MAX_RUNS` limits those researching at once',
  ),
  RUN_MAX_TOKENS: int(0, 1_000_000_000)
    .default(400_000)
    .describe(
      'token budget (prompt and completion) of a run whose request sets no `options.maxTokens`, and the most a request may set (`0`: none); when it is spent the run stops researching and writes its report from what it has',
    ),
  RUN_MIN_OUTAGE: Duration.default(DEFAULT_MIN_OUTAGE).describe(
    'the shortest `options.maxOutage` a request may set (`400 max_outage_too_short` below it): a shorter one would fail a run on the first slow answer of the LLM or a blip of PostgreSQL',
  ),
  /** The shortest interval a schedule may repeat at. */
  SCHEDULE_MIN_INTERVAL: Duration.default('1m').describe(
    'the shortest interval a schedule may repeat at: its `every`, and the shortest gap between the start times of its `cron`',
  ),
  /** Signs webhook deliveries (HMAC-SHA256); without it, requests that ask for a webhook are refused. */
  WEBHOOK_SECRET: optionalString
    .refine((v) => v === undefined || v.length >= 16, 'WEBHOOK_SECRET must be at least 16 characters')
    .describe('signs webhook deliveries (HMAC-SHA256; at least 16 characters); without it, webhooks are refused'),
  /** Hosts (`host` or `host:port`) a webhook may reach although private, as CRAWL_ALLOW_HOSTS. */
  WEBHOOK_ALLOW_HOSTS: hostList.describe('hosts (`host` or `host:port`) a webhook may reach although private'),
  WEBHOOK_TIMEOUT_MS: int(500, 120_000).default(10_000).describe('how long one webhook delivery attempt may take'),
  /** Where the CLI's client commands find the API, and the key they send. */
  DEEP_RESEARCH_API: optionalUrl.describe(
    "where the CLI's client commands find the API; unset: `http://127.0.0.1:3000` (from `API_HOST` and `API_PORT`)",
  ),
  DEEP_RESEARCH_KEY: optionalString.describe("the key the CLI's client commands send"),
};

export const apiArea = area('API, tenants, schedules and webhooks', apiSettings, (v) => ({
  api: {
    host: v.API_HOST,
    port: v.API_PORT,
    /** API_KEYS: keys given in the environment, each with its tenant (more live in PostgreSQL). */
    keys: v.API_KEYS,
    /** API_ALLOWED_HOSTS: names answered besides loopback ones (src/api/host-guard.ts). */
    allowedHosts: v.API_ALLOWED_HOSTS,
    /** Fair sharing between tenants: fairness weights, priority keys, runs at once per tenant (0: no limit). */
    fairness: { weights: v.TENANT_WEIGHTS, priorities: v.TENANT_PRIORITIES, maxRuns: v.TENANT_MAX_RUNS },
    /** Requests per minute and tenant: those that start runs, documents added, and everything else. */
    rateLimits: { submits: v.RATE_LIMIT_SUBMITS, reads: v.RATE_LIMIT_READS, uploads: v.RATE_LIMIT_UPLOADS },
    /** What one tenant may hold and do at once (TENANT_MAX_*, enforced by src/api/quotas.ts; 0 turns one off). */
    quotas: {
      schedules: v.TENANT_MAX_SCHEDULES,
      collections: v.TENANT_MAX_COLLECTIONS,
      /** Documents across all of the tenant's collections and sessions. */
      documents: v.TENANT_MAX_DOCUMENTS,
      /** Bytes of stored document files across the tenant's collections. */
      storedBytes: v.TENANT_MAX_STORED_BYTES,
      /** Event streams (server-sent events) open at once, per API process. */
      streams: v.TENANT_MAX_STREAMS,
      /** Research runs started and not yet ended (queued, reviewing or researching). */
      runsInFlight: v.TENANT_MAX_RUNS_IN_FLIGHT,
    },
    /** RUN_MAX_TOKENS: a run's token budget when its request sets none, and the most one may set (0: none). */
    runMaxTokens: v.RUN_MAX_TOKENS,
    /** RUN_MIN_OUTAGE: the shortest options.maxOutage a request may set. */
    minOutage: v.RUN_MIN_OUTAGE,
    /** CHAT_COMPLETION_WAIT: how long a non-streaming chat completion waits for the report. */
    chatWaitMs: durationToMs(v.CHAT_COMPLETION_WAIT),
  },
  /** The CLI's client commands: the API's URL and the key to send. */
  client: { api: v.DEEP_RESEARCH_API ?? `http://${reachable(v.API_HOST)}:${v.API_PORT}`, key: v.DEEP_RESEARCH_KEY },
  webhook: { secret: v.WEBHOOK_SECRET, allowHosts: v.WEBHOOK_ALLOW_HOSTS, timeoutMs: v.WEBHOOK_TIMEOUT_MS },
  /** Recurring research (POST /v1/schedules). */
  schedules: { minInterval: v.SCHEDULE_MIN_INTERVAL },
}));
