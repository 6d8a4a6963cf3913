// The stack the load and soak benches drive: a fixture site, a scripted model at a fixed latency, a
// SearXNG-shaped search server, and `deep-research dev` on fresh ports and a fresh data directory
// (on a database of its own under --pg), with the limits that would measure the fakes instead of
// the service lifted. Split, the service is the production shape instead: `deep-research worker`
// and `deep-research api`, each its own process, on a Temporal server the caller started.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findTemporalCli, startTemporalDevServer } from '../../src/infra/temporal-cli';
import { FixtureSite } from '../../test/support/fixture-site';
import { ScriptedLlmServer } from '../../test/support/llm-server';
import { searchResults } from '../../test/support/research-script';
import { FakeSearxng } from '../../test/support/search-server';
import { freePort, spawnCli, type Spawned } from '../../test/support/spawn';
import { benchDatabase } from './database';

export interface BenchStackOptions {
  /** The data directory's name prefix under the system's temporary directory. */
  name: string;
  latencyMs: number;
  /** PostgreSQL server URL; undefined: the embedded database. */
  pg?: string | undefined;
  /** Model calls and searches a second the queues and the search provider allow. */
  callRate?: string;
  /** Set on the dev process after the bench's own settings. */
  env?: Record<string, string>;
  nodeArgs?: string[];
  /** `worker` and `api` as two processes on this server (and the PostgreSQL of `pg`), instead of `dev`. */
  split?: { temporalAddress: string; namespace: string };
}

export interface BenchStack {
  /** The process that runs the worker: `dev`, or `worker` when split. */
  dev: Spawned;
  /** The API's own process, when split. */
  api?: Spawned;
  apiUrl: string;
  temporalAddress: string;
  dir: string;
  /** The service's own database on the PostgreSQL of `pg` (undefined: the embedded database). */
  database?: string;
  llm: ScriptedLlmServer;
  /** Stops the fakes and drops the bench's database (the dev process is the caller's to stop). */
  close(): Promise<void>;
}

/** A Temporal dev server as `dev` starts one (its search attributes, dynamic config and SQLite
 *  settings), on a fresh port and database, for a bench that runs its own workers; `stop` also
 *  removes its database. */
export async function startBenchDevServer(opts: {
  namespace: string;
  metricsPort?: number | undefined;
}): Promise<{ address: string; namespace: string; pid: number; stop(): Promise<void> }> {
  const cli = findTemporalCli({ envPath: process.env.PATH, explicitPath: process.env.TEMPORAL_CLI_PATH, install: true });
  if (!cli) throw new Error('no Temporal CLI (npm run temporal:install)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-temporal-'));
  const quiet = { debug: () => {}, info: () => {}, warn: console.warn, error: console.error } as never;
  const server = await startTemporalDevServer({
    cliPath: cli.path,
    port: await freePort(),
    uiPort: undefined,
    metricsPort: opts.metricsPort,
    dbFile: path.join(dir, 'temporal.db'),
    namespace: opts.namespace,
    log: quiet,
  });
  return {
    address: server.address,
    namespace: opts.namespace,
    pid: server.process.pid!,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `deep-research dev` on fresh ports, with its data in `dir`, the given settings on top. */
export async function spawnDev(
  dir: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  root?: string,
): Promise<{ dev: Spawned; apiUrl: string; temporalAddress: string }> {
  const cli = findTemporalCli({ envPath: process.env.PATH, explicitPath: process.env.TEMPORAL_CLI_PATH, install: true });
  if (!cli) throw new Error('no Temporal CLI (npm run temporal:install)');
  const [tp, up, ap, pp] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const dev = spawnCli(
    ['dev'],
    {
      DATA_DIR: dir,
      TEMPORAL_CLI_PATH: cli.path,
      TEMPORAL_PORT: String(tp),
      TEMPORAL_UI_PORT: String(up),
      API_PORT: String(ap),
      PGLITE_PORT: String(pp),
      ...env,
    },
    nodeArgs,
    root,
  );
  return { dev, apiUrl: `http://127.0.0.1:${ap}`, temporalAddress: `127.0.0.1:${tp}` };
}

export async function startBenchStack(opts: BenchStackOptions): Promise<BenchStack> {
  const site = await new FixtureSite().start();
  const llm = await new ScriptedLlmServer().start();
  llm.latencyMs = opts.latencyMs;
  const search = await new FakeSearxng({}, searchResults(site.url)).start();
  const dir = mkdtempSync(path.join(os.tmpdir(), `${opts.name}-`));
  const db = opts.pg ? await benchDatabase(opts.pg) : undefined;
  const close = async () => {
    await db?.drop();
    await Promise.all([llm.close(), search.close(), site.close()]);
  };
  const rate = opts.callRate ?? '1000';
  const env: Record<string, string> = {
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: 'sk-bench',
    LOG_LEVEL: 'warn',
    SEARCH_PROVIDERS: 'searxng',
    SEARXNG_URL: search.url,
    CRAWL_ALLOW_HOSTS: '127.0.0.1',
    RATE_LIMIT_SUBMITS: '100000',
    RATE_LIMIT_READS: '1000000',
    // Hundreds of one tenant's runs at once, each followed by its event stream: no per-tenant quota on those.
    TENANT_MAX_RUNS_IN_FLIGHT: '0',
    TENANT_MAX_STREAMS: '0',
    LLM_QUEUE_RATE: rate,
    SEARCH_RATE_LIMITS: `searxng=${rate}`,
    ...(db ? { DATABASE_URL: db.url } : {}),
    ...opts.env,
  };
  const started: Spawned[] = [];
  const ready = async (p: Spawned, line: RegExp) => {
    started.push(p);
    await p.waitFor(line, 180_000).catch(async (err: unknown) => {
      for (const s of started) s.child.kill('SIGKILL');
      await close();
      throw err;
    });
  };
  if (opts.split) {
    if (!db) {
      await close();
      throw new Error('split needs PostgreSQL (--pg): the embedded database lives in `dev`');
    }
    const shared = { ...env, DATA_DIR: dir, TEMPORAL_ADDRESS: opts.split.temporalAddress, TEMPORAL_NAMESPACE: opts.split.namespace };
    // The worker first: it applies the database's migrations before the API reads the tables.
    const worker = spawnCli(['worker'], { ...shared, METRICS_PORT: '0' }, opts.nodeArgs ?? []);
    await ready(worker, /worker ready on task queue/);
    const port = await freePort();
    const api = spawnCli(['api'], { ...shared, API_HOST: '127.0.0.1', API_PORT: String(port) }, opts.nodeArgs ?? []);
    await ready(api, /API listening on/);
    return {
      dev: worker,
      api,
      apiUrl: `http://127.0.0.1:${port}`,
      temporalAddress: opts.split.temporalAddress,
      dir,
      database: db.name,
      llm,
      close,
    };
  }
  const { dev, apiUrl, temporalAddress } = await spawnDev(dir, env, opts.nodeArgs ?? []);
  await ready(dev, /deep-research is running/);
  return { dev, apiUrl, temporalAddress, dir, ...(db ? { database: db.name } : {}), llm, close };
}
