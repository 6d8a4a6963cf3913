// The Idempotency-Key table in PostgreSQL: a key is bound to its first request for its lifetime,
// free again after it, and the sweep deletes only the keys past their lifetime.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyKeysTable } from '../../src/activities/store/idempotency-keys';
import { createPool } from '../../src/infra/postgres';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());

describe.skipIf(!ready)(`Idempotency-Key lifetime (${ready ? 'live' : missingReason()})`, () => {
  let pool: ReturnType<typeof createPool>;
  const tenant = `idem-${randomUUID().slice(0, 8)}`;

  beforeAll(() => {
    pool = createPool(databaseUrl()!, 2);
  });
  afterAll(async () => {
    await pool.query('DELETE FROM idempotency_keys WHERE tenant = $1', [tenant]);
    await pool.end();
  });

  it('binds a key for its lifetime, frees it after, and sweeps only expired keys', async () => {
    const keys = idempotencyKeysTable(pool, '1 hour');
    expect(await keys.claim(tenant, 'k1', 'approve')).toBe('new');
    expect(await keys.claim(tenant, 'k1', 'approve')).toBe('same');
    expect(await keys.claim(tenant, 'k1', 'revise')).toBe('other');
    expect(await keys.claim(tenant, 'k2', 'submit')).toBe('new');

    // k1 ages past its lifetime: another request may take it, and is bound to it from then on.
    await pool.query(`UPDATE idempotency_keys SET created_at = now() - interval '2 hours' WHERE tenant = $1 AND key = 'k1'`, [tenant]);
    expect(await keys.claim(tenant, 'k1', 'revise')).toBe('new');
    expect(await keys.claim(tenant, 'k1', 'approve')).toBe('other');

    // The sweep deletes the expired keys and nothing else.
    await pool.query(`UPDATE idempotency_keys SET created_at = now() - interval '2 hours' WHERE tenant = $1 AND key = 'k2'`, [tenant]);
    expect(await keys.sweep()).toBeGreaterThanOrEqual(1);
    const { rows } = await pool.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE tenant = $1 ORDER BY key', [tenant]);
    expect(rows.map((r) => r.key)).toEqual(['k1']);
  });
});
