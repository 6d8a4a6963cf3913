// With --pg, the bench gets a database of its own on that PostgreSQL server, created for the run
// and dropped after it: each load starts from empty tables (rows of earlier benches would make
// its queries slower from one run to the next), and the bench needs no more rights than the test
// suite's (CREATEDB), not write access to the server's `postgres` database.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dropDatabase } from '../../scripts/temporal-server';

export async function benchDatabase(serverUrl: string): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `bench_load_${randomBytes(4).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return { url: u.toString(), name, drop: () => dropDatabase(serverUrl, name) };
}

/** One statement on the server's admin URL, on a connection of its own. */
export async function adminQuery<R extends pg.QueryResultRow>(serverUrl: string, sql: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    return (await c.query<R>(sql, values)).rows;
  } finally {
    await c.end();
  }
}
