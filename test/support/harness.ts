// A worker on a unique task queue, the HTTP app, a pool on the run's database and a scripted LLM:
// the pieces a workflow or API test needs, against the suite's real Temporal and PostgreSQL.
import { createEmbedder } from '../../src/activities/knowledge/embed';
import { createRetriever } from '../../src/activities/knowledge/retrieve';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type express from 'express';
import type pg from 'pg';
import { createApp } from '../../src/api/app';
import { modelCatalog } from '../../src/api/model-check';
import { createResearchService } from '../../src/api/research-service';
import { createKnowledgeService } from '../../src/api/knowledge-service';
import { createScheduleService } from '../../src/api/schedule-service';
import { durationToMs } from '../../src/shared/plain';
import { createStore } from '../../src/activities/store';
import { loadConfig, llmConfigured, type Config } from '../../src/config';
import { createLogger } from '../../src/infra/logger';
import { createPool } from '../../src/infra/postgres';
import { LLM_NOT_CONFIGURED_MESSAGE } from '../../src/shared/errors';
import { createWorker, type WorkerGroup } from '../../src/worker';
import { ScriptedLlmServer } from './llm-server';
import { FakeSearxng } from './search-server';
import { FixtureSite } from './fixture-site';
import { searchResults } from './research-script';
import { databaseUrl, temporalAddress, workflowBundle } from './services';

export interface Harness {
  config: Config;
  llm: ScriptedLlmServer;
  search: FakeSearxng;
  site: FixtureSite;
  pool: pg.Pool;
  client: Client;
  taskQueue: string;
  worker: WorkerGroup;
  app: express.Express;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Environment on top of the test defaults (e.g. to leave the LLM unconfigured). */
  env?: Record<string, string | undefined>;
  /** Another PostgreSQL than the suite's (a cluster a fault test stops and starts). */
  databaseUrl?: string;
}

export function testConfig(llmUrl: string | undefined, extra: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ...(llmUrl ? { OPENAI_BASE_URL: llmUrl, OPENAI_API_KEY: 'sk-test-secret' } : {}),
    LLM_MODEL: 'scripted-default',
    LLM_MODEL_COORDINATOR: 'scripted-coordinator',
    LLM_TIMEOUT_MS: '5000',
    LLM_PRICES: 'scripted-coordinator=1/2',
    // Outside calls are retried without an attempt limit: fast retries keep fault tests short.
    RETRY_INITIAL_INTERVAL: '200ms',
    RETRY_MAX_INTERVAL: '2s',
    WORKER_SHUTDOWN_GRACE_MS: '5000',
    LLM_QUEUE_RATE: '200',
    // Tests poll the status many times a second.
    RATE_LIMIT_READS: '1000000',
    RATE_LIMIT_SUBMITS: '100000',
    RATE_LIMIT_UPLOADS: '100000',
    // What a tenant holds is counted across the one Temporal server and database the whole suite
    // shares, where earlier test files leave schedules and collections of tenant "default": no
    // quotas on those unless a test sets them (test/api/quotas.test.ts does, for tenants of its own).
    TENANT_MAX_SCHEDULES: '0',
    TENANT_MAX_COLLECTIONS: '0',
    TENANT_MAX_DOCUMENTS: '0',
    TENANT_MAX_STORED_BYTES: '0',
    ...extra,
  });
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const address = temporalAddress();
  const dbUrl = opts.databaseUrl ?? databaseUrl();
  if (!address || !dbUrl) throw new Error('harness needs Temporal and PostgreSQL');
  const llm = await new ScriptedLlmServer().start();
  const site = await new FixtureSite().start();
  const search = await new FakeSearxng({}, searchResults(site.url)).start();
  const config = testConfig(llm.url, {
    SEARXNG_URL: search.url,
    SEARCH_PROVIDERS: 'searxng',
    CRAWL_ALLOW_HOSTS: new URL(site.url).host,
    ...opts.env,
  });
  const pool = createPool(dbUrl, 5);
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const nativeConnection = await NativeConnection.connect({ address });
  const taskQueue = `test-${randomUUID()}`;
  const worker = await createWorker({ config, connection: nativeConnection, pool, taskQueue, workflowBundle: workflowBundle() });
  const running = worker.run();
  const log = createLogger('warn');
  const store = createStore(pool);
  const research = createResearchService({
    client,
    taskQueue,
    store,
    retry: config.retry,
    llm: config.llm,
    modelCatalog: modelCatalog(config.llm),
    webhook: { enabled: Boolean(config.webhook.secret), allowHosts: config.webhook.allowHosts },
    fairness: config.api.fairness,
    searchProviders: config.search.providers,
    quotas: config.api.quotas,
    runMaxTokens: config.api.runMaxTokens,
    minOutage: config.api.minOutage,
  });
  const app = createApp({
    research,
    schedules: createScheduleService({
      client,
      research,
      minIntervalMs: durationToMs(config.schedules.minInterval),
      reports: store.scheduledReports,
      quotas: config.api.quotas,
    }),
    knowledge: {
      service: createKnowledgeService({
        client,
        taskQueue,
        store,
        limits: config.knowledge,
        retry: config.retry,
        quotas: config.api.quotas,
      }),
      maxFileBytes: config.knowledge.maxFileBytes,
      retrieve: createRetriever({ kb: store.knowledge, embedder: createEmbedder(config.knowledge.embedding) }),
    },
    searchPreferences: { preferences: store.searchPreferences, configuredProviders: config.search.providers },
    // Like the dev default (no keys: open) unless the test gives API_KEYS.
    auth: { envKeys: config.api.keys, table: store.apiKeys, open: config.api.keys.length === 0 },
    keys: store.apiKeys,
    memory: store.memory,
    events: store.events,
    idempotencyKeys: store.idempotencyKeys,
    ...(config.api.chatWaitMs !== undefined ? { chat: { waitMs: config.api.chatWaitMs } } : {}),
    rateLimits: config.api.rateLimits,
    quotas: config.api.quotas,
    readiness: {
      temporal: async () => {
        await client.workflowService.describeNamespace({ namespace: 'default' });
      },
      postgres: async () => {
        await pool.query('SELECT 1');
      },
    },
    log,
    preflight: () => (llmConfigured(config) ? undefined : LLM_NOT_CONFIGURED_MESSAGE),
  });
  return {
    config,
    llm,
    search,
    site,
    pool,
    client,
    taskQueue,
    worker,
    app,
    close: async () => {
      worker.shutdown();
      await running;
      await nativeConnection.close();
      await connection.close();
      await pool.end();
      await llm.close();
      await search.close();
      await site.close();
    },
  };
}
