// PostgreSQL for the service: a pg Pool on DATABASE_URL, or, when it is unset, an embedded
// PGlite database served on a loopback socket so that the same `pg` code talks to both.
import { mkdirSync } from 'node:fs';
import pg from 'pg';
import type { Logger } from './logger';
import { servePglite } from './pglite-server';
import { assertPortFree } from './temporal-cli';

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
  const db = await PGlite.create({ dataDir: opts.dataDir, extensions: { vector } });
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

export function createPool(url: string, max: number): pg.Pool {
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
