// Rate limits are charged by the route the router matched, not by the raw path: every spelling
// Express routes the same way (a trailing slash, another letter case) costs what the route
// costs. Everything that starts runs is a submit (research, schedules and their triggers and
// resumes, chat completions, report rewrites); adding a document is an upload; the rest, and
// requests no route took or whose body was refused before one did, are reads.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app';
import { createKnowledgeService } from '../../src/api/knowledge-service';
import { createResearchService } from '../../src/api/research-service';
import { createScheduleService } from '../../src/api/schedule-service';
import { createStore } from '../../src/activities/store';
import { createLogger } from '../../src/infra/logger';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const LIMITS = { submits: 2, uploads: 3, reads: 5 };
const NO_SCHEDULE = `schedule-${'0'.repeat(32)}`;
const NO_COLLECTION = `C${'0'.repeat(16)}`;

describe.skipIf(!ready)(`rate limits by matched route (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  /** An open API (tenant from X-Tenant-Id) with every route and small limits. */
  function limitedApp() {
    const store = createStore(h.pool);
    const research = createResearchService({ client: h.client, taskQueue: h.taskQueue, store });
    return createApp({
      research,
      schedules: createScheduleService({ client: h.client, research, minIntervalMs: 60_000, reports: store.scheduledReports }),
      knowledge: {
        service: createKnowledgeService({ client: h.client, taskQueue: h.taskQueue, store, limits: h.config.knowledge }),
        maxFileBytes: h.config.knowledge.maxFileBytes,
      },
      auth: { envKeys: [], table: store.apiKeys, open: true },
      events: store.events,
      rateLimits: LIMITS,
      readiness: {},
      log: createLogger('error'),
    });
  }

  type Send = (app: ReturnType<typeof createApp>, tenant: string) => request.Test;
  const tenantName = () => `rl-${randomUUID().slice(0, 8)}`;

  /**
   * Sends the request as often as `kind` allows (each answered `status`, with that class's
   * RateLimit-Limit), then once more: refused with 429 naming the class. A fresh tenant each time.
   */
  async function spendsOnly(app: ReturnType<typeof createApp>, send: Send, kind: keyof typeof LIMITS, status: number) {
    const tenant = tenantName();
    for (let i = 0; i < LIMITS[kind]; i++) {
      const res = await send(app, tenant);
      expect(res.status, `request ${i + 1}: ${JSON.stringify(res.body)}`).toBe(status);
      expect(res.headers['ratelimit-limit']).toBe(String(LIMITS[kind]));
      expect(res.headers['ratelimit-remaining']).toBe(String(LIMITS[kind] - 1 - i));
    }
    const over = await send(app, tenant);
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: 'rate_limited', details: { limit: kind } });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    return tenant;
  }

  it('charges a submit for POST /v1/research however the path is spelled', async () => {
    for (const path of ['/v1/research', '/v1/research/', '/v1/RESEARCH', '/v1/Research/', '/v1/rEsEaRcH']) {
      const app = limitedApp();
      const tenant = await spendsOnly(app, (a, t) => request(a).post(path).set('x-tenant-id', t).send({ question: '' }), 'submits', 400);
      // Its reads are untouched: the submits went to the submits bucket, whatever the spelling.
      const read = await request(app).get('/v1/research/research-nope').set('x-tenant-id', tenant).expect(404);
      expect(read.headers['ratelimit-limit']).toBe(String(LIMITS.reads));
      expect(read.headers['ratelimit-remaining']).toBe(String(LIMITS.reads - 1));
    }
  });

  it('charges a submit for a schedule, its trigger and its resume, however spelled', async () => {
    const paths = [
      ['/v1/schedules', 400],
      ['/v1/SCHEDULES/', 400],
      [`/v1/schedules/${NO_SCHEDULE}/trigger`, 404],
      [`/v1/Schedules/${NO_SCHEDULE}/TRIGGER/`, 404],
      [`/v1/schedules/${NO_SCHEDULE}/resume`, 404],
      [`/v1/schedules/${NO_SCHEDULE}/Resume/`, 404],
    ] as const;
    for (const [path, status] of paths) {
      await spendsOnly(limitedApp(), (a, t) => request(a).post(path).set('x-tenant-id', t).send({}), 'submits', status);
    }
    // Pausing starts nothing: a read.
    const pause = await request(limitedApp()).post(`/v1/schedules/${NO_SCHEDULE}/pause`).set('x-tenant-id', tenantName()).send({});
    expect([pause.status, pause.headers['ratelimit-limit']]).toEqual([404, String(LIMITS.reads)]);
  });

  it('charges a submit for a chat completion and a report rewrite, a read for the report itself', async () => {
    for (const path of ['/v1/chat/completions', '/v1/Chat/Completions/']) {
      await spendsOnly(limitedApp(), (a, t) => request(a).post(path).set('x-tenant-id', t).send({}), 'submits', 400);
    }
    for (const path of ['/v1/research/research-nope/report', '/v1/RESEARCH/research-nope/Report/']) {
      await spendsOnly(limitedApp(), (a, t) => request(a).post(path).set('x-tenant-id', t).send({ reportLength: 'brief' }), 'submits', 404);
    }
    const app = limitedApp();
    const tenant = tenantName();
    const get = await request(app).get('/v1/research/research-nope/report').set('x-tenant-id', tenant).expect(404);
    expect(get.headers['ratelimit-limit']).toBe(String(LIMITS.reads));
  });

  it('charges an upload for a new document, however spelled', async () => {
    for (const path of [`/v1/collections/${NO_COLLECTION}/documents`, `/v1/COLLECTIONS/${NO_COLLECTION}/Documents/`]) {
      await spendsOnly(
        limitedApp(),
        (a, t) =>
          request(a)
            .post(path)
            .set('x-tenant-id', t)
            .attach('file', Buffer.from('some text'), { filename: 'a.txt', contentType: 'text/plain' }),
        'uploads',
        404,
      );
    }
  });

  it('charges a read for a request no route takes, and for a body refused before a route', async () => {
    await spendsOnly(limitedApp(), (a, t) => request(a).get('/v1/no-such-thing').set('x-tenant-id', t), 'reads', 404);
    // Not JSON: refused by the body parser before the submit route is reached, so a read, and
    // no run started either way.
    await spendsOnly(
      limitedApp(),
      (a, t) => request(a).post('/v1/research').set('x-tenant-id', t).set('content-type', 'application/json').send('{'),
      'reads',
      400,
    );
  });

  it('charges every request once: a refused submit does not also spend a read', async () => {
    const app = limitedApp();
    const tenant = tenantName();
    await request(app).post('/v1/research').set('x-tenant-id', tenant).send({ question: '' }).expect(400);
    const read = await request(app).get('/v1/research/research-nope').set('x-tenant-id', tenant).expect(404);
    expect(read.headers['ratelimit-remaining']).toBe(String(LIMITS.reads - 1));
  });
});
