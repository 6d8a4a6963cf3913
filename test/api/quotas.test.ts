// One tenant cannot take the service from the others: what it holds (collections, documents,
// stored bytes, schedules) answers 403 quota_exceeded once full, what it does at once (event
// streams, runs in flight) 429; each names the quota, another tenant is untouched, and a burst of
// parallel requests cannot all pass the same count. A cron that starts more often than
// SCHEDULE_MIN_INTERVAL is refused like such an `every`. Every run gets the operator's token
// budget when its request sets none, may not ask for more, shows it, and stops when it is spent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { planJson, researchRules, stepTitleOf } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const RUN_MAX_TOKENS = 4_000;

describe.skipIf(!ready)(`per-tenant quotas (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let server: http.Server;
  let base: string;
  const tenants: string[] = [];
  const schedules: [string, string][] = [];
  const runs: [string, string][] = [];

  beforeAll(async () => {
    h = await startHarness({
      env: {
        TENANT_MAX_COLLECTIONS: '2',
        TENANT_MAX_DOCUMENTS: '3',
        TENANT_MAX_STORED_BYTES: '1000',
        TENANT_MAX_SCHEDULES: '2',
        TENANT_MAX_STREAMS: '2',
        TENANT_MAX_RUNS_IN_FLIGHT: '2',
        SCHEDULE_MIN_INTERVAL: '5m',
        RUN_MAX_TOKENS: String(RUN_MAX_TOKENS),
      },
    });
    h.llm.script(researchRules());
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    if (!h) return;
    for (const [tenant, id] of schedules) await as(tenant, request(h.app).delete(`/v1/schedules/${id}`));
    for (const [tenant, id] of runs) await as(tenant, request(h.app).post(`/v1/research/${id}/cancel`));
    for (const tenant of tenants) {
      const listed = await as(tenant, request(h.app).get('/v1/collections'));
      for (const c of listed.body.collections ?? []) await as(tenant, request(h.app).delete(`/v1/collections/${c.id}`));
    }
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await h.close();
  });

  function newTenant(): string {
    const t = `quota-${randomBytes(4).toString('hex')}`;
    tenants.push(t);
    return t;
  }
  const as = (tenant: string, r: request.Test) => r.set('x-tenant-id', tenant);
  const expectQuota = (res: request.Response, status: number, quota: string, limit: number) => {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.error).toMatchObject({ code: 'quota_exceeded', details: { quota, limit } });
    expect(res.body.error.message).toMatch(new RegExp(`the ${quota} quota is ${limit} \\(TENANT_MAX_`));
  };

  async function submit(tenant: string, body: Record<string, unknown> = {}, key?: string) {
    const r = as(tenant, request(h.app).post('/v1/research'));
    if (key) r.set('idempotency-key', key);
    const res = await r.send({ question: 'How much cheaper has solar power become?', ...body });
    if (res.status === 202) runs.push([tenant, res.body.id]);
    return res;
  }
  const expectStatus = (res: request.Response, status: number) => {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    return res;
  };
  async function until<T>(what: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await what();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('collections: a third is 403 naming the quota, another tenant is untouched, a delete makes room', async () => {
    const t = newTenant();
    const make = (tenant: string, name: string) => as(tenant, request(h.app).post('/v1/collections')).send({ name, description: 'd' });
    const first = await make(t, 'one').expect(201);
    await make(t, 'two').expect(201);
    expectQuota(await make(t, 'three'), 403, 'collections', 2);
    await make(newTenant(), 'one').expect(201);
    await as(t, request(h.app).delete(`/v1/collections/${first.body.id}`)).expect(200);
    await make(t, 'three').expect(201);
  });

  it('collections: of six made at once, two are created', async () => {
    const t = newTenant();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => as(t, request(h.app).post('/v1/collections')).send({ name: `c${i}`, description: 'd' })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 403, 403, 403, 403]);
    const listed = await as(t, request(h.app).get('/v1/collections')).expect(200);
    expect(listed.body.collections).toHaveLength(2);
  });

  it("documents and stored bytes: counted across the tenant's collections, a duplicate is no new document", async () => {
    const t = newTenant();
    const collection = async (name: string) =>
      (await as(t, request(h.app).post('/v1/collections')).send({ name, description: 'd' }).expect(201)).body.id as string;
    const [a, b] = [await collection('a'), await collection('b')];
    const upload = (c: string, text: string) =>
      as(t, request(h.app).post(`/v1/collections/${c}/documents`)).attach('file', Buffer.from(text), {
        filename: `${text[0]}.txt`,
        contentType: 'text/plain',
      });
    await upload(a, 'a'.repeat(400)).expect(202);
    await upload(b, 'b'.repeat(400)).expect(202);
    // 800 bytes held: 300 more would pass 1000.
    const tooBig = await upload(a, 'c'.repeat(300));
    expectQuota(tooBig, 403, 'storedBytes', 1000);
    expect(tooBig.body.error.details.used).toBe(800);
    await upload(b, 'd'.repeat(100)).expect(202);
    // The same file again is the document it already is, not a fourth.
    expect((await upload(a, 'a'.repeat(400)).expect(200)).body.duplicate).toBe(true);
    expectQuota(await upload(a, 'e'.repeat(10)), 403, 'documents', 3);
  });

  it('schedules: a cron more often than SCHEDULE_MIN_INTERVAL is refused like such an every', async () => {
    const t = newTenant();
    const make = (body: Record<string, unknown>) =>
      as(t, request(h.app).post('/v1/schedules')).send({ question: 'Solar prices?', paused: true, ...body });
    // Every minute; every four; two starts a minute apart once a day; and across midnight.
    for (const cron of ['* * * * *', '*/4 * * * *', '0,1 6 * * *', '0,58 0,23 * * *']) {
      const refused = await make({ cron }).expect(400);
      expect(refused.body.error.code).toBe('invalid_schedule');
      expect(refused.body.error.message).toMatch(/at its closest.*at most once every 300s \(SCHEDULE_MIN_INTERVAL\)/);
    }
    const every = await make({ every: '1m' }).expect(400);
    expect(every.body.error.message).toMatch(/every must be at least 300s \(SCHEDULE_MIN_INTERVAL\)/);
    const ok = await make({ cron: '*/5 * * * *' }).expect(201);
    schedules.push([t, ok.body.id]);
    expect(ok.body.cron).toBe('*/5 * * * *');
  });

  it('schedules: a third is 403, a retry of one made passes, of five made at once two are made', async () => {
    const t = newTenant();
    const make = (tenant: string, key?: string) => {
      const r = as(tenant, request(h.app).post('/v1/schedules'));
      if (key) r.set('idempotency-key', key);
      return r.send({ question: 'Wind prices?', cron: '0 6 * * 1', paused: true });
    };
    const first = await make(t, 'first').expect(201);
    const second = await make(t).expect(201);
    schedules.push([t, first.body.id], [t, second.body.id]);
    expectQuota(await make(t), 403, 'schedules', 2);
    expect((await make(t, 'first').expect(200)).body.id).toBe(first.body.id);
    await as(t, request(h.app).delete(`/v1/schedules/${second.body.id}`)).expect(200);
    const third = await make(t).expect(201);
    schedules.push([t, third.body.id]);

    const burst = newTenant();
    const answers = await Promise.all(Array.from({ length: 5 }, () => make(burst)));
    for (const a of answers) if (a.status === 201) schedules.push([burst, a.body.id]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 403, 403, 403]);
  });

  it('runs in flight: a third is 429 until one ends; a retry of an Idempotency-Key passes, its run open or ended', async () => {
    const t = newTenant();
    const first = expectStatus(await submit(t), 202);
    const second = expectStatus(await submit(t, {}, 'run-key'), 202);
    const third = await submit(t);
    expectQuota(third, 429, 'runsInFlight', 2);
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
    // The Idempotency-Key's run is one of the two: its retry answers with it.
    expect(expectStatus(await submit(t, {}, 'run-key'), 200).body.id).toBe(second.body.id);
    // Another tenant is not held back by this one's runs.
    expectStatus(await submit(newTenant()), 202);
    await as(t, request(h.app).post(`/v1/research/${first.body.id}/cancel`)).expect(202);
    await h.client.workflow
      .getHandle(first.body.id)
      .result()
      .catch(() => undefined);
    // Visibility learns of the end a moment later.
    await until(async () => ((await submit(t)).status === 202 ? true : undefined));
    // At the quota again, with the Idempotency-Key's run ended: its retry is answered with that run, not refused.
    await as(t, request(h.app).post(`/v1/research/${second.body.id}/cancel`)).expect(202);
    await h.client.workflow
      .getHandle(second.body.id)
      .result()
      .catch(() => undefined);
    await until(async () => ((await submit(t)).status === 202 ? true : undefined));
    expectQuota(await submit(t), 429, 'runsInFlight', 2);
    expect(expectStatus(await submit(t, {}, 'run-key'), 200).body.id).toBe(second.body.id);
  });

  it('event streams: a third open stream is 429, and closing one frees its slot', async () => {
    const t = newTenant();
    const id = expectStatus(await submit(t), 202).body.id as string;
    const open = async () => {
      const abort = new AbortController();
      const res = await fetch(`${base}/v1/research/${id}/events`, { headers: { 'x-tenant-id': t }, signal: abort.signal });
      return { res, abort };
    };
    const streams = [await open(), await open()];
    expect(streams.map((s) => s.res.status)).toEqual([200, 200]);
    const third = await open();
    expect(third.res.status).toBe(429);
    const body = (await third.res.json()) as { error: { code: string; details: { quota: string } } };
    expect(body.error).toMatchObject({ code: 'quota_exceeded', details: { quota: 'streams' } });
    // A streamed chat completion is a stream too: refused before it starts a run.
    const before = runs.length;
    const chat = await as(t, request(h.app).post('/v1/chat/completions')).send({
      model: 'deep-research',
      stream: true,
      messages: [{ role: 'user', content: 'How much cheaper has solar power become?' }],
    });
    expectQuota(chat, 429, 'streams', 2);
    const listed = await until(async () => {
      const ids = (await as(t, request(h.app).get('/v1/research')).expect(200)).body.runs.map((r: { id: string }) => r.id) as string[];
      return ids.includes(id) ? ids : undefined;
    });
    expect(listed).toEqual([id]);
    expect(runs.length).toBe(before);
    streams[0]!.abort.abort();
    const again = await until(async () => {
      const s = await open();
      if (s.res.status === 200) return s;
      await s.res.body?.cancel();
      return undefined;
    }, 10_000);
    again.abort.abort();
    streams[1]!.abort.abort();
  });

  it('budget: a run without one gets RUN_MAX_TOKENS, shows it, and stops researching when it is spent', async () => {
    const t = newTenant();
    const tooMuch = expectStatus(await submit(t, { options: { maxTokens: RUN_MAX_TOKENS + 1 } }), 400);
    expect(tooMuch.body.error).toMatchObject({ code: 'budget_too_large', details: { maxTokens: RUN_MAX_TOKENS } });
    expect(tooMuch.body.error.message).toContain('RUN_MAX_TOKENS');

    const big = (req: ChatRequest): Reply => ({
      json: { text: `r ${stepTitleOf(req)}`, summary: 's' },
      usage: { prompt: 5_000, completion: 100 },
    });
    h.llm.script(researchRules({ researcher: big }, planJson([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }])));
    const id = expectStatus(await submit(t, { options: { autoAcceptPlan: true } }), 202).body.id as string;
    const r = (await h.client.workflow.getHandle(id).result()) as ResearchResult;
    expect(r.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'b', status: 'skipped', attempts: 0 },
    ]);
    expect(r.notes.join('\n')).toMatch(new RegExp(`the token budget \\(${RUN_MAX_TOKENS}\\) was spent`));
    const view = await as(t, request(h.app).get(`/v1/research/${id}`)).expect(200);
    expect(view.body.budget).toEqual({ maxTokens: RUN_MAX_TOKENS });
    expect(view.body.usage.promptTokens).toBeGreaterThan(RUN_MAX_TOKENS);

    // A request's own smaller budget is kept, and shown.
    h.llm.script(researchRules());
    const own = expectStatus(await submit(t, { options: { maxTokens: 3_000 } }), 202).body.id as string;
    const ownView = await as(t, request(h.app).get(`/v1/research/${own}`)).expect(200);
    expect(ownView.body.budget).toEqual({ maxTokens: 3_000 });
  });
});
