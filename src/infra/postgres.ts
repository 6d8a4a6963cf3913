// PostgreSQL for the service: a pg Pool on DATABASE_URL, or, when it is unset, an embedded
// PGlite database served on a loopback socket so that the same `pg` code talks to both.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from './logger';
import { initdbOnThread } from './pglite-initdb';
import { servePglite } from './pglite-server';
import { assertPortFree } from './temporal-cli';
import { nameStatements } from './named-statements';
import { guardPool } from './storable-queries';

const SHARED_BUFFERS = '32MB';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/** Opens (or creates) a PGlite data directory and serves it on 127.0.0.1:port over the PG wire protocol. */
export async function startEmbeddedPostgres(opts: { dataDir: string; port: number; log: Logger }): Promise<EmbeddedPostgres> {
  await assertPortFree(opts.port, '127.0.0.1', 'embedded PostgreSQL; set PGLITE_PORT, or DATABASE_URL for a real server');
  mkdirSync(opts.dataDir, { recursive: true });
  // Loaded only here: a worker on a PostgreSQL server never holds PGlite (27 MB).
  const [{ PGlite }, { vector }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-pgvector')]);
  // pgvector is loaded so that the knowledge base gets its HNSW index in the embedded default too.
  // shared_buffers: PGlite's 160 MB buffer pool lives in its WASM memory, which grows to hold it
  // and never shrinks. 32 MB keeps about 125 MB less resident; pages beyond it come from the
  // operating system's file cache through the data directory. (PGlite runs with fsync off, and
  // relaxedDurability changes nothing on a Node file system, whose sync is a no-op.)
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`];
  // The instance that runs initdb keeps initdb's memory (about 250 MB) for as long as it lives, and
  // after it too until the collector frees it: a fresh data directory is made on a thread that
  // ends, and opened here afterwards.
  if (!existsSync(path.join(opts.dataDir, 'PG_VERSION'))) await initdbOnThread(opts.dataDir, startParams);
  const db = await PGlite.create({ dataDir: opts.dataDir, extensions: { vector }, startParams });
  // PGlite is a single session: the server gives it to one connection at a time, from a query's
  // first message to the ReadyForQuery that ends it idle (pglite-server.ts says why).
  const server = await servePglite(db, { host: '127.0.0.1', port: opts.port });
  opts.log.debug('embedded PostgreSQL (PGlite) listening', { port: opts.port, dataDir: opts.dataDir });
  return {
    url: `postgres://postgres@127.0.0.1:${opts.port}/postgres`,
    stop: async () => {
      await server.close();
      await db.close();
    },
  };
}

/** namedStatements: prepare statements per connection (a PostgreSQL server; never PGlite, named-statements.ts). */
export function createPool(url: string, max: number, opts: { namedStatements?: boolean } = {}): pg.Pool {
  // Timeouts so that a database that stops answering fails a query (which its activity retries)
  // instead of hanging it until the activity's own timeout.
  const pool = new pg.Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    query_timeout: 60_000,
  });
  // An idle client that loses its connection emits here; without a listener the process would die.
  pool.on('error', () => undefined);
  guardPool(pool);
  if (opts.namedStatements) pool.on('connect', nameStatements);
  return pool;
}

/** Hides the password in a connection string for logs. */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

/** How the knowledge base searches vectors in this database: the migration adds kb_chunks.vec only
 *  where the pgvector extension exists (pgvector's HNSW index), else an exact scan. */
export async function vectorSearchMode(pool: Pick<pg.Pool, 'query'>): Promise<'pgvector' | 'exact'> {
  const { rowCount } = await pool.query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'kb_chunks' AND column_name = 'vec'`);
  return rowCount ? 'pgvector' : 'exact';
}
