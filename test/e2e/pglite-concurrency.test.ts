// The embedded database (PGlite behind a loopback socket) is one PostgreSQL session shared by every
// pooled connection. These tests load it from many connections at once, as the service does, and
// check that no statement runs with another connection's parameters or hands back another query's
// rows, that a transaction sees none of another connection's statements, and that notifications
// reach the connection that listens (issue 38).
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenForRunEvents, RUN_EVENTS_CHANNEL } from '../../src/activities/store/event-wakeups';
import { createLogger } from '../../src/infra/logger';
import { servePglite } from '../../src/infra/pglite-server';
import { createPool, startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/infra/postgres';
import { freePort } from '../support/spawn';

const ROUNDS = 300;

describe('embedded PostgreSQL under concurrent connections', () => {
  let dataDir: string;
  let embedded: EmbeddedPostgres;
  let pool: pg.Pool;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'pglite-conc-'));
    embedded = await startEmbeddedPostgres({ dataDir, port: await freePort(), log: createLogger('warn') });
    pool = createPool(embedded.url, 16);
    await pool.query('CREATE TABLE items (id serial PRIMARY KEY, tag text NOT NULL, n int NOT NULL, note text)');
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await embedded?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers each of 300 concurrent parameterised statements with its own rows, and runs every insert', async () => {
    // Seed rows that the point lookups read; each row's note names it, so a foreign row shows.
    const seeded = await pool.query<{ id: number }>(
      `INSERT INTO items (tag, n, note) SELECT 'seed', g, 'seed-' || g FROM generate_series(1, 50) g RETURNING id`,
    );
    const seedIds = seeded.rows.map((r) => r.id);
    const problems: string[] = [];
    const inserted: number[] = [];
    const jobs = Array.from({ length: ROUNDS }, async (_, i) => {
      const kind = i % 10 === 9 ? 'tx' : (['insert', 'select', 'sum', 'series'] as const)[i % 4];
      switch (kind) {
        case 'tx': {
          // Transactions among the statements: it is when one ends that the connections queued
          // behind it used to interleave their Parse/Bind/Execute.
          const client = await pool.connect();
          try {
            await client.query('BEGIN');
            const r = await client.query<{ id: number }>('INSERT INTO items (tag, n, note) VALUES ($1, $2, $3) RETURNING id', [
              `tx-ins-${i}`,
              i,
              'in a transaction',
            ]);
            const back = await client.query<{ tag: string }>('SELECT tag FROM items WHERE id = $1', [r.rows[0]?.id]);
            await client.query('COMMIT');
            if (back.rows[0]?.tag !== `tx-ins-${i}`) problems.push(`tx ${i}: ${JSON.stringify(back.rows)}`);
          } finally {
            client.release();
          }
          return;
        }
        case 'insert': {
          // Three parameters, and a row back that must carry them.
          const tag = `ins-${i}`;
          const r = await pool.query<{ id: number; tag: string; n: number }>(
            'INSERT INTO items (tag, n, note) VALUES ($1, $2, $3) RETURNING id, tag, n',
            [tag, i, `note-${i}`],
          );
          const row = r.rows[0];
          if (r.rows.length !== 1 || row?.tag !== tag || row.n !== i) problems.push(`insert ${i}: ${JSON.stringify(r.rows)}`);
          else inserted.push(row.id);
          return;
        }
        case 'select': {
          const k = i % seedIds.length;
          const r = await pool.query<{ id: number; note: string }>('SELECT id, note FROM items WHERE id = $1', [seedIds[k]]);
          const row = r.rows[0];
          if (r.rows.length !== 1 || row?.id !== seedIds[k] || row?.note !== `seed-${k + 1}`)
            problems.push(`select ${i}: ${JSON.stringify(r.rows)}`);
          return;
        }
        case 'sum': {
          // Two parameters, and an answer computed from them.
          const r = await pool.query<{ s: number; label: string }>('SELECT $1::int + $2::int AS s, $1::text AS label', [i, 1000]);
          const row = r.rows[0];
          if (r.rows.length !== 1 || row?.s !== i + 1000 || row.label !== String(i)) problems.push(`sum ${i}: ${JSON.stringify(r.rows)}`);
          return;
        }
        default: {
          // Five parameters, several rows back.
          const r = await pool.query<{ g: number }>(
            'SELECT g FROM generate_series($1::int, $2::int) g WHERE g <> $3 AND g <> $4 AND g <> $5',
            [i, i + 5, i + 1, i + 2, -1],
          );
          const got = r.rows.map((x) => x.g).join(',');
          if (got !== [i, i + 3, i + 4, i + 5].join(',')) problems.push(`series ${i}: ${got}`);
        }
      }
    });
    const settled = await Promise.allSettled(jobs);
    for (const s of settled) if (s.status === 'rejected') problems.push(`error: ${(s.reason as Error).message}`);
    expect(problems).toEqual([]);
    const inserts = Array.from({ length: ROUNDS }, (_, i) => i).filter((i) => i % 10 !== 9 && i % 4 === 0).length;
    const txs = Math.floor(ROUNDS / 10);
    const { rows } = await pool.query<{ plain: number; tx: number }>(
      `SELECT count(*) FILTER (WHERE tag LIKE 'ins-%')::int AS plain, count(*) FILTER (WHERE tag LIKE 'tx-ins-%')::int AS tx FROM items`,
    );
    expect(rows[0]).toEqual({ plain: inserts, tx: txs });
    expect(new Set(inserted).size).toBe(inserts);
  }, 120_000);

  it("keeps a transaction to its own connection's statements while others run", async () => {
    const others: Promise<unknown>[] = [];
    const txs = Array.from({ length: 8 }, async (_, t) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO items (tag, n) VALUES ($1, $2)', [`txn-${t}`, t]);
        // Other connections write while this transaction is open; none of that may join it.
        others.push(pool.query('INSERT INTO items (tag, n) VALUES ($1, $2)', [`outside-${t}`, t]));
        await new Promise((r) => setTimeout(r, 20));
        await client.query('INSERT INTO items (tag, n) VALUES ($1, $2)', [`txn-${t}`, t + 100]);
        await client.query(t % 2 ? 'COMMIT' : 'ROLLBACK');
      } finally {
        client.release();
      }
    });
    await Promise.all(txs);
    await Promise.all(others);
    const { rows } = await pool.query<{ tag: string; k: number }>(
      `SELECT tag, count(*)::int AS k FROM items WHERE tag LIKE 'txn-%' OR tag LIKE 'outside-%' GROUP BY tag ORDER BY tag`,
    );
    const want = [
      ...Array.from({ length: 8 }, (_, t) => ({ tag: `outside-${t}`, k: 1 })),
      ...[1, 3, 5, 7].map((t) => ({ tag: `txn-${t}`, k: 2 })),
    ].sort((a, b) => a.tag.localeCompare(b.tag));
    expect(rows).toEqual(want);
  }, 60_000);

  it('rolls back the transaction of a connection that goes away, and serves the others', async () => {
    const raw = new pg.Client({ connectionString: embedded.url });
    await raw.connect();
    raw.on('error', () => undefined);
    await raw.query('BEGIN');
    await raw.query(`INSERT INTO items (tag, n) VALUES ('abandoned', 1)`);
    // The socket dies without COMMIT or ROLLBACK.
    (raw as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
    const { rows } = await pool.query<{ k: number }>(`SELECT count(*)::int AS k FROM items WHERE tag = 'abandoned'`);
    expect(rows[0]?.k).toBe(0);
    const tx = await pool.query<{ t: boolean }>('SELECT now() = statement_timestamp() AS t');
    expect(tx.rows[0]?.t).toBe(true); // a fresh implicit transaction, not the abandoned one
  }, 30_000);

  it('delivers a notification to the connection that listens, not to the one that sent it', async () => {
    const listener = await pool.connect();
    const sender = await pool.connect();
    const heard: string[] = [];
    const senderHeard: string[] = [];
    listener.on('notification', (n) => heard.push(`${n.channel}:${n.payload}`));
    sender.on('notification', (n) => senderHeard.push(`${n.channel}:${n.payload}`));
    try {
      await listener.query('LISTEN conc_test');
      await sender.query('SELECT pg_notify($1, $2)', ['conc_test', 'one']);
      await pool.query(`NOTIFY conc_test, 'two'`);
      await sender.query('SELECT pg_notify($1, $2)', ['elsewhere', 'ignored']);
      const deadline = Date.now() + 5_000;
      while (heard.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(heard).toEqual(['conc_test:one', 'conc_test:two']);
      expect(senderHeard).toEqual([]);
      await listener.query('UNLISTEN conc_test');
      await sender.query('SELECT pg_notify($1, $2)', ['conc_test', 'three']);
      await new Promise((r) => setTimeout(r, 100));
      expect(heard).toEqual(['conc_test:one', 'conc_test:two']);
    } finally {
      listener.release(true);
      sender.release();
    }
  }, 30_000);

  it("wakes the service's event streams by notification instead of leaving them to poll", async () => {
    const wakeups = listenForRunEvents(pool, createLogger('warn'), { probeMs: 5_000 });
    try {
      const deadline = Date.now() + 5_000;
      while (!wakeups.live && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(wakeups.live).toBe(true);
      const woken: string[] = [];
      const stop = wakeups.subscribe('run-a', () => woken.push('run-a'));
      await pool.query('SELECT pg_notify($1, $2)', [RUN_EVENTS_CHANNEL, 'run-b']);
      await pool.query('SELECT pg_notify($1, $2)', [RUN_EVENTS_CHANNEL, 'run-a']);
      while (!woken.length && Date.now() < deadline + 2_000) await new Promise((r) => setTimeout(r, 20));
      expect(woken).toEqual(['run-a']);
      stop();
    } finally {
      await wakeups.close();
    }
  }, 30_000);
});

describe('embedded PostgreSQL: a connection idle inside a transaction', () => {
  it('is cut after the hold timeout and rolled back, and the connection waiting behind it is served', async () => {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create(); // in memory
    const server = await servePglite(db, { host: '127.0.0.1', port: 0, holdTimeoutMs: 300 });
    const url = `postgres://postgres@127.0.0.1:${server.port}/postgres`;
    const idle = new pg.Client({ connectionString: url });
    const other = new pg.Client({ connectionString: url });
    const idleErrors: string[] = [];
    idle.on('error', (err) => idleErrors.push(err.message));
    try {
      await Promise.all([idle.connect(), other.connect()]);
      await other.query('CREATE TABLE held (n int)');
      await idle.query('BEGIN');
      await idle.query('INSERT INTO held VALUES ($1)', [1]);
      // The idle client never commits; the other waits for the session until the idle one is cut.
      const started = Date.now();
      const { rows } = await other.query<{ k: number }>('SELECT count(*)::int AS k FROM held');
      expect(rows[0]?.k).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      await expect(idle.query('SELECT 1')).rejects.toThrow();
      expect(idleErrors.join(' ')).toMatch(/held the embedded database idle inside a transaction|terminated/);
    } finally {
      await other.end();
      await idle.end().catch(() => undefined);
      await server.close();
      await db.close();
    }
  }, 60_000);
});
