// Connections the entry points share: Temporal (client + worker connection) and PostgreSQL.
import net from 'node:net';
import path from 'node:path';
import { setSdkMetricsAddress } from './metrics';
import { Client, Connection, type ClientPlugin } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import type pg from 'pg';
import type { Config } from '../config';
import { sdkLogger, type Logger } from './logger';
import { migrate } from './migrate';
import { resolveDataDir } from './paths';
import { createPool, redactUrl, startEmbeddedPostgres, vectorSearchMode, type EmbeddedPostgres } from './postgres';
import { explainTemporalConnectError, type TemporalConnectionSettings } from './temporal-connection';

let runtimeInstalled = false;
/** The SDK must not install its own SIGINT/SIGTERM handlers: entry points shut down in order. */
export async function installTemporalRuntime(log: Logger, level: Config['logLevel'], avoidPorts: number[] = []): Promise<void> {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  // The SDK's metrics are served by its core on a loopback port; /metrics appends them. The port
  // is any free one but those this process is about to listen on (the API, Temporal, PGlite).
  let port = await freeLoopbackPort();
  while (avoidPorts.includes(port)) port = await freeLoopbackPort();
  const bindAddress = `127.0.0.1:${port}`;
  Runtime.install({
    shutdownSignals: [],
    // The SDK's lines in this process's own format, its expected start notices left out.
    logger: sdkLogger(log, level),
    telemetryOptions: { metrics: { prometheus: { bindAddress, countersTotalSuffix: true } } },
  });
  setSdkMetricsAddress(bindAddress);
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface TemporalConnections {
  client: Client;
  connection: Connection;
  nativeConnection: NativeConnection;
  close(): Promise<void>;
}

/**
 * The client and worker connections to one Temporal server. `settings` comes from
 * temporalConnectionSettings (TLS, API key, headers), or is just `{ address, namespace }` for a
 * plain-text server such as the dev server. A failure says why in words (an untrusted server
 * certificate, a refused client certificate, ...) and which settings to check.
 */
export async function connectTemporal(settings: TemporalConnectionSettings, plugins: ClientPlugin[] = []): Promise<TemporalConnections> {
  const { address, tls, apiKey, metadata } = settings;
  const options = {
    address,
    ...(tls !== undefined ? { tls } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(metadata ? { metadata } : {}),
  };
  // The worker's connection first: the SDK's core fails at once with the TLS reason, where the
  // client's gRPC channel only times out.
  let nativeConnection: NativeConnection;
  try {
    nativeConnection = await NativeConnection.connect(options);
  } catch (err) {
    throw explainTemporalConnectError(err, settings);
  }
  let connection: Connection;
  try {
    connection = await Connection.connect(options);
  } catch (err) {
    await nativeConnection.close();
    throw explainTemporalConnectError(err, settings);
  }
  const client = new Client({ connection, namespace: settings.namespace, plugins });
  return {
    client,
    connection,
    nativeConnection,
    close: async () => {
      await nativeConnection.close();
      await connection.close();
    },
  };
}

export interface Database {
  pool: pg.Pool;
  /** How the knowledge base searches vectors here: pgvector's HNSW index, or an exact scan. */
  vectors: 'pgvector' | 'exact';
  url: string;
  embedded: EmbeddedPostgres | undefined;
  close(): Promise<void>;
}

/** DATABASE_URL when set; otherwise the embedded PGlite database under DATA_DIR. Runs migrations. */
export async function openDatabase(config: Config, log: Logger, opts: { allowEmbedded: boolean }): Promise<Database> {
  let embedded: EmbeddedPostgres | undefined;
  let url = config.database.url;
  if (!url) {
    if (!opts.allowEmbedded) {
      throw new Error('DATABASE_URL is not set; a standalone worker or API needs the PostgreSQL the others use');
    }
    embedded = await startEmbeddedPostgres({
      dataDir: path.join(resolveDataDir(config.dataDir), 'pglite'),
      port: config.database.pglitePort,
      log,
    });
    url = embedded.url;
  }
  const pool = createPool(url, config.database.poolMax, { namedStatements: !embedded && config.database.namedStatements });
  let vectors: Database['vectors'] = 'exact';
  try {
    const applied = await migrate(pool);
    if (applied.length) log.info('database migrated', { applied });
    vectors = await vectorSearchMode(pool);
    if (vectors === 'exact') log.info('knowledge base: pgvector is not installed in this PostgreSQL; vectors are searched by exact scan');
    else log.debug('knowledge base: vectors searched with pgvector (HNSW)');
  } catch (err) {
    await pool.end();
    await embedded?.stop();
    throw new Error(`cannot prepare the database at ${redactUrl(url)}: ${(err as Error).message}`);
  }
  return {
    pool,
    url,
    embedded,
    vectors,
    close: async () => {
      await pool.end();
      await embedded?.stop();
    },
  };
}
