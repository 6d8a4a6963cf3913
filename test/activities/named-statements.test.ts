// Named statements on a PostgreSQL server (src/infra/named-statements.ts): a parameterized text is
// prepared once per connection and reused; texts beyond the bound go unnamed; the parameters are
// still cleaned and a data error is still permanent; a failed transaction leaves them usable.
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/infra/postgres';
import { MAX_NAMED_PER_CONNECTION } from '../../src/infra/named-statements';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());

/** This session's prepared statements that the service named. */
async function prepared(pool: ReturnType<typeof createPool>): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(`SELECT name FROM pg_prepared_statements WHERE name LIKE 'dr\\_%' ORDER BY name`);
  return rows.map((r) => r.name);
}

describe.skipIf(!ready)(`named statements (${ready ? 'live' : missingReason()})`, () => {
  // One connection each, so that every statement runs in the session the checks look at.
  let named: ReturnType<typeof createPool>;
  let plain: ReturnType<typeof createPool>;

  beforeAll(() => {
    named = createPool(databaseUrl()!, 1, { namedStatements: true });
    plain = createPool(databaseUrl()!, 1);
  });
  afterAll(async () => {
    await named.end();
    await plain.end();
  });

  it('prepares a text once and reuses it, with the right rows each time', async () => {
    const text = 'SELECT $1::int + 1 AS n';
    for (let i = 0; i < 5; i++) expect((await named.query(text, [i])).rows[0].n).toBe(i + 1);
    const names = await prepared(named);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^dr_[0-9a-f]{24}$/);
    // A statement without parameters goes as it is (the simple protocol).
    expect((await named.query('SELECT 41 + 1 AS n')).rows[0].n).toBe(42);
    expect(await prepared(named)).toHaveLength(1);
  });

  it('names at most the bound per connection; the others still run, unnamed', async () => {
    const extra = 20;
    for (let i = 0; i < MAX_NAMED_PER_CONNECTION + extra; i++) {
      const { rows } = await named.query(`SELECT $1::int * ${i} AS n`, [2]);
      expect(rows[0].n).toBe(2 * i);
    }
    expect((await prepared(named)).length).toBe(MAX_NAMED_PER_CONNECTION);
  });

  it('still cleans the parameters and keeps a data error permanent', async () => {
    const { rows } = await named.query('SELECT $1::text AS t', ['a\u0000b']);
    expect(rows[0].t).toBe('ab');
    const err = await named.query('SELECT $1::int AS n', ['not a number']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((await named.query('SELECT $1::int AS n', ['7'])).rows[0].n).toBe(7);
  });

  it('keeps working after a transaction that failed on a named statement', async () => {
    const client = await named.connect();
    try {
      await client.query('BEGIN');
      await expect(client.query('SELECT 1 / $1::int AS n', [0])).rejects.toThrow(/division by zero/);
      await client.query('ROLLBACK');
      expect((await client.query('SELECT 1 / $1::int AS n', [1])).rows[0].n).toBe(1);
    } finally {
      client.release();
    }
  });

  it('without the option, nothing is prepared', async () => {
    for (let i = 0; i < 3; i++) await plain.query('SELECT $1::int AS n', [i]);
    expect(await prepared(plain)).toEqual([]);
  });
});
