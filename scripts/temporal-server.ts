// The real Temporal server (not the CLI's dev server): go.temporal.io/server at a pinned version,
// built from the Go module proxy into .tools/, on this machine's PostgreSQL (the postgres12
// persistence plugin and SQL visibility), its schemas set up by its own temporal-sql-tool (once
// per schema version, into two template databases each server's databases are copies of).
// Tests import startTemporalServer; `.ci/run` installs it.
//
//   node bin/run-ts.mjs scripts/temporal-server.ts [--port 7233] [--namespace default]
//   node bin/run-ts.mjs scripts/temporal-server.ts --install-only      build, do not serve
//
// Serving takes the admin URL from TEST_DATABASE_ADMIN_URL (a role that may CREATE DATABASE);
// its two databases are dropped again at Ctrl-C (the templates, tsrv_tpl_*, stay).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Connection, type TLSConfig } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import proto from '@temporalio/proto';
import pg from 'pg';
import { TOOLS_DIR } from '../src/infra/paths';
import { withBuildLock } from './build-lock';
import { go } from './go';
import { stopOnSignals } from './stop-on-signals';
import { FAIRNESS_DYNAMIC_CONFIG } from '../src/infra/temporal-cli';
import { SEARCH_ATTRIBUTES } from '../src/shared/constants';

/** What `go` builds here, for its errors. */
const TOOL = 'the Temporal server';
export const TEMPORAL_SERVER_VERSION = '1.32.1';
const MODULE = 'go.temporal.io/server';
const SERVER_DIR = path.join(TOOLS_DIR, `temporal-server-${TEMPORAL_SERVER_VERSION}`);
const BIN_DIR = path.join(SERVER_DIR, 'bin');
const SERVER_PATH = path.join(BIN_DIR, 'server');
const SQL_TOOL_PATH = path.join(BIN_DIR, 'temporal-sql-tool');
/** Holds temporal/versioned and visibility/versioned: the module's schema/postgresql/v12. */
const SCHEMA_DIR = path.join(SERVER_DIR, 'schema');
const BUILT_MARKER = path.join(SERVER_DIR, 'built.json');

export interface TemporalServerPaths {
  server: string;
  sqlTool: string;
  schemaDir: string;
}

type Log = (line: string) => void;
const defaultLog: Log = (line) => console.error(`temporal-server: ${line}`);

function runsAsVersion(file: string): boolean {
  const r = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 && r.stdout.includes(TEMPORAL_SERVER_VERSION);
}

function builtForThisPin(): boolean {
  try {
    return (JSON.parse(readFileSync(BUILT_MARKER, 'utf8')) as { version?: string }).version === TEMPORAL_SERVER_VERSION;
  } catch {
    return false;
  }
}

/** The binaries and schemas when they are in place (nothing is built), else undefined. */
export function installedTemporalServer(): TemporalServerPaths | undefined {
  if (!builtForThisPin() || !existsSync(path.join(SCHEMA_DIR, 'temporal', 'versioned'))) return undefined;
  if (!runsAsVersion(SERVER_PATH) || !runsAsVersion(SQL_TOOL_PATH)) return undefined;
  return { server: SERVER_PATH, sqlTool: SQL_TOOL_PATH, schemaDir: SCHEMA_DIR };
}

/**
 * Builds both binaries into .tools/ when they are missing and copies the PostgreSQL schemas out of
 * the module cache. built.json is written last, so a half-finished install is done again.
 */
export async function ensureTemporalServer(log: Log = defaultLog): Promise<TemporalServerPaths> {
  const ready = installedTemporalServer();
  if (ready) return ready;
  // `.ci/run` starts this build in the background; the tests that need the server ask again and wait for it.
  return withBuildLock(`${SERVER_DIR}.lock`, TOOL, log, async () => installedTemporalServer() ?? (await build(log)));
}

async function build(log: Log): Promise<TemporalServerPaths> {
  const t0 = Date.now();
  rmSync(BUILT_MARKER, { force: true });
  mkdirSync(BIN_DIR, { recursive: true });
  // GOTOOLCHAIN=local: the module pins its Go version (1.32.1 wants go1.26.8); never download
  // another toolchain behind the caller's back, fail with Go's message instead.
  log(`building ${MODULE}@v${TEMPORAL_SERVER_VERSION} with go install (about 3-4 min on 2 cores with an empty cache)`);
  const progress = setInterval(() => log('still building …'), 60_000);
  try {
    // No symbol table or DWARF (the linker's slowest part for a binary this size); a panic's stack still names its functions.
    await go(
      TOOL,
      [
        'install',
        '-trimpath',
        '-ldflags=-s -w',
        `${MODULE}/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
        `${MODULE}/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
      ],
      {
        GOBIN: BIN_DIR,
        // The compiler collects garbage less often (it has memory to spare here): a shorter build.
        GOGC: '400',
      },
    );
  } finally {
    clearInterval(progress);
  }
  // `go install` names the schema tool after its package directory; the project calls it by the
  // name Temporal's docs and images use.
  renameSync(path.join(BIN_DIR, 'sql'), SQL_TOOL_PATH);
  const modCache = (await go(TOOL, ['env', 'GOMODCACHE'])).trim();
  const source = path.join(modCache, `${MODULE}@v${TEMPORAL_SERVER_VERSION}`, 'schema', 'postgresql', 'v12');
  rmSync(SCHEMA_DIR, { recursive: true, force: true });
  for (const kind of ['temporal', 'visibility']) cpSync(path.join(source, kind), path.join(SCHEMA_DIR, kind), { recursive: true });
  // The module cache is read-only; the copy should not be (rm -rf .tools/ must work).
  spawnSync('chmod', ['-R', 'u+w', SCHEMA_DIR]);
  for (const file of [SERVER_PATH, SQL_TOOL_PATH]) {
    if (!runsAsVersion(file)) throw new Error(`${file} was built but does not report version ${TEMPORAL_SERVER_VERSION}`);
  }
  writeFileSync(BUILT_MARKER, JSON.stringify({ version: TEMPORAL_SERVER_VERSION, go: (await go(TOOL, ['version'])).trim() }, null, 2));
  log(`built in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${SERVER_DIR}`);
  return { server: SERVER_PATH, sqlTool: SQL_TOOL_PATH, schemaDir: SCHEMA_DIR };
}

export type SearchAttributeType = 'Keyword' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

export interface TemporalServerOptions {
  /** postgres://user:pass@host:port/postgres of a role that may CREATE DATABASE. */
  adminUrl: string;
  /** Databases <prefix>_temporal and <prefix>_visibility (default: a random 'tsrv_xxxxxxxx'). */
  databasePrefix?: string;
  /** Frontend gRPC port; 0/undefined picks a free one (the other services always get free ones). */
  port?: number;
  /** Registered at start with a retention of one day; default 'default'. */
  namespace?: string;
  searchAttributes?: Record<string, SearchAttributeType>;
  /** Frontend TLS; with clientCaFile, client certificates signed by it are required (mTLS). */
  tls?: { certFile: string; keyFile: string; clientCaFile?: string };
  /** Extra dynamic config keys (global values), over the defaults below. */
  dynamicConfig?: Record<string, unknown>;
  /** Everything the server prints is appended here (else only a tail is kept for errors). */
  logFile?: string;
  /** Serves the server's own Prometheus metrics on this loopback port (bench:load and
   *  bench:temporal-floor read its requests and persistence calls per run). */
  metricsPort?: number;
  /** History shards (4 by default); fixed when the server first starts on its databases. */
  historyShards?: number;
}

export interface RunningTemporalServer {
  address: string;
  namespace: string;
  pid: number;
  /** Default SIGKILL; resolves when the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts again on the same databases and ports after kill(); resolves when the frontend serves. */
  start(): Promise<void>;
  /** SIGTERM, then drop both databases. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

/**
 * A cluster's own setting, over the CLI's start-dev default below: search attributes read from the
 * server's cache instead of from the database at every read. With the start-dev default the server
 * read its cluster metadata from PostgreSQL 38 times per run of the standard workload's shape
 * (`bench:temporal-floor --temporal real --temporal-metrics`), at every write of a run's state.
 * The benches that measure the production shape give it; the tests keep start-dev's (an attribute
 * added while the server runs is seen at once, as tests of that expect).
 */
export const CLUSTER_SEARCH_ATTRIBUTE_CACHE = { 'system.forceSearchAttributesCacheRefreshOnRead': false };

/**
 * What the dev server is given (the CLI's defaults for `start-dev` and the project's
 * dynamicConfigArgs()), so tests see one behaviour on both, plus what a server that registers its
 * namespace after starting needs.
 */
export function defaultDynamicConfig(): Record<string, unknown> {
  const fairness = Object.fromEntries(
    FAIRNESS_DYNAMIC_CONFIG.map((kv) => {
      const [key, value] = kv.split(/=(.*)/s) as [string, string];
      return [key, JSON.parse(value) as unknown];
    }),
  );
  return {
    // On by default in 1.32; stated so an older default cannot turn the review update off.
    'frontend.enableUpdateWorkflowExecution': true,
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted': true,
    'frontend.workerVersioningWorkflowAPIs': true,
    'system.enableDeploymentVersions': true,
    'matching.wv.VersionDrainageStatusRefreshInterval': '5s',
    'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '5s',
    // The CLI's start-dev defaults: new search attributes and Nexus endpoints visible at once, and
    // persistence limits raised to pay for those uncached reads.
    'system.forceSearchAttributesCacheRefreshOnRead': true,
    'system.forceNexusEndpointRefreshOnRead': true,
    'frontend.persistenceMaxQPS': 10_000,
    'history.persistenceMaxQPS': 45_000,
    // The dev server's own: visibility reads 100/s per namespace (the default is 10: tests that
    // poll the run list would be throttled), a smaller host-level mutable-state cache.
    'frontend.namespaceRPS.visibility': 100,
    'history.hostLevelCacheMaxSize': 8096,
    ...fairness,
    // The dev server writes its namespaces into the database before it starts; here the namespace
    // is registered on a running server, and each service sees it at its next cache refresh (10 s).
    'system.namespaceCacheRefreshInterval': '1s',
  };
}

// The PostgreSQL schema stores each service's RPC port in cluster_membership.rpc_port, a SMALLINT:
// a port above 32767 fails the membership heartbeat and the server exits at start. The kernel's
// ephemeral ports (listen on 0) are 32768 and up, so free ports are picked below that.
const PORT_RANGE = { min: 20_000, max: 32_767 };
const pickedPorts = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, HOST, () => srv.close(() => resolve(true)));
  });
}

async function freePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = PORT_RANGE.min + Math.floor(Math.random() * (PORT_RANGE.max - PORT_RANGE.min + 1));
    if (pickedPorts.has(port) || !(await canListen(port))) continue;
    pickedPorts.add(port);
    return port;
  }
  throw new Error(`no free port between ${PORT_RANGE.min} and ${PORT_RANGE.max}`);
}

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

interface Db {
  host: string;
  port: number;
  user: string;
  password: string;
}

function dbFromUrl(adminUrl: string): Db {
  const u = new URL(adminUrl);
  return {
    host: u.hostname || HOST,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  };
}

async function adminQuery(adminUrl: string, sql: string, timeoutMs?: number): Promise<void> {
  const c = new pg.Client({
    connectionString: adminUrl,
    connectionTimeoutMillis: 5_000,
    ...(timeoutMs ? { query_timeout: timeoutMs } : {}),
  });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/**
 * Drops a database, FORCE ending the sessions still on it. Cleanup runs beside other tests that
 * hold many connections: a refused or slow try (too many clients, a busy machine, an autovacuum
 * worker that PostgreSQL 15 will not let FORCE end for a role without pg_signal_backend) is tried
 * again until `deadline` (80 s from now by default), each try bounded (a drop waits for a
 * checkpoint), before it fails saying which statement and why.
 */
export async function dropDatabase(adminUrl: string, name: string, deadline = Date.now() + 80_000): Promise<void> {
  const sql = `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`;
  for (let attempt = 1; ; attempt++) {
    const started = Date.now();
    try {
      await adminQuery(adminUrl, sql, 30_000);
      return;
    } catch (err) {
      const failure = `${sql}: ${(err as Error).message} (try ${attempt}, ${((Date.now() - started) / 1000).toFixed(1)} s)`;
      if (Date.now() + 2_000 * attempt > deadline) throw new Error(failure);
      defaultLog(`${failure}; trying again`);
      await sleep(2_000 * attempt);
    }
  }
}

function sqlTool(tool: string, db: Db, database: string, args: string[]): Promise<void> {
  const base = ['--plugin', 'postgres12', '--ep', db.host, '--port', String(db.port), '--user', db.user, '--db', database];
  return new Promise((resolve, reject) => {
    // The password travels in the environment, not on a command line that `ps` shows.
    const child = spawn(tool, [...base, ...args], {
      env: { ...process.env, SQL_PASSWORD: db.password },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => out.push(b));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) return resolve();
      reject(
        new Error(
          `temporal-sql-tool ${args.join(' ')} on ${database} failed (exit ${code}):\n${Buffer.concat(out).toString('utf8').slice(-3000)}`,
        ),
      );
    });
  });
}

const SCHEMA_KINDS = ['temporal', 'visibility'] as const;
type SchemaKind = (typeof SCHEMA_KINDS)[number];
/** pg_advisory_lock key of the template databases' setup (any number no other code locks). */
const TEMPLATE_LOCK = 7_233_001;
const OBJECT_IN_USE = '55006';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .sort();
}

/** A statement that fails while a session still holds the database (a schema tool that has just
 *  exited may not have left yet), tried again for a few seconds. */
async function whenFree(client: pg.Client, sql: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(sql);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== OBJECT_IN_USE || attempt >= 50) throw err;
      await sleep(100);
    }
  }
}

/**
 * The two databases with the schemas set up, made once per version of the schema files by the
 * schema tool: a server's own databases are copies of them (CREATE DATABASE … TEMPLATE, under a
 * second), where running the tool for each took 3-8 s of a start on a loaded machine, and tests
 * start several servers. Made under an advisory lock (servers start side by side), under another
 * name until complete, then closed to connections (a session on a template would stop its copy).
 */
async function schemaTemplates(adminUrl: string, paths: TemporalServerPaths, db: Db): Promise<Record<SchemaKind, string>> {
  const hash = createHash('sha256');
  for (const file of filesUnder(paths.schemaDir)) hash.update(`${path.relative(paths.schemaDir, file)}\0`).update(readFileSync(file));
  const prefix = `tsrv_tpl_${TEMPORAL_SERVER_VERSION.replace(/\W/g, '_')}_${hash.digest('hex').slice(0, 10)}`;
  const names = { temporal: `${prefix}_temporal`, visibility: `${prefix}_visibility` };
  const c = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    await c.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    const { rows } = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname = ANY($1)', [Object.values(names)]);
    for (const kind of SCHEMA_KINDS.filter((k) => !rows.some((r) => r.datname === names[k]))) {
      const building = `${names[kind]}_new`;
      await c.query(`DROP DATABASE IF EXISTS ${building}`);
      await c.query(`CREATE DATABASE ${building}`);
      await sqlTool(paths.sqlTool, db, building, ['setup-schema', '-v', '0.0']);
      await sqlTool(paths.sqlTool, db, building, ['update-schema', '-d', path.join(paths.schemaDir, kind, 'versioned')]);
      await whenFree(c, `ALTER DATABASE ${building} ALLOW_CONNECTIONS false`);
      await whenFree(c, `ALTER DATABASE ${building} RENAME TO ${names[kind]}`);
    }
  } finally {
    // The session's end releases the lock.
    await c.end();
  }
  return names;
}

interface Ports {
  frontend: number;
  services: Record<string, { grpc: number; membership: number }>;
}

function serverConfig(o: {
  db: Db;
  prefix: string;
  ports: Ports;
  dynamicConfigFile: string;
  tls: TemporalServerOptions['tls'];
  metricsPort: number | undefined;
  historyShards: number;
}): object {
  const datastore = (database: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName: database,
      connectAddr: `${o.db.host}:${o.db.port}`,
      connectProtocol: 'tcp',
      user: o.db.user,
      password: o.db.password,
      maxConns,
      maxIdleConns: 2,
      maxConnLifetime: '1h',
    },
  });
  const services = Object.fromEntries(
    Object.entries(o.ports.services).map(([name, p]) => [
      name,
      { rpc: { grpcPort: p.grpc, membershipPort: p.membership, bindOnIP: HOST } },
    ]),
  );
  const tls = o.tls && {
    frontend: {
      server: {
        certFile: o.tls.certFile,
        keyFile: o.tls.keyFile,
        ...(o.tls.clientCaFile ? { requireClientAuth: true, clientCaFiles: [o.tls.clientCaFile] } : {}),
      },
    },
  };
  const internal = o.ports.services['internal-frontend'];
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: o.historyShards,
      // Each service of the process has pools of its own: at these sizes a test server holds at most
      // about 50 connections, so several (and the suite's) fit in PostgreSQL's default 100.
      datastores: { default: datastore(`${o.prefix}_temporal`, 6), visibility: datastore(`${o.prefix}_visibility`, 3) },
    },
    // No pprof listener, and metrics only when asked for: fewer ports to find free.
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: HOST },
      ...(tls ? { tls } : {}),
      ...(o.metricsPort
        ? { metrics: { prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `${HOST}:${o.metricsPort}` } } }
        : {}),
    },
    services,
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `${HOST}:${internal ? internal.grpc : o.ports.frontend}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    dynamicConfigClient: { filepath: o.dynamicConfigFile, pollInterval: '10s' },
  };
}

const { IndexedValueType } = proto.temporal.api.enums.v1;
const SA_TYPES: Record<SearchAttributeType, proto.temporal.api.enums.v1.IndexedValueType> = {
  Text: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Bool: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

const grpcCode = (err: unknown): number | undefined => (err as { code?: number }).code;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Creates the two databases, sets up the schemas with temporal-sql-tool, starts frontend, history,
 * matching and worker in one process, registers the namespace and search attributes and resolves
 * once both are visible.
 */
export async function startTemporalServer(opts: TemporalServerOptions): Promise<RunningTemporalServer> {
  const paths = installedTemporalServer();
  if (!paths) throw new Error('the Temporal server is not built: run `node bin/run-ts.mjs scripts/temporal-server.ts --install-only`');
  const prefix = opts.databasePrefix ?? `tsrv_${randomBytes(4).toString('hex')}`;
  if (!/^[a-z_][a-z0-9_]{0,40}$/.test(prefix)) throw new Error(`databasePrefix ${prefix}: lower-case letters, digits and _ only`);
  const namespace = opts.namespace ?? 'default';
  const db = dbFromUrl(opts.adminUrl);
  const databases = [`${prefix}_temporal`, `${prefix}_visibility`];
  const dropDatabases = async () => {
    const deadline = Date.now() + 80_000;
    for (const name of databases) await dropDatabase(opts.adminUrl, name, deadline);
  };
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-server-'));
  const t0 = Date.now();
  try {
    const templates = await schemaTemplates(opts.adminUrl, paths, db);
    const c = new pg.Client({ connectionString: opts.adminUrl, connectionTimeoutMillis: 5_000 });
    await c.connect();
    try {
      for (const [i, kind] of SCHEMA_KINDS.entries()) {
        const name = databases[i]!;
        await whenFree(c, `CREATE DATABASE ${name} TEMPLATE ${templates[kind]}`);
        // The schema tool records the database's name beside the schema version; the server reads
        // that row by its own database's name at start.
        const copy = new URL(opts.adminUrl);
        copy.pathname = `/${name}`;
        const d = new pg.Client({ connectionString: copy.toString(), connectionTimeoutMillis: 5_000 });
        await d.connect();
        try {
          await d.query('UPDATE schema_version SET db_name = $1', [name]);
        } finally {
          await d.end();
        }
      }
    } finally {
      await c.end();
    }
  } catch (err) {
    await dropDatabases().catch(() => undefined);
    rmSync(workDir, { recursive: true, force: true });
    throw err;
  }
  const schemaMs = Date.now() - t0;

  // With TLS on the frontend, the server's own clients (the system worker that runs schedules,
  // the admin calls made here) use an internal-frontend on plain internode transport instead:
  // the frontend's client certificate requirement is for outside callers only.
  const serviceNames = ['frontend', 'history', 'matching', 'worker', ...(opts.tls ? ['internal-frontend'] : [])];
  if (opts.port && opts.port > PORT_RANGE.max)
    throw new Error(`port ${opts.port}: the server's PostgreSQL schema keeps ports in a SMALLINT (<= 32767)`);
  const ports: Ports = { frontend: opts.port || (await freePort()), services: {} };
  for (const name of serviceNames) {
    ports.services[name] = { grpc: name === 'frontend' ? ports.frontend : await freePort(), membership: await freePort() };
  }
  const dynamicConfigFile = path.join(workDir, 'dynamic-config.yaml');
  const dynamic = { ...defaultDynamicConfig(), ...opts.dynamicConfig };
  // JSON is YAML: no YAML writer needed for either file.
  writeFileSync(
    dynamicConfigFile,
    JSON.stringify(Object.fromEntries(Object.entries(dynamic).map(([k, value]) => [k, [{ value }]])), null, 2),
  );
  const configFile = path.join(workDir, 'config.yaml');
  writeFileSync(
    configFile,
    JSON.stringify(
      serverConfig({
        db,
        prefix,
        ports,
        dynamicConfigFile,
        tls: opts.tls,
        metricsPort: opts.metricsPort,
        historyShards: opts.historyShards ?? 4,
      }),
      null,
      2,
    ),
    {
      mode: 0o600,
    },
  );

  const address = `${HOST}:${ports.frontend}`;
  const adminAddress = `${HOST}:${(ports.services['internal-frontend'] ?? ports.services.frontend!).grpc}`;
  const log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
  const tail: string[] = [];
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const spawnServer = async (): Promise<void> => {
    for (const [name, p] of Object.entries(ports.services)) {
      for (const port of [p.grpc, p.membership]) {
        if (await tcpOpen(port)) throw new Error(`port ${port} (${name}) is taken: cannot start the Temporal server on it`);
      }
    }
    const proc = spawn(
      paths.server,
      ['--config-file', configFile, '--allow-no-auth', 'start', ...serviceNames.flatMap((s) => ['--service', s])],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = proc;
    const killOnExit = () => proc.kill('SIGKILL');
    process.once('exit', killOnExit);
    exited = once(proc, 'exit').then(() => void process.removeListener('exit', killOnExit));
    const keep = (chunk: Buffer) => {
      log?.write(chunk);
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        // Error lines carry a Go stack trace each: the message is what a failed start should show.
        tail.push(line.replace(/,"stacktrace":".*$/, '}').slice(0, 600));
        if (tail.length > 30) tail.shift();
      }
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
  };

  const adminConnection = (): Promise<Connection> => Connection.connect({ address: adminAddress, connectTimeout: 2_000 });

  /** Until the frontend answers and the namespace is in its cache (a visibility call needs both). */
  const waitServing = async (timeoutMs: number, needNamespace: boolean): Promise<void> => {
    const proc = child!;
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new Error(`the Temporal server exited during start (${proc.exitCode ?? proc.signalCode}):\n${tail.join('\n')}`);
      }
      try {
        const conn = await adminConnection();
        try {
          await conn.workflowService.getSystemInfo({});
          if (needNamespace) await conn.workflowService.countWorkflowExecutions({ namespace });
          if (opts.tls && !(await tcpOpen(ports.frontend))) throw new Error('the TLS frontend does not listen yet');
          return;
        } finally {
          await conn.close();
        }
      } catch (err) {
        last = err;
        await sleep(200);
      }
    }
    throw new Error(`the Temporal server did not serve within ${timeoutMs / 1000} s: ${(last as Error)?.message}\n${tail.join('\n')}`);
  };

  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill(signal);
    const force = signal === 'SIGKILL' ? undefined : setTimeout(() => proc.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(force);
  };

  const stop = async (): Promise<void> => {
    await kill('SIGTERM');
    log?.end();
    await dropDatabases();
    rmSync(workDir, { recursive: true, force: true });
  };

  try {
    const t1 = Date.now();
    await spawnServer();
    await waitServing(60_000, false);
    const conn = await adminConnection();
    try {
      try {
        await conn.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
      } catch (err) {
        if (grpcCode(err) !== 6 /* ALREADY_EXISTS */) throw err;
      }
      await waitServing(30_000, true);
      const wanted = opts.searchAttributes ?? {};
      if (Object.keys(wanted).length) {
        const searchAttributes = Object.fromEntries(Object.entries(wanted).map(([name, type]) => [name, SA_TYPES[type]]));
        await conn.operatorService.addSearchAttributes({ namespace, searchAttributes });
        for (const deadline = Date.now() + 30_000; ; await sleep(200)) {
          const { customAttributes } = await conn.operatorService.listSearchAttributes({ namespace });
          const missing = Object.entries(searchAttributes).filter(([name, type]) => customAttributes?.[name] !== type);
          if (!missing.length) break;
          if (Date.now() > deadline) throw new Error(`search attributes not visible after 30 s: ${missing.map(([n]) => n).join(', ')}`);
        }
      }
    } finally {
      await conn.close();
    }
    if (process.env.TEMPORAL_SERVER_TIMINGS) {
      defaultLog(`schemas ${(schemaMs / 1000).toFixed(1)} s, server + namespace ${((Date.now() - t1) / 1000).toFixed(1)} s`);
    }
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }

  return {
    address,
    namespace,
    get pid() {
      return child!.pid!;
    },
    kill,
    start: async () => {
      if (child && child.exitCode === null && child.signalCode === null) throw new Error('the Temporal server still runs');
      await spawnServer();
      await waitServing(90_000, true);
    },
    stop,
  };
}

/** TLS for a client of a server started with `tls` (the CA that signed its certificate). */
export function clientTls(o: { caFile: string; certFile?: string; keyFile?: string; serverName?: string }): TLSConfig {
  return {
    serverNameOverride: o.serverName,
    serverRootCACertificate: readFileSync(o.caFile),
    ...(o.certFile && o.keyFile ? { clientCertPair: { crt: readFileSync(o.certFile), key: readFileSync(o.keyFile) } } : {}),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'install-only': { type: 'boolean' },
      port: { type: 'string' },
      namespace: { type: 'string' },
    },
  });
  const t0 = Date.now();
  const paths = await ensureTemporalServer();
  defaultLog(`installed (${((Date.now() - t0) / 1000).toFixed(1)} s): ${paths.server}, ${paths.sqlTool}, schemas in ${paths.schemaDir}`);
  if (values['install-only']) return;
  const started = Date.now();
  const server = await startTemporalServer({
    adminUrl: process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://deep_research:deep_research@127.0.0.1:5432/postgres',
    port: values.port ? Number(values.port) : 7233,
    namespace: values.namespace,
    searchAttributes: SEARCH_ATTRIBUTES,
  });
  console.log(
    `\nTemporal server ${TEMPORAL_SERVER_VERSION} serves on ${server.address} (namespace ${server.namespace}) after ${((Date.now() - started) / 1000).toFixed(1)} s.`,
  );
  console.log(`In another terminal:\n\n  TEMPORAL_ADDRESS=${server.address} npm start\n\nCtrl-C stops it and drops its databases.`);
  stopOnSignals(() => server.stop());
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`temporal-server: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
