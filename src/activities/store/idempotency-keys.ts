// The request each Idempotency-Key of a tenant was first used for (see src/api/idempotency.ts), for
// KEY_LIFETIME: after that a key is free again, and its row is deleted by a sweep that every
// SWEEP_EVERY-th new key runs, so the table holds about a lifetime's keys and no more.
import type pg from 'pg';

/** How long a key stays bound to its first request. */
export const KEY_LIFETIME = '7 days';
const SWEEP_EVERY = 500;

/** What a key says about a request: first use, a retry of the request it was used for, or another request. */
export type KeyClaim = 'new' | 'same' | 'other';

export function idempotencyKeysTable(pool: pg.Pool, lifetime = KEY_LIFETIME) {
  let newKeys = 0;
  return {
    /** Binds `key` to `requestHash` unless it is bound already (within its lifetime), and says which it was. */
    async claim(tenant: string, key: string, requestHash: string): Promise<KeyClaim> {
      const inserted = await pool.query(
        `INSERT INTO idempotency_keys (tenant, key, request_hash) VALUES ($1, $2, $3)
         ON CONFLICT (tenant, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, created_at = now()
         WHERE idempotency_keys.created_at < now() - $4::interval`,
        [tenant, key, requestHash, lifetime],
      );
      if (inserted.rowCount) {
        if (++newKeys % SWEEP_EVERY === 0) await this.sweep();
        return 'new';
      }
      const { rows } = await pool.query<{ request_hash: string }>(
        'SELECT request_hash FROM idempotency_keys WHERE tenant = $1 AND key = $2',
        [tenant, key],
      );
      // Released between the two statements: the key is free again, and taken by this request.
      if (!rows[0]) return this.claim(tenant, key, requestHash);
      return rows[0].request_hash === requestHash ? 'same' : 'other';
    },
    /** Deletes the keys past their lifetime; returns how many. */
    async sweep(): Promise<number> {
      const { rowCount } = await pool.query('DELETE FROM idempotency_keys WHERE created_at < now() - $1::interval', [lifetime]);
      return rowCount ?? 0;
    },
    /** Frees a key whose first request was refused (the client may correct it and send it again). */
    async release(tenant: string, key: string, requestHash: string): Promise<void> {
      await pool.query('DELETE FROM idempotency_keys WHERE tenant = $1 AND key = $2 AND request_hash = $3', [tenant, key, requestHash]);
    },
  };
}
export type IdempotencyKeysTable = ReturnType<typeof idempotencyKeysTable>;
