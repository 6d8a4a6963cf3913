// Keys and tenants: every /v1 route needs a key, the key decides the tenant, and a tenant sees and
// acts on its own runs only (another tenant's run is a 404 and nothing reaches its workflow). Keys
// live in API_KEYS or, hashed, in PostgreSQL; limits per tenant answer 429 with RateLimit headers.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app';
import { generateKey, hashKey } from '../../src/api/auth';
import { createResearchService } from '../../src/api/research-service';
import { createStore } from '../../src/activities/store';
import { createLogger } from '../../src/infra/logger';
import { startApiServer } from '../../src/server';
import { researchRules } from '../support/research-script';
import { spawnCli } from '../support/spawn';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const ACME = 'acme-key-0123456789abcdef';
const GLOBEX = 'globex-key-0123456789abcdef';
const bearer = (key: string) => `Bearer ${key}`;

describe.skipIf(!ready)(`keys and tenants (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { API_KEYS: `${ACME}=acme,${GLOBEX}=globex` } });
    h.llm.script(researchRules());
  });
  afterAll(async () => h?.close());

  it('answers 401 without a key, with a wrong key and with a malformed header', async () => {
    const none = await request(h.app).get('/v1/research/research-x').expect(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(none.body.error).toMatchObject({ code: 'missing_key', message: expect.stringMatching(/Authorization: Bearer/) });
    const wrong = await request(h.app).get('/v1/research/research-x').set('authorization', bearer('not-a-key-at-all')).expect(401);
    expect(wrong.body.error.code).toBe('invalid_key');
    await request(h.app).post('/v1/research').set('authorization', `Basic ${ACME}`).send({ question: 'q' }).expect(401);
    // Health stays open for load balancers.
    await request(h.app).get('/healthz').expect(200);
  });

  it("hides a tenant's run from another: 404 on every route and no signal in its history", async () => {
    const started = await request(h.app).post('/v1/research').set('authorization', bearer(ACME)).send({ question: 'q' }).expect(202);
    const id = started.body.id as string;
    const handle = h.client.workflow.getHandle(id);
    for (const end = Date.now() + 30_000; ;) {
      const v = await request(h.app).get(`/v1/research/${id}`).set('authorization', bearer(ACME)).expect(200);
      if (v.body.phase === 'reviewing') break;
      if (Date.now() > end) throw new Error('the plan never went to review');
      await new Promise((r) => setTimeout(r, 100));
    }
    const asGlobex = (r: request.Test) => r.set('authorization', bearer(GLOBEX)).expect(404);
    await asGlobex(request(h.app).get(`/v1/research/${id}`));
    await asGlobex(request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 1 }));
    await asGlobex(request(h.app).post(`/v1/research/${id}/plan/revise`).send({ planVersion: 1, feedback: 'mine now' }));
    await asGlobex(request(h.app).post(`/v1/research/${id}/cancel`));
    await asGlobex(request(h.app).get(`/v1/research/${id}/report`));
    await asGlobex(request(h.app).get(`/v1/research/${id}/artifacts`));
    const history = await handle.fetchHistory();
    const touched = history.events!.filter(
      (e) =>
        e.workflowExecutionSignaledEventAttributes ||
        e.workflowExecutionUpdateAcceptedEventAttributes ||
        e.workflowExecutionCancelRequestedEventAttributes,
    );
    expect(touched).toEqual([]);
    // The owner can.
    await request(h.app).post(`/v1/research/${id}/plan/approve`).set('authorization', bearer(ACME)).send({ planVersion: 1 }).expect(200);
    await handle.result();
    const report = await request(h.app).get(`/v1/research/${id}/report`).set('authorization', bearer(ACME)).expect(200);
    expect(report.text).toMatch(/^# /);
    const desc = await handle.describe();
    expect(desc.searchAttributes.ResearchTenant).toEqual(['acme']);
  });

  it('takes the tenant from the key: a different X-Tenant-Id is refused', async () => {
    const res = await request(h.app)
      .post('/v1/research')
      .set('authorization', bearer(ACME))
      .set('x-tenant-id', 'globex')
      .send({ question: 'q' })
      .expect(400);
    expect(res.body.error.code).toBe('tenant_mismatch');
  });

  it('refuses to listen on a non-loopback address without any key, and runs open on loopback', async () => {
    const base = {
      client: h.client,
      pool: h.pool,
      taskQueue: h.taskQueue,
      namespace: 'default',
      log: createLogger('error'),
      knowledge: h.config.knowledge,
    };
    const rateLimits = { submits: 10, reads: 10, uploads: 10 };
    await expect(startApiServer({ ...base, api: { ...h.config.api, host: '0.0.0.0', port: 0, keys: [], rateLimits } })).rejects.toThrow(
      /without any API key.*set API_KEYS.*deep-research keys create/,
    );
    const open = await startApiServer({ ...base, api: { ...h.config.api, host: '127.0.0.1', port: 0, keys: [], rateLimits } });
    try {
      expect(open.open).toBe(true);
      const res = await fetch(`${open.url}/v1/research/research-nope`);
      expect(res.status).toBe(404);
    } finally {
      await open.close();
    }
  });

  it('accepts a key kept (hashed) in PostgreSQL until it is revoked', async () => {
    const store = createStore(h.pool);
    const { id, key } = generateKey();
    await store.apiKeys.create({ id, tenant: 'initech', keyHash: hashKey(key), name: 'test' });
    const { rows } = await h.pool.query('SELECT key_hash FROM api_keys WHERE id = $1', [id]);
    expect(rows[0].key_hash).toBe(hashKey(key));
    expect(JSON.stringify(rows)).not.toContain(key);
    const res = await request(h.app).get('/v1/research/research-nope').set('authorization', bearer(key)).expect(404);
    expect(res.body.error.code).toBe('not_found');
    expect(await store.apiKeys.revoke(id)).toBe(true);
    const revoked = await request(h.app).get('/v1/research/research-nope').set('authorization', bearer(key)).expect(401);
    expect(revoked.body.error.message).toMatch(/revoked/);
  });

  it('creates, lists and revokes keys with the CLI', async () => {
    const cli = async (...args: string[]) => {
      const p = spawnCli(['keys', ...args], { DATABASE_URL: databaseUrl()! });
      const closed = new Promise((r) => p.child.once('close', r)); // all output read
      const code = await p.exited(30_000);
      await closed;
      return { code, out: p.output() };
    };
    const created = await cli('create', '--tenant', 'hooli', '--name', 'ci', '--json');
    expect(created.code).toBe(0);
    const { id, key } = JSON.parse(created.out.trim().split('\n').at(-1)!) as { id: string; key: string };
    await request(h.app).get('/v1/research/research-nope').set('authorization', bearer(key)).expect(404);
    const listed = await cli('list', '--tenant', 'hooli');
    expect(listed.out).toMatch(new RegExp(`${id}\\s+hooli\\s+\\S+\\s+live\\s+ci`));
    expect(listed.out).not.toContain(key);
    expect((await cli('revoke', id)).code).toBe(0);
    await request(h.app).get('/v1/research/research-nope').set('authorization', bearer(key)).expect(401);
    expect(await cli('revoke', id)).toMatchObject({ code: 1, out: expect.stringMatching(/no live key/) });
    expect((await cli('create')).code).toBe(2);
  });

  it('limits each tenant on its own: 429 with RateLimit headers and Retry-After', async () => {
    const store = createStore(h.pool);
    const app = createApp({
      research: createResearchService({ client: h.client, taskQueue: h.taskQueue, store }),
      auth: { envKeys: h.config.api.keys, table: store.apiKeys, open: false },
      events: store.events,
      rateLimits: { submits: 2, reads: 3 },
      readiness: {},
      log: createLogger('error'),
    });
    for (let i = 0; i < 3; i++) {
      const ok = await request(app).get('/v1/research/research-nope').set('authorization', bearer(ACME)).expect(404);
      expect(ok.headers['ratelimit-limit']).toBe('3');
      expect(ok.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    const limited = await request(app).get('/v1/research/research-nope').set('authorization', bearer(ACME)).expect(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    // Another tenant is not slowed by acme's burst; submits have their own bucket.
    await request(app).get('/v1/research/research-nope').set('authorization', bearer(GLOBEX)).expect(404);
    const bad = { question: '' };
    await request(app).post('/v1/research').set('authorization', bearer(ACME)).send(bad).expect(400);
    await request(app).post('/v1/research').set('authorization', bearer(ACME)).send(bad).expect(400);
    const third = await request(app).post('/v1/research').set('authorization', bearer(ACME)).send(bad).expect(429);
    expect(third.headers['ratelimit-policy']).toBe('2;w=60');
  });
});
