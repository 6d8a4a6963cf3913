// Composition root for the HTTP API.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { createApp } from './api/app';
import { isLoopback } from './api/auth';
import { createResearchService } from './api/research-service';
import { createKnowledgeService } from './api/knowledge-service';
import { createEmbedder } from './activities/knowledge/embed';
import { createRetriever } from './activities/knowledge/retrieve';
import { createScheduleService } from './api/schedule-service';
import { durationToMs } from './shared/plain';
import { createStore } from './activities/store';
import { listedModels } from './activities/knowledge/probe';
import { modelCatalog } from './api/model-check';
import type { Logger } from './infra/logger';
import type { Config } from './config';
import type { RetrySettings } from './shared/schemas';

/** What a start whose API port is taken is told to do. */
export const API_PORT_IN_USE = 'the HTTP API; set API_PORT to a free port, or stop what listens there';

/**
 * The API's HTTP server. An idle kept-alive connection stays open for 65 s, not Node's 5 s: a
 * client or proxy that reuses a connection the server is closing at that moment gets a reset
 * instead of an answer, and the usual proxies keep idle connections for 60 s (so the server must
 * outlast them). The headers' timeout must exceed it, or Node closes such connections first.
 */
export function apiServer(app: http.RequestListener): http.Server {
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return server;
}

export interface ApiServerDeps {
  client: Client;
  pool: pg.Pool;
  taskQueue: string;
  namespace: string;
  api: Config['api'];
  log: Logger;
  preflight?: () => string | undefined;
  retry?: RetrySettings;
  /** The LLM settings: prices for cost budgets, and the models a request may name. */
  llm?: Config['llm'];
  /** WEBHOOK_*: webhooks are refused unless there is a secret to sign them with. */
  webhook?: Config['webhook'];
  knowledge: Config['knowledge'];
  /** SCHEDULE_MIN_INTERVAL. */
  schedules?: Config['schedules'];
  /** SEARCH_PROVIDERS: what runs and tenants may choose from (absent: not checked, no preference routes). */
  searchProviders?: string[];
  /** `dev`'s API: on loopback, a request without a key acts for tenant `default` even once keys
   *  were made with `keys create`, so creating one (for an OpenAI client, say) never locks out the
   *  runs made before it. Not with API_KEYS: the operator asked for keys. */
  localOpen?: boolean;
}

export interface ApiServer {
  url: string;
  /** True when a request without a key is let in (as tenant `default`): loopback only, with no
   *  keys anywhere, or on `dev`'s API (localOpen). */
  open: boolean;
  server: http.Server;
  close(): Promise<void>;
}

/** Whether a request without a key is let in (as tenant default): only on loopback, when no key
 *  exists anywhere, or on dev's API (localOpen) without API_KEYS. No key on another address
 *  refuses to start. */
async function openness(deps: ApiServerDeps, store: ReturnType<typeof createStore>): Promise<{ open: boolean; keyless: boolean }> {
  const { host, keys } = deps.api;
  const keyless = keys.length === 0 && (await store.apiKeys.countLive()) === 0;
  if (keyless && !isLoopback(host)) {
    throw new Error(
      `the API would listen on ${host} without any API key, open to anyone who can reach it: set API_KEYS (key=tenant,...) ` +
        'or create a key with `deep-research keys create --tenant <name>`, or listen on 127.0.0.1',
    );
  }
  // dev stays open once keys were made with `keys create`; API_KEYS set by the operator is a
  // choice to need a key, and the 401 then says how to get one.
  return { open: isLoopback(host) && (keyless || (Boolean(deps.localOpen) && keys.length === 0)), keyless };
}

export async function startApiServer(deps: ApiServerDeps): Promise<ApiServer> {
  const store = createStore(deps.pool);
  const { host, port, keys, rateLimits } = deps.api;
  const { open, keyless } = await openness(deps, store);
  const research = createResearchService({
    client: deps.client,
    taskQueue: deps.taskQueue,
    store,
    ...(deps.retry ? { retry: deps.retry } : {}),
    ...(deps.llm ? { llm: deps.llm, modelCatalog: modelCatalog(deps.llm, () => listedModels({ llm: deps.llm! })) } : {}),
    webhook: { enabled: Boolean(deps.webhook?.secret), allowHosts: deps.webhook?.allowHosts ?? [] },
    fairness: deps.api.fairness,
    ...(deps.searchProviders ? { searchProviders: deps.searchProviders } : {}),
    quotas: deps.api.quotas,
    runMaxTokens: deps.api.runMaxTokens,
    minOutage: deps.api.minOutage,
  });
  const wakeups = store.events.wakeups(deps.log);
  const app = createApp({
    auth: { envKeys: keys, table: store.apiKeys, open },
    allowedHosts: deps.api.allowedHosts ?? [],
    keys: store.apiKeys,
    memory: store.memory,
    events: store.events,
    idempotencyKeys: store.idempotencyKeys,
    eventStream: { wakeups },
    ...(deps.api.chatWaitMs !== undefined ? { chat: { waitMs: deps.api.chatWaitMs } } : {}),
    rateLimits,
    quotas: deps.api.quotas,
    research,
    schedules: createScheduleService({
      client: deps.client,
      research,
      minIntervalMs: durationToMs(deps.schedules?.minInterval ?? '1m'),
      reports: store.scheduledReports,
      quotas: deps.api.quotas,
    }),
    knowledge: {
      service: createKnowledgeService({
        client: deps.client,
        taskQueue: deps.taskQueue,
        store,
        limits: deps.knowledge,
        ...(deps.retry ? { retry: deps.retry } : {}),
        quotas: deps.api.quotas,
      }),
      maxFileBytes: deps.knowledge.maxFileBytes,
      retrieve: createRetriever({ kb: store.knowledge, embedder: createEmbedder(deps.knowledge.embedding) }),
    },
    ...(deps.searchProviders
      ? { searchPreferences: { preferences: store.searchPreferences, configuredProviders: deps.searchProviders } }
      : {}),
    readiness: {
      temporal: async () => {
        await deps.client.workflowService.describeNamespace({ namespace: deps.namespace });
      },
      postgres: () => store.ping(),
    },
    log: deps.log,
    ...(deps.preflight ? { preflight: deps.preflight } : {}),
  });
  const server = apiServer(app);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    // Its LISTEN connection holds a client of the pool: left open, the pool's end (and with it a
    // failed start's shutdown) would wait for it forever.
    await wakeups.close();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new Error(`port ${port} on ${host} is already in use (${API_PORT_IN_USE})`);
    throw err;
  }
  const addr = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  if (keyless) deps.log.warn('the API runs without keys: anyone on this machine can use it (create one with `deep-research keys create`)');
  else if (open)
    deps.log.info("dev's API on loopback: a request without a key acts for tenant default, one with a key for the key's tenant");
  return {
    url: `http://${shown}:${addr.port}`,
    open,
    server,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await wakeups.close();
    },
  };
}
