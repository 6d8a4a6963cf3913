import type pg from 'pg';

/**
 * Runs `work` on one pooled client inside BEGIN … COMMIT. Any error ends the connection (the
 * server rolls the transaction back) and is rethrown: after a query that timed out (query_timeout,
 * a network that went silent) the client still waits for that query's answer, and would hold up
 * every later query of whoever got it from the pool, so a failed client never goes back.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (err) {
    client.release(err instanceof Error ? err : new Error(String(err)));
    throw err;
  }
}
