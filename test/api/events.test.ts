// The run's events as server-sent events: a client that disconnects mid-run and comes back with
// Last-Event-ID, through an API that restarted meanwhile, gets every event exactly once, in order.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app';
import { createResearchService } from '../../src/api/research-service';
import { createStore, type EventsTable } from '../../src/activities/store';
import type { StreamSettings } from '../../src/api/events';
import { createLogger } from '../../src/infra/logger';
import { planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { readEvents } from '../support/sse';
import { RunEvent } from '../../src/shared/events';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`run events (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules({}, planJson([{ id: 'a' }, { id: 'b' }])));
  });
  afterAll(async () => h?.close());

  /** An API process of its own on a port: stopping it is an API restart. */
  async function apiProcess(eventStream?: StreamSettings, events?: Pick<EventsTable, 'after'>) {
    const store = createStore(h.pool);
    const app = createApp({
      ...(eventStream ? { eventStream } : {}),
      research: createResearchService({ client: h.client, taskQueue: h.taskQueue, store }),
      events: events ?? store.events,
      auth: { envKeys: [], table: store.apiKeys, open: true },
      rateLimits: h.config.api.rateLimits,
      readiness: {},
      log: createLogger('error'),
    });
    const server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      url,
      close: () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())),
    };
  }

  it('resumes after a disconnect and an API restart with Last-Event-ID: every event once, in order', async () => {
    const started = await request(h.app).post('/v1/research').send({ question: 'How much cheaper has solar become?' }).expect(202);
    const id = started.body.id as string;

    // First connection: read until the plan is up for review, then go away.
    const api1 = await apiProcess();
    const first = await readEvents(`${api1.url}/v1/research/${id}/events`, {
      until: (e) => e.type === 'phase' && e.data.phase === 'reviewing',
    });
    await api1.close();
    expect(first.ended).toBe(false);
    expect(first.events.map((e) => e.type)).toContain('started');
    const plan = first.events.find((e) => e.type === 'plan')!;
    expect(plan.data).toMatchObject({ version: 1, steps: [{ id: 'a' }, { id: 'b' }] });
    const last = first.events.at(-1)!;

    // The run goes on without anyone listening; the client comes back to another API process.
    await request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 1 }).expect(200);
    const api2 = await apiProcess();
    const second = await readEvents(`${api2.url}/v1/research/${id}/events`, { headers: { 'last-event-id': String(last.id) } });
    expect(second.ended).toBe(true);
    // A third client reads the whole log from the start.
    const whole = await readEvents(`${api2.url}/v1/research/${id}/events`);
    await api2.close();

    const resumed = [...first.events, ...second.events];
    expect(resumed).toEqual(whole.events);
    expect(whole.events.map((e) => e.id)).toEqual(whole.events.map((_, i) => i + 1));
    // Each event is as src/shared/events.ts declares it, with no field the schema leaves out.
    for (const e of whole.events) expect(RunEvent.parse(e)).toEqual(e);
    const types = whole.events.map((e) => e.type);
    expect(types[0]).toBe('started');
    expect(types.at(-1)).toBe('done');
    expect(types).toEqual(expect.arrayContaining(['phase', 'plan', 'step', 'search', 'verdict', 'usage', 'report']));
    expect(whole.events.find((e) => e.type === 'verdict')!.data).toMatchObject({
      step: expect.stringMatching(/^[ab]$/),
      attempt: 1,
      passed: true,
    });
    expect(whole.events.at(-1)!.data).toMatchObject({ status: 'completed', outcome: 'report' });
    const phases = whole.events.filter((e) => e.type === 'phase').map((e) => e.data.phase);
    // Phases in order; one that passed while a write was in flight (reporting) may be skipped.
    const order = ['coordinating', 'planning', 'reviewing', 'researching', 'reporting', 'done'];
    expect(phases.map((p) => order.indexOf(String(p)))).toEqual([...phases.map((p) => order.indexOf(String(p)))].sort((a, b) => a - b));
    // A run that can ask no clarifying question is classified in the background's activity: its
    // first phase is planning (classify-in-background).
    expect(phases).toEqual(expect.arrayContaining(['planning', 'reviewing', 'researching', 'done']));
    expect(phases).not.toContain('coordinating');
    for (const step of ['a', 'b']) {
      expect(whole.events.some((e) => e.type === 'step' && e.data.id === step && e.data.status === 'completed')).toBe(true);
    }
    const search = whole.events.find((e) => e.type === 'search')!;
    expect(search.data).toMatchObject({
      step: expect.stringMatching(/^[ab]$/),
      queries: [expect.objectContaining({ query: expect.any(String) })],
    });
  }, 60_000);

  it("is the tenant's only, and says why a bad Last-Event-ID is refused", async () => {
    const started = await request(h.app)
      .post('/v1/research')
      .send({ question: 'q', options: { autoAcceptPlan: true } })
      .expect(202);
    const id = started.body.id as string;
    await request(h.app).get(`/v1/research/${id}/events`).set('x-tenant-id', 'someone-else').expect(404);
    const bad = await request(h.app).get(`/v1/research/${id}/events`).set('last-event-id', 'abc').expect(400);
    expect(bad.body.error.message).toMatch(/Last-Event-ID/);
    await h.client.workflow.getHandle(id).result();
  });

  it('keeps a quiet stream alive without reading the log for each keep-alive', async () => {
    const started = await request(h.app).post('/v1/research').send({ question: 'How much cheaper has solar become?' }).expect(202);
    const id = started.body.id as string;
    const wakeups = createStore(h.pool).events.wakeups(createLogger('error'), { retryMs: 200 });
    try {
      await until(() => wakeups.live, 'the listener heard its own test notification');
      // The run waits for its plan's review: its log stays quiet.
      const api0 = await apiProcess();
      const upToReview = await readEvents(`${api0.url}/v1/research/${id}/events`, {
        until: (e) => e.type === 'phase' && e.data.phase === 'reviewing',
      });
      await api0.close();
      const store = createStore(h.pool);
      let reads = 0;
      const counted = { after: (...a: Parameters<EventsTable['after']>) => (reads++, store.events.after(...a)) };
      const api = await apiProcess({ wakeups, pollMs: 60_000, idleReadMs: 60_000, heartbeatMs: 100 }, counted);
      const abort = new AbortController();
      const res = await fetch(`${api.url}/v1/research/${id}/events`, {
        headers: { accept: 'text/event-stream', 'last-event-id': String(upToReview.events.at(-1)!.id) },
        signal: abort.signal,
      });
      let text = '';
      const reader = res.body!.getReader();
      const stopAt = Date.now() + 1_500;
      setTimeout(() => abort.abort(), 1_500);
      while (Date.now() < stopAt) {
        const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (chunk.done) break;
        text += new TextDecoder().decode(chunk.value);
      }
      await api.close();
      const keepAlives = text.split(': keep-alive').length - 1;
      expect(keepAlives).toBeGreaterThanOrEqual(8);
      // The first read only (and one more if the run happened to write meanwhile), not one per keep-alive.
      expect(reads).toBeLessThanOrEqual(2);
    } finally {
      await wakeups.close();
      await h.client.workflow.getHandle(id).terminate('test over');
    }
  }, 60_000);

  it('wakes a stream when its run writes an event: no reading every half second, and none lost when the listener reconnects', async () => {
    const wakeups = createStore(h.pool).events.wakeups(createLogger('error'), { retryMs: 200 });
    try {
      await until(() => wakeups.live, 'the listener heard its own test notification');
      // Streams read again only when woken: 60 s without a notification would time the test out.
      const store = createStore(h.pool);
      let reads = 0;
      const counted = { after: (...a: Parameters<EventsTable['after']>) => (reads++, store.events.after(...a)) };
      const api = await apiProcess({ wakeups, pollMs: 60_000, idleReadMs: 60_000, heartbeatMs: 60_000 }, counted);
      const started = await request(h.app)
        .post('/v1/research')
        .send({ question: 'How much cheaper has solar become?', options: { autoAcceptPlan: true } })
        .expect(202);
      const id = started.body.id as string;
      const halfway = await readEvents(`${api.url}/v1/research/${id}/events`, { until: (e) => e.type === 'plan', timeoutMs: 30_000 });

      // The listening connection is killed: streams poll until it is back, then it wakes them all.
      await h.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN run_events' AND pid <> pg_backend_pid()`,
      );
      await until(() => !wakeups.live, 'the listener saw its connection go');
      await until(() => wakeups.live, 'the listener reconnected');
      const rest = await readEvents(`${api.url}/v1/research/${id}/events`, {
        headers: { 'last-event-id': String(halfway.events.at(-1)!.id) },
        timeoutMs: 30_000,
      });
      await api.close();
      expect(rest.ended).toBe(true);
      const all = [...halfway.events, ...rest.events];
      expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
      expect(all.at(-1)!.type).toBe('done');
      // Far fewer reads than events: a read takes whatever arrived since the last one.
      expect(reads).toBeLessThanOrEqual(all.length + 4);
    } finally {
      await wakeups.close();
    }
  }, 60_000);
});

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); await new Promise((r) => setTimeout(r, 25))) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
  }
}
