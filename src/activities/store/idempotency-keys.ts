// The request each Idempotency-Key of a tenant was first used for (see src/api/idempotency.ts).
import type pg from 'pg';

/** What a key says about a request: first use, a retry of the request it was used for, or another request. */
export type KeyClaim = 'new' | 'same' | 'other';

export function idempotencyKeysTable(pool: pg.Pool) {
  return {
    /** Binds `key` to `requestHash` unless it is bound already, and says which it was. */
    async claim(tenant: string, key: string, requestHash: string): Promise<KeyClaim> {
      const inserted = await pool.query(
        'INSERT INTO idempotency_keys (tenant, key, request_hash) VALUES ($1, $2, $3) ON CONFLICT (tenant, key) DO NOTHING',
        [tenant, key, requestHash],
      );
      if (inserted.rowCount) return 'new';
      const { rows } = await pool.query<{ request_hash: string }>(
        'SELECT request_hash FROM idempotency_keys WHERE tenant = $1 AND key = $2',
        [tenant, key],
      );
      // Released between the two statements: the key is free again, and taken by this request.
      if (!rows[0]) return this.claim(tenant, key, requestHash);
      return rows[0].request_hash === requestHash ? 'same' : 'other';
    },
    /** Frees a key whose first request was refused (the client may correct it and send it again). */
    async release(tenant: string, key: string, requestHash: string): Promise<void> {
      await pool.query('DELETE FROM idempotency_keys WHERE tenant = $1 AND key = $2 AND request_hash = $3', [tenant, key, requestHash]);
    },
  };
}
export type IdempotencyKeysTable = ReturnType<typeof idempotencyKeysTable>;
