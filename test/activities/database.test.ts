import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { MIGRATIONS_DIR } from '../../src/infra/paths';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { createConversationActivities } from '../../src/activities/role-kit/conversation';
import { loadConfig } from '../../src/config';
import { createStore } from '../../src/activities/store';
import { createLogger } from '../../src/infra/logger';
import { migrate } from '../../src/infra/migrate';
import { initdbOnThread } from '../../src/infra/pglite-initdb';
import { createPool, startEmbeddedPostgres } from '../../src/infra/postgres';
import { databaseUrl, missingReason } from '../support/services';
import { freePort } from '../support/spawn';
import { researcherBudgets } from '../../src/activities/role-kit/tool-budget';

describe('embedded PostgreSQL (PGlite over its wire-protocol server)', () => {
  it('serves pg clients, runs migrations once and keeps data across restarts', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pglite-'));
    const log = createLogger('warn');
    const port = await freePort();
    const external = process.memoryUsage().external;
    let embedded = await startEmbeddedPostgres({ dataDir, port, log });
    // initdb ran on a thread that ended: this process holds one instance's heap (about 145 MB),
    // not initdb's as well (about 370 MB more while the collector had not freed it).
    expect((process.memoryUsage().external - external) / 2 ** 20).toBeLessThan(300);
    let pool = createPool(embedded.url, 4);
    const all = readdirSync(MIGRATIONS_DIR)
      .filter((f) => f.endsWith('.sql'))
      .sort();
    expect(all[0]).toBe('001_init.sql');
    expect(await migrate(pool)).toEqual(all);
    expect(await migrate(pool)).toEqual([]);
    const { recordRun } = createActivities({ config: { ...loadConfig({}), llm: {} as never }, pool }).store;
    await recordRun({
      id: 'r1',
      tenant: 't',
      question: 'q',
      status: 'running',
      usage: { promptTokens: 1, completionTokens: 2, costUsd: 0.5 },
    });
    // Concurrent queries from several pooled connections are queued, not lost.
    const counts = await Promise.all(Array.from({ length: 8 }, () => pool.query('SELECT count(*)::int AS n FROM research_runs')));
    expect(counts.map((r) => r.rows[0].n)).toEqual(Array(8).fill(1));
    await pool.end();
    await embedded.stop();

    embedded = await startEmbeddedPostgres({ dataDir, port, log });
    pool = createPool(embedded.url, 2);
    const { rows } = await pool.query('SELECT id, status, cost_usd FROM research_runs');
    expect(rows).toEqual([{ id: 'r1', status: 'running', cost_usd: '0.500000' }]);
    await pool.end();
    await embedded.stop();
  }, 60_000);

  it('says why a data directory could not be made', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'pglite-')), 'a-file');
    writeFileSync(file, 'not a directory');
    await expect(initdbOnThread(path.join(file, 'pg'), [])).rejects.toThrow(/embedded PostgreSQL could not create .*a-file\/pg: /);
  });

  it('refuses a port that is taken, naming the variable to change', async () => {
    const blocker = net.createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as net.AddressInfo).port)),
    );
    await expect(
      startEmbeddedPostgres({ dataDir: mkdtempSync(path.join(os.tmpdir(), 'pglite-')), port, log: createLogger('warn') }),
    ).rejects.toThrow(/already in use.*PGLITE_PORT/);
    blocker.close();
  });
});

describe.skipIf(!databaseUrl())(`store on PostgreSQL (${databaseUrl() ? 'live' : missingReason()})`, () => {
  it('records a run idempotently and keeps the first completion time', async () => {
    const pool = createPool(databaseUrl()!, 2);
    const { recordRun } = createActivities({ config: { ...loadConfig({}), llm: {} as never }, pool }).store;
    const id = `store-${Date.now()}`;
    const usage = { promptTokens: 10, completionTokens: 5, costUsd: 0.001 };
    await recordRun({ id, tenant: 'default', question: 'q', status: 'completed', outcome: 'answered_directly', usage });
    const first = (await pool.query('SELECT completed_at FROM research_runs WHERE id = $1', [id])).rows[0].completed_at;
    await recordRun({ id, tenant: 'default', question: 'q', status: 'completed', outcome: 'answered_directly', usage });
    const rows = (await pool.query('SELECT completed_at, prompt_tokens FROM research_runs WHERE id = $1', [id])).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0].completed_at).toEqual(first);
    await pool.end();
  });

  it('keeps the newest write of a run row and never leaves a terminal status', async () => {
    const pool = createPool(databaseUrl()!, 2);
    const { recordRun } = createActivities({ config: { ...loadConfig({}), llm: {} as never }, pool }).store;
    const id = `order-${Date.now()}`;
    const usage = { promptTokens: 1, completionTokens: 1, costUsd: 0 };
    const row = async () => (await pool.query('SELECT status, phase, write_seq FROM research_runs WHERE id = $1', [id])).rows[0];
    await recordRun({ id, tenant: 't', question: 'q', status: 'running', phase: 'researching', seq: 2, usage });
    // A write the workflow made earlier arrives late (a background write, a retried activity).
    await recordRun({ id, tenant: 't', question: 'q', status: 'running', phase: 'planning', seq: 1, usage });
    expect(await row()).toEqual({ status: 'running', phase: 'researching', write_seq: 2 });
    await recordRun({ id, tenant: 't', question: 'q', status: 'completed', phase: 'done', seq: 3, usage });
    await recordRun({ id, tenant: 't', question: 'q', status: 'running', phase: 'reporting', seq: 4, usage });
    expect(await row()).toEqual({ status: 'completed', phase: 'done', write_seq: 3 });
    await pool.end();
  });

  it('keeps one LLM call per call key', async () => {
    const pool = createPool(databaseUrl()!, 2);
    const calls = createStore(pool).llmCalls;
    const key = `run/${Date.now()}`;
    const call = {
      callKey: key,
      researchId: 'r',
      role: 'coordinator',
      model: 'm',
      promptName: 'coordinator',
      response: { a: 1 },
      usage: { promptTokens: 3, completionTokens: 4, costUsd: 0 },
      durationMs: 5,
    };
    await calls.record(call);
    await calls.record({ ...call, response: { a: 2 } });
    expect(await calls.find(key)).toEqual({ model: 'm', response: { a: 1 }, usage: { promptTokens: 3, completionTokens: 4, costUsd: 0 } });
    expect(await calls.find('nope')).toBeUndefined();
    await pool.end();
  });

  it("numbers a run's events without gaps or repeats when batches race, and skips keys it has", async () => {
    const pool = createPool(databaseUrl()!, 6);
    const events = createStore(pool).events;
    const id = `events-${Date.now()}`;
    const ev = (key: string) => ({ key, type: 't', data: { key } });
    // Six writers at once, batches and single events, overlapping keys (retried writes).
    await Promise.all([
      events.append(id, [ev('a'), ev('b'), ev('c')]),
      events.append(id, [ev('b'), ev('d')]),
      events.append(id, [ev('e')]),
      events.append(id, [ev('f'), ev('g'), ev('f')]),
      events.append(id, [ev('a'), ev('h')]),
      events.append(id, [ev('i'), ev('j'), ev('k'), ev('l')]),
    ]);
    const all = await events.after(id, 0, 100);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all.map((e) => e.data.key).sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l']);
    // A batch keeps its order.
    const keys = all.map((e) => e.data.key as string);
    expect(keys.indexOf('i')).toBeLessThan(keys.indexOf('j'));
    expect(keys.indexOf('k')).toBeLessThan(keys.indexOf('l'));
    await events.append(id, [ev('c'), ev('m')]);
    expect((await events.after(id, all.length, 100)).map((e) => [e.seq, e.data.key])).toEqual([[13, 'm']]);
    await pool.end();
  });

  it('saves a batch of sources in one statement as one write after another would', async () => {
    const pool = createPool(databaseUrl()!, 2);
    const store = createStore(pool);
    const id = `sources-${Date.now()}`;
    const src = (sourceId: string, provider: string, title: string, content: string) => ({
      sourceId,
      url: `https://x.test/${sourceId}`,
      title,
      content,
      provider,
    });
    await store.saveSources(id, [src('a', 'searxng', '', 'short'), src('b', 'searxng', 'B', 'bee')]);
    // In one batch: a longer snippet, then a crawl (which wins), for a; a shorter snippet for b.
    await store.saveSources(id, [
      src('a', 'tavily', 'A', 'a longer snippet'),
      src('a', 'crawl', 'A page', 'x'),
      src('b', 'tavily', 'B2', 'b'),
      src('c', 'searxng', 'C', 'c'),
    ]);
    const got = await store.getSources(id, ['a', 'b', 'c']);
    const byId = Object.fromEntries(got.map((g) => [g.sourceId, { title: g.title, content: g.content, provider: g.provider }]));
    expect(byId).toEqual({
      a: { title: 'A', content: 'x', provider: 'crawl' },
      b: { title: 'B', content: 'bee', provider: 'searxng' },
      c: { title: 'C', content: 'c', provider: 'searxng' },
    });
    await pool.end();
  });

  it("writes a search's tool result from one read of all its queries' sources, each query's hits in the order the search ranked them", async () => {
    const pool = createPool(databaseUrl()!, 2);
    const id = `tool-result-${Date.now()}`;
    const store = createStore(pool);
    const src = (sourceId: string) => ({
      sourceId,
      url: `https://x.test/${sourceId}`,
      title: sourceId.toUpperCase(),
      content: `${sourceId} text`,
      provider: 'searxng',
    });
    await store.saveSources(id, [src('a'), src('b'), src('c')]);
    const statements: string[] = [];
    const counted = new Proxy(pool, {
      get: (target, p) =>
        p === 'query' ? (text: string, values?: unknown[]) => (statements.push(text), target.query(text, values)) : Reflect.get(target, p),
    });
    const { appendToolResult } = createConversationActivities({ store: createStore(counted), budgets: researcherBudgets() });
    const out = await appendToolResult({
      researchId: id,
      convKey: 's1/1',
      seq: 2,
      toolCallId: 'call-1',
      search: [
        { query: 'first', sourceIds: ['b', 'a'] },
        { query: 'second', sourceIds: ['c', 'a'] },
        { query: 'third', sourceIds: [], error: 'HTTP 503' },
        { query: 'fourth', sourceIds: [] },
      ],
    });
    expect(statements.filter((q) => /FROM sources/.test(q))).toHaveLength(1);
    expect(out.sourceIds.sort()).toEqual(['a', 'b', 'c']);
    const [row] = await store.conversations.load(id, 's1/1');
    expect(row?.message).toEqual({
      role: 'tool',
      tool_call_id: 'call-1',
      content: [
        'Search "first":\n[b] B — https://x.test/b\nb text\n[a] A — https://x.test/a\na text',
        'Search "second":\n[c] C — https://x.test/c\nc text\n[a] A — https://x.test/a\na text',
        'Search "third" failed: HTTP 503',
        'Search "fourth":\n(no results)',
      ].join('\n\n'),
    });
    await pool.end();
  });
});
