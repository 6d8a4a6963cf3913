// Keys and tenants: every /v1 route needs a key, the key decides the tenant, and a tenant sees and
// acts on its own runs only (another tenant's run is a 404 and nothing reaches its workflow). Keys
// live in API_KEYS or, hashed, in PostgreSQL; limits per tenant answer 429 with RateLimit headers.
import net, { type AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app';
import { generateKey, hashKey } from '../../src/api/auth';
import { createResearchService } from '../../src/api/research-service';
import { createStore } from '../../src/activities/store';
import { newFactId } from '../../src/activities/store/memory';
import { mergeFacts } from '../../src/shared/memory';
import { createLogger } from '../../src/infra/logger';
import { createPool } from '../../src/infra/postgres';
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

  /** What a standalone API server of these tests runs on: the harness's Temporal and database. */
  const serverBase = () => ({
    client: h.client,
    pool: h.pool,
    taskQueue: h.taskQueue,
    namespace: 'default',
    log: createLogger('error'),
    knowledge: h.config.knowledge,
  });

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
    const base = serverBase();
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

  it('says which port is taken when it cannot listen, and gives back the connection its event streams listen on', async () => {
    // A failed start's shutdown ends the pool, which waits for every client: the LISTEN client the
    // API takes before it listens must come back when the listen fails, or `dev` never exits.
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    const pool = createPool(databaseUrl()!, 2);
    try {
      const api = { ...h.config.api, host: '127.0.0.1', port, keys: [], rateLimits: { submits: 10, reads: 10, uploads: 10 } };
      await expect(startApiServer({ ...serverBase(), pool, api })).rejects.toThrow(
        new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use \\(the HTTP API; set API_PORT`),
      );
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    // Every client of the pool idle again (or closed) once the listener's connect has settled: a
    // listening client kept would never be; the bound only turns such a leak into a failure.
    let given = false;
    for (const end = Date.now() + 30_000; !given && Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
      given = pool.totalCount === pool.idleCount;
    expect(given).toBe(true);
    await pool.end();
  });

  it("keeps dev's loopback API open to tenant default's requests once keys are made; `api`, and dev with API_KEYS, then need a key and say how to make one", async () => {
    const base = serverBase();
    // A key made with `keys create` (for an OpenAI client, say).
    const { id: keyId, key: made } = generateKey();
    await createStore(h.pool).apiKeys.create({ id: keyId, tenant: 'acme', keyHash: hashKey(made), name: 'client' });
    const api = { ...h.config.api, host: '127.0.0.1', port: 0, keys: [], rateLimits: { submits: 10, reads: 10, uploads: 10 } };
    const dev = await startApiServer({ ...base, api, localOpen: true });
    const plain = await startApiServer({ ...base, api });
    const devWithEnvKeys = await startApiServer({ ...base, api: { ...api, keys: [{ key: ACME, tenant: 'acme' }] }, localOpen: true });
    try {
      expect([dev.open, plain.open, devWithEnvKeys.open]).toEqual([true, false, false]);
      // dev: no key is tenant default (the runs made before any key), a key is its tenant.
      const keyless = (await (await fetch(`${dev.url}/v1/keys/self`)).json()) as { tenant: string };
      expect(keyless.tenant).toBe('default');
      const keyed = (await (await fetch(`${dev.url}/v1/keys/self`, { headers: { authorization: bearer(made) } })).json()) as {
        tenant: string;
      };
      expect(keyed.tenant).toBe('acme');
      const unknown = await fetch(`${dev.url}/v1/keys/self`, { headers: { authorization: bearer('no-such-key-000000') } });
      expect(unknown.status).toBe(401);
      expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(
        /not known or was revoked: `deep-research keys list` shows the live ones, `deep-research keys create --tenant <tenant>` makes one/,
      );
      // api, and dev with API_KEYS: a key is needed, and the refusal says how to make one for
      // tenant default's runs.
      for (const closed of [plain, devWithEnvKeys]) {
        const refused = await fetch(`${closed.url}/v1/keys/self`);
        expect(refused.status).toBe(401);
        expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
          /this API needs a key: send Authorization: Bearer <key>\. Make one on the server with `npx deep-research keys create --tenant default` \(runs started without a key belong to tenant default\)/,
        );
      }
    } finally {
      await dev.close();
      await plain.close();
      await devWithEnvKeys.close();
      await createStore(h.pool).apiKeys.revoke(keyId);
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
    const created = await cli('create', '--tenant', 'hooli', '--name', 'ci', '--admin', '--json');
    expect(created.code).toBe(0);
    const { id, key, admin } = JSON.parse(created.out.trim().split('\n').at(-1)!) as { id: string; key: string; admin: boolean };
    expect(admin).toBe(true);
    await request(h.app).get('/v1/research/research-nope').set('authorization', bearer(key)).expect(404);
    const listed = await cli('list', '--tenant', 'hooli');
    expect(listed.out).toMatch(new RegExp(`${id}\\s+hooli\\s+\\S+\\s+live \\(admin\\)\\s+ci`));
    expect(listed.out).not.toContain(key);
    expect((await cli('revoke', id)).code).toBe(0);
    await request(h.app).get('/v1/research/research-nope').set('authorization', bearer(key)).expect(401);
    expect(await cli('revoke', id)).toMatchObject({ code: 1, out: expect.stringMatching(/no live key/) });
    expect((await cli('create')).code).toBe(2);
  });

  it("keeps each key to its own user's memory on every route; an admin key acts for any user of the tenant", async () => {
    const store = createStore(h.pool);
    const made: string[] = [];
    const key = async (o: { memory?: boolean; admin?: boolean } = {}) => {
      const k = generateKey();
      await store.apiKeys.create({ id: k.id, tenant: 'acme', keyHash: hashKey(k.key), ...o });
      made.push(k.id);
      return { ...k, user: `key-${k.id}` };
    };
    const [a, b, off, admin] = [await key(), await key(), await key({ memory: false }), await key({ admin: true })];
    const teach = (userId: string, text: string, quote: string) =>
      store.memory.learn({ tenant: 'acme', userId }, (known) =>
        mergeFacts(
          known,
          [{ category: 'field', text, evidence: [{ researchId: 'research-seed', kind: 'question', quote, at: new Date().toISOString() }] }],
          new Date().toISOString(),
          newFactId,
        ),
      );
    const as = (k: string, r: request.Test) => r.set('authorization', bearer(k));
    const texts = async (userId: string) => (await store.memory.list({ tenant: 'acme', userId })).map((f) => f.text).sort();
    try {
      await teach(a.user, 'The user is a hydrologist.', 'As a hydrologist');
      await teach(a.user, 'The user is a glaciologist.', 'As a glaciologist');
      await teach(b.user, 'The user is a baker.', 'As a baker');
      const [aFact, aOther] = await store.memory.list({ tenant: 'acme', userId: a.user });

      // B reads only its own facts; naming A is refused on every route that names a user.
      const own = await as(b.key, request(h.app).get('/v1/memory')).expect(200);
      expect(own.body).toMatchObject({ userId: b.user, facts: [{ text: 'The user is a baker.' }] });
      const refused = await as(b.key, request(h.app).get('/v1/memory').query({ userId: a.user })).expect(403);
      expect(refused.body.error).toMatchObject({ code: 'not_your_user', details: { userId: b.user } });
      await as(b.key, request(h.app).delete('/v1/memory').query({ userId: a.user })).expect(403);
      await as(b.key, request(h.app).post('/v1/research').send({ question: 'q', userId: a.user })).expect(403);
      await as(b.key, request(h.app).post('/v1/schedules').send({ question: 'q', every: '1h', userId: a.user })).expect(403);
      // A's fact ids are unknown to B: neither corrected nor deleted.
      await as(b.key, request(h.app).patch(`/v1/memory/${aFact!.id}`).send({ text: 'The user is a baker.' })).expect(404);
      await as(b.key, request(h.app).delete(`/v1/memory/${aFact!.id}`)).expect(404);
      expect(await texts(a.user)).toEqual(['The user is a glaciologist.', 'The user is a hydrologist.']);

      // What is said to A's run (feedback, an answer, guidance) would be learned as A's words: not from B.
      const run = (await as(a.key, request(h.app).post('/v1/research').send({ question: 'q' })).expect(202)).body.id as string;
      for (const end = Date.now() + 30_000; (await as(a.key, request(h.app).get(`/v1/research/${run}`))).body.phase !== 'reviewing';) {
        if (Date.now() > end) throw new Error('the plan never went to review');
        await new Promise((r) => setTimeout(r, 100));
      }
      const words = (k: string) => [
        as(k, request(h.app).post(`/v1/research/${run}/plan/revise`).send({ planVersion: 1, feedback: 'As a baker I want recipes' })),
        as(k, request(h.app).post(`/v1/research/${run}/clarification`).send({ answer: 'As a baker' })),
        as(k, request(h.app).post(`/v1/research/${run}/steer`).send({ kind: 'guidance', text: 'As a baker' })),
      ];
      for (const r of words(b.key)) expect((await r.expect(403)).body.error.code).toBe('not_your_user');
      const history = await h.client.workflow.getHandle(run).fetchHistory();
      expect(history.events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toEqual([]);
      // Approving carries no words: any key of the tenant may.
      await as(b.key, request(h.app).post(`/v1/research/${run}/plan/approve`).send({ planVersion: 1 })).expect(200);
      await h.client.workflow.getHandle(run).result();

      // Memory settings: a key turns its own off, never another key's, and never its own back on.
      await as(b.key, request(h.app).patch(`/v1/keys/self/${a.id}`).send({ memory: false })).expect(403);
      await as(off.key, request(h.app).patch(`/v1/keys/self/${off.id}`).send({ memory: true })).expect(403);
      await as(b.key, request(h.app).patch(`/v1/keys/self/${b.id}`).send({ memory: false })).expect(200);
      await as(b.key, request(h.app).patch(`/v1/keys/self/${b.id}`).send({ memory: true })).expect(403);
      const keys = await store.apiKeys.list('acme');
      expect(Object.fromEntries(keys.filter((k) => made.includes(k.id)).map((k) => [k.id, k.memory]))).toEqual({
        [a.id]: true,
        [b.id]: false,
        [off.id]: false,
        [admin.id]: true,
      });
      // A schedule made with a key whose memory is off runs without memory, even naming its own user.
      const schedule = await as(
        off.key,
        request(h.app).post('/v1/schedules').send({ question: 'q', every: '1h', userId: off.user }),
      ).expect(201);
      const handle = h.client.schedule.getHandle(schedule.body.id);
      try {
        const action = (await handle.describe()).action as { args?: [{ user?: unknown }] };
        expect(action.args?.[0]?.user).toEqual({ id: off.user, memory: false });
      } finally {
        await handle.delete();
      }

      // Admin keys (a stored one made with --admin, and the operator's API_KEYS) act for any user of the tenant.
      const byAdmin = await as(admin.key, request(h.app).get('/v1/memory').query({ userId: a.user })).expect(200);
      expect(byAdmin.body.facts.map((f: { text: string }) => f.text).sort()).toEqual(await texts(a.user));
      await as(admin.key, request(h.app).patch(`/v1/memory/${aFact!.id}`).send({ text: 'The user is a hydrogeologist.' })).expect(200);
      await as(ACME, request(h.app).delete(`/v1/memory/${aOther!.id}`)).expect(200);
      expect(await texts(a.user)).toEqual(['The user is a hydrogeologist.']);
      expect((await as(ACME, request(h.app).delete('/v1/memory').query({ userId: b.user })).expect(200)).body).toEqual({
        userId: b.user,
        deleted: 1,
      });
      await as(admin.key, request(h.app).patch(`/v1/keys/self/${off.id}`).send({ memory: true })).expect(200);
      expect((await store.apiKeys.ownerOf(hashKey(off.key)))?.memory).toBe(true);
      // Another tenant's admin key sees nothing of acme's users.
      const globex = await as(GLOBEX, request(h.app).get('/v1/memory').query({ userId: a.user })).expect(200);
      expect(globex.body.facts).toEqual([]);
      await as(GLOBEX, request(h.app).delete(`/v1/memory/${aFact!.id}`)).expect(404);
    } finally {
      await store.memory.purge('acme');
      await h.pool.query('DELETE FROM api_keys WHERE id = ANY($1)', [made]);
    }
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
