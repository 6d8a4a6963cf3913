// A transaction whose query timed out must not hand its connection back to the pool: the client
// still waits for that query's answer (a slow statement, or a network that went silent), and
// whoever gets it next would wait behind it, or time out in turn.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/activities/store/knowledge/transaction';
import { databaseUrl, missingReason } from '../support/services';

const url = databaseUrl();

describe.skipIf(!url)(`inTransaction (${url ? 'live' : missingReason()})`, () => {
  it('closes a connection whose query timed out instead of pooling it', async () => {
    // One connection, so the query after the failure would get the very client the transaction had.
    const pool = new pg.Pool({ connectionString: url!, max: 1, query_timeout: 500 });
    pool.on('error', () => undefined);
    try {
      const failed = inTransaction(pool, (c) => c.query('SELECT pg_sleep(3)'));
      await expect(failed).rejects.toThrow(/Query read timeout/);
      const t0 = Date.now();
      const { rows } = await pool.query<{ n: number }>('SELECT 3 AS n');
      expect(rows).toEqual([{ n: 3 }]);
      expect(Date.now() - t0).toBeLessThan(400);
    } finally {
      await pool.end();
    }
  });

  it('commits what succeeded and leaves nothing of what failed', async () => {
    const pool = new pg.Pool({ connectionString: url!, max: 1 });
    const table = `tx_test_${process.pid}_${Date.now()}`;
    try {
      await pool.query(`CREATE TABLE ${table} (n int)`);
      await inTransaction(pool, (c) => c.query(`INSERT INTO ${table} VALUES (1)`));
      await expect(
        inTransaction(pool, async (c) => {
          await c.query(`INSERT INTO ${table} VALUES (2)`);
          throw new Error('the work failed');
        }),
      ).rejects.toThrow('the work failed');
      const { rows } = await pool.query<{ n: number }>(`SELECT n FROM ${table} ORDER BY n`);
      expect(rows).toEqual([{ n: 1 }]);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS ${table}`);
      await pool.end();
    }
  });
});
