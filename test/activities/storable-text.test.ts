// Text PostgreSQL refuses (a NUL, a lone surrogate) reaching the store from outside: cleaned on its
// way in, on every write path (the pool's clients clean each statement's parameters), and a data
// error the database still raises is a permanent failure, never one an activity retries for hours.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore, type Store } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import { storableParam } from '../../src/infra/storable-queries';
import { findUnstorable, storableText, unstorableText } from '../../src/shared/text';
import { databaseUrl, missingReason } from '../support/services';

describe('storable text (no database)', () => {
  it('finds NULs and unpaired surrogates, and leaves pairs (emoji) and other scripts alone', () => {
    expect(unstorableText('a\u0000b')).toMatch(/NUL/);
    expect(unstorableText('x\ud800')).toMatch(/surrogate/);
    expect(unstorableText('\udc00x')).toMatch(/surrogate/);
    expect(unstorableText('€ 漢字 😀 é')).toBeUndefined();
    expect(storableText('a\u0000b\ud800c\udfffd😀')).toBe('ab\ufffdc\ufffdd😀');
    expect(findUnstorable({ options: { guidance: ['ok', 'bad\u0000'] } })).toEqual({
      path: 'options.guidance.1',
      reason: expect.stringMatching(/NUL/),
    });
    expect(findUnstorable({ ['k\u0000']: 1 })?.path).toBe('k\u0000');
  });

  it('cleans JSON text whose escapes name a NUL or a lone surrogate, and keeps text that only looks like one', () => {
    expect(JSON.parse(storableParam(JSON.stringify({ q: 'a\u0000b', r: ['\ud83d'] })) as string)).toEqual({ q: 'ab', r: ['\ufffd'] });
    expect(storableParam('C:\\u0000 is a path, not JSON')).toBe('C:\\u0000 is a path, not JSON');
    expect(storableParam({ title: 'x\u0000' })).toEqual({ title: 'x' });
    expect(storableParam(['a\u0000', 2])).toEqual(['a', 2]);
  });
});

const ready = Boolean(databaseUrl());

describe.skipIf(!ready)(`storable text in PostgreSQL (${ready ? 'live' : missingReason()})`, () => {
  let pool: ReturnType<typeof createPool>;
  let store: Store;
  const researchId = `storable-${randomUUID()}`;

  beforeAll(() => {
    pool = createPool(databaseUrl()!, 2);
    store = createStore(pool);
  });
  afterAll(async () => {
    await pool.query('DELETE FROM run_guidance WHERE research_id = $1', [researchId]);
    await pool.query('DELETE FROM run_events WHERE research_id = $1', [researchId]);
    await pool.end();
  });

  it('stores text and jsonb with NULs and lone surrogates cleaned, through plain queries and a transaction', async () => {
    const direct = await pool.query('SELECT $1::text AS t, $2::jsonb AS j, $3::jsonb AS s', [
      'a\u0000b\ud800',
      { k: 'v\u0000', list: ['\udc00'] },
      JSON.stringify({ k: 'w\u0000' }),
    ]);
    expect(direct.rows[0]).toEqual({ t: 'ab\ufffd', j: { k: 'v', list: ['\ufffd'] }, s: { k: 'w' } });
    const client = await pool.connect();
    try {
      const inTx = await client.query({ text: 'SELECT $1::text AS t', values: ['x\u0000y'] });
      expect(inTx.rows[0].t).toBe('xy');
    } finally {
      client.release();
    }
  });

  it('writes steering guidance and run events holding such text (the writes that wedged a run)', async () => {
    await store.guidance.add(researchId, 1, 'focus on \u0000 Spain \ud800');
    const { rows } = await pool.query('SELECT text FROM run_guidance WHERE research_id = $1', [researchId]);
    expect(rows).toEqual([{ text: 'focus on  Spain \ufffd' }]);
    await store.events.append(researchId, [{ key: 'steer:1', type: 'steer', data: { kind: 'guidance', summary: 'x\u0000\udfff' } }]);
    const events = await store.events.after(researchId, 0, 10);
    expect(events.map((e) => e.data)).toEqual([{ kind: 'guidance', summary: 'x\ufffd' }]);
  });

  it('turns a data exception (SQLSTATE class 22) into a non-retryable failure', async () => {
    const err = await pool.query("SELECT 'not a number'::int").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((err as ApplicationFailure).message).toMatch(/SQLSTATE 22P02/);
    // Other errors keep their class: a missing table is not the data's fault.
    const other = await pool.query('SELECT * FROM no_such_table_here').catch((e: unknown) => e);
    expect(other).not.toBeInstanceOf(ApplicationFailure);
  });
});
