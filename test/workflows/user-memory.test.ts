// User memory end to end, with the scripted model: a first run of user U teaches two facts with
// the quotes they came from; the second run's planner and reporter prompts hold them; after the
// user deletes one, the third run's prompts do not, and neither a model that repeats it with the
// old quote nor a learning step fed the first run's words again brings it back. Another user of
// the tenant, another tenant, a request with options.memory false and a key made with memory off
// see and teach nothing.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, hashKey } from '../../src/api/auth';
import { runClientCommand } from '../../src/cli/commands';
import { createLlm } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { createUserMemoryActivities } from '../../src/activities/roles/user-memory';
import { createStore } from '../../src/activities/store';
import type { ResearchResult } from '../../src/shared/schemas';
import type { MemoryFact } from '../../src/shared/memory';
import type { LoggedRequest, Reply } from '../support/llm-server';
import { planJson, researchRules, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { recordHistories } from '../support/record-history';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const TENANT = `memory-${randomBytes(4).toString('hex')}`;
const OTHER_TENANT = `memory-other-${randomBytes(4).toString('hex')}`;
const U = 'hydro.user@example';
const V = 'someone-else';
const Q1 = 'As a hydrologist I prefer peer-reviewed sources: how fast do aquifers in Spain recharge?';
const FIELD = 'The user is a hydrologist.';
const SOURCES = 'The user prefers peer-reviewed sources.';

/** The memory role always proposes both facts with run 1's quotes, whatever the run. */
const repeatsRunOne: Reply = {
  json: {
    facts: [
      { category: 'field', text: FIELD, quotes: ['As a hydrologist'] },
      { category: 'sources', text: SOURCES, quotes: ['I prefer peer-reviewed sources'] },
    ],
  },
};

const promptOf = (r: LoggedRequest) => JSON.stringify(r.body.messages);

describe.skipIf(!ready)(`user memory (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  const keyIds: string[] = [];
  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules({ memory: repeatsRunOne }, planJson([{ id: 'a' }])));
  });
  afterAll(async () => {
    if (h) {
      const store = createStore(h.pool);
      await store.memory.purge(TENANT);
      await store.memory.purge(OTHER_TENANT);
      if (keyIds.length) await h.pool.query('DELETE FROM api_keys WHERE id = ANY($1)', [keyIds]);
    }
    await h?.close();
  });

  /** Runs a question to its end; returns its id and the model requests it made. */
  async function run(question: string, extra: { tenant?: string; userId?: string; options?: object; key?: string } = {}) {
    const from = h.llm.requests.length;
    let post = request(h.app).post('/v1/research');
    post = extra.key ? post.set('Authorization', `Bearer ${extra.key}`) : post.set('X-Tenant-Id', extra.tenant ?? TENANT);
    const res = await post
      .send({
        question,
        ...(extra.userId ? { userId: extra.userId } : {}),
        options: { autoAcceptPlan: true, maxResearchLoops: 0, ...extra.options },
      })
      .expect(202);
    const result = (await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
    const requests = h.llm.requests.slice(from);
    const of = (rule: string) => requests.filter((r) => r.rule === rule);
    return { id: res.body.id as string, requests, of };
  }
  const memory = async (userId: string, tenant = TENANT) =>
    (await request(h.app).get('/v1/memory').query({ userId }).set('X-Tenant-Id', tenant).expect(200)).body as {
      userId: string;
      facts: MemoryFact[];
    };
  const texts = (facts: MemoryFact[]) => facts.map((f) => f.text).sort();
  const activityTypes = async (id: string) =>
    ((await h.client.workflow.getHandle(id).fetchHistory()).events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((t): t is string => Boolean(t));

  it("learns from a user's run, uses it in the next, and forgets a deleted fact for good", async () => {
    // Run 1 teaches both facts, each with its quote from the question.
    const one = await run(Q1, { userId: U });
    expect(one.of('memory')).toHaveLength(1);
    expect(userText(one.of('memory')[0]!.body)).toContain(Q1);
    // Nothing was known yet: run 1's own prompts hold no memory.
    expect(one.requests.filter((r) => promptOf(r).includes('<user_memory>') && r.rule !== 'memory')).toEqual([]);
    // The run learns in the report's activity.
    recordHistories([[one.id, 'user-memory.json']]);
    const oneActivities = await activityTypes(one.id);
    expect(oneActivities).toContain('writeCheckedReport');
    expect(oneActivities).not.toContain('learnAboutUser');
    const learned = await memory(U);
    expect(texts(learned.facts)).toEqual([FIELD, SOURCES].sort());
    const field = learned.facts.find((f) => f.text === FIELD)!;
    expect(field.category).toBe('field');
    expect(field.evidence).toEqual([{ researchId: one.id, kind: 'question', quote: 'As a hydrologist', at: expect.any(String) }]);

    // Run 2: the coordinator's, planner's and reporter's prompts hold both facts in the block.
    const two = await run('What is the groundwater trend in Madrid?', { userId: U });
    for (const rule of ['coordinator', 'planner', 'reporter']) {
      const prompts = two.of(rule).map(promptOf);
      expect(prompts.length, rule).toBeGreaterThan(0);
      for (const p of prompts) {
        const block = /<user_memory>\\n([^<]*)\\n<\/user_memory>/.exec(p)?.[1];
        expect(block?.split('\\n').sort(), rule).toEqual([
          '- (field) The user is a hydrologist.',
          '- (sources) The user prefers peer-reviewed sources.',
        ]);
      }
    }
    // Its memory step repeated run 1's quotes, which run 2's words do not hold: nothing new.
    const afterTwo = await memory(U);
    expect(afterTwo.facts.map((f) => [f.text, f.evidence.length])).toEqual(learned.facts.map((f) => [f.text, 1]));
    expect((await request(h.app).get(`/v1/research/${two.id}`).set('X-Tenant-Id', TENANT).expect(200)).body.notes.join('\n')).not.toMatch(
      /User memory: \d+ fact/,
    );

    // Another user of the tenant and another tenant see nothing of it, in their lists and prompts.
    expect((await memory(V)).facts).toEqual([]);
    expect((await memory(U, OTHER_TENANT)).facts).toEqual([]);
    const other = await run('What is the groundwater trend in Lisbon?', { userId: V });
    const elsewhere = await run('What is the groundwater trend in Porto?', { userId: U, tenant: OTHER_TENANT });
    // (The memory step's own instructions give a hydrologist as their example: the users' words are what counts.)
    for (const r of [...other.requests, ...elsewhere.requests]) expect(userText(r.body)).not.toContain('hydrologist');
    // Their memory steps ran, and learned nothing from quotes their users never wrote.
    expect([other.of('memory').length, elsewhere.of('memory').length]).toEqual([1, 1]);
    expect((await memory(V)).facts).toEqual([]);
    expect((await memory(U, OTHER_TENANT)).facts).toEqual([]);
    // Another tenant cannot change or delete the fact: it does not exist for them.
    await request(h.app).delete(`/v1/memory/${field.id}`).set('X-Tenant-Id', OTHER_TENANT).expect(404);
    await request(h.app).patch(`/v1/memory/${field.id}`).set('X-Tenant-Id', OTHER_TENANT).send({ text: 'x' }).expect(404);

    // The user deletes the field fact.
    expect(
      (await request(h.app).delete(`/v1/memory/${field.id}`).set('X-Tenant-Id', TENANT).query({ userId: U }).expect(200)).body,
    ).toEqual({
      id: field.id,
      deleted: true,
    });
    expect(texts((await memory(U)).facts)).toEqual([SOURCES]);

    // Run 3: its prompts hold the remaining fact only; its memory step repeats the deleted fact
    // with run 1's quote, and it does not come back.
    const three = await run('How do aquifers recharge in Portugal?', { userId: U });
    for (const rule of ['coordinator', 'planner', 'reporter']) {
      for (const p of three.of(rule).map(promptOf)) {
        expect(p, rule).toContain('- (sources) The user prefers peer-reviewed sources.');
        expect(p, rule).not.toContain('hydrologist');
      }
    }
    expect(three.of('memory')).toHaveLength(1);
    expect(texts((await memory(U)).facts)).toEqual([SOURCES]);

    // Run 1's learning step again after the deletion (a late retry, or the same words fed once
    // more): its quote is grounded, but the deletion buried it, and the fact stays deleted.
    const config = h.config;
    const store = createStore(h.pool);
    const client = createLlmClient(config);
    const llm = createLlm({ config, calls: store.llmCalls, leases: store.llmLeases, client: () => client });
    const { learnAboutUser } = createUserMemoryActivities({ llm, store });
    const again = await new MockActivityEnvironment({
      activityId: 'learn-again',
      workflowExecution: { workflowId: one.id, runId: 'r' },
    }).run(() =>
      learnAboutUser({
        researchId: one.id,
        owner: { tenant: TENANT, userId: U },
        words: [{ kind: 'question', text: Q1, at: field.evidence[0]!.at }],
      }),
    );
    expect(again).toMatchObject({ learned: 0, rejected: 1 });
    expect(texts((await memory(U)).facts)).toEqual([SOURCES]);
  }, 240_000);

  it("retries the report's activity after the learning step's outage without asking for the report or its check again", async () => {
    const W = 'retry.user@example';
    h.llm.script(
      researchRules(
        { memory: (_req, n) => (n === 0 ? { status: 503, error: { message: 'the provider is overloaded' } } : repeatsRunOne) },
        planJson([{ id: 'a' }]),
      ),
    );
    try {
      const r = await run(Q1, { userId: W });
      expect([r.of('reporter').length, r.of('verify').length, r.of('memory').length]).toEqual([1, 1, 2]);
      const events = (await h.client.workflow.getHandle(r.id).fetchHistory()).events ?? [];
      const attempts = events.flatMap((e) =>
        e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt ?? 0] : [],
      );
      expect(Math.max(...attempts)).toBe(2);
      expect(await activityTypes(r.id)).not.toContain('learnAboutUser');
      expect(texts((await memory(W)).facts)).toEqual([FIELD, SOURCES].sort());
      const notes = (await request(h.app).get(`/v1/research/${r.id}`).set('X-Tenant-Id', TENANT).expect(200)).body.notes as string[];
      expect(notes.join('\n')).toMatch(/User memory: 2 facts about the user learned/);
    } finally {
      h.llm.script(researchRules({ memory: repeatsRunOne }, planJson([{ id: 'a' }])));
    }
  }, 120_000);

  it('corrects a fact, forgets everything, and refuses bad input with 400 or 404', async () => {
    const user = `corrector-${randomBytes(4).toString('hex')}`;
    await run('As a hydrologist I prefer peer-reviewed sources: what is a karst aquifer?', { userId: user });
    const [first] = (await memory(user)).facts;
    expect(first).toBeDefined();
    const fixed = await request(h.app)
      .patch(`/v1/memory/${first!.id}`)
      .set('X-Tenant-Id', TENANT)
      .send({ text: 'The user is a hydrogeologist.', category: 'expertise' })
      .expect(200);
    expect(fixed.body).toMatchObject({
      id: first!.id,
      text: 'The user is a hydrogeologist.',
      category: 'expertise',
      evidence: first!.evidence,
    });
    await request(h.app).patch(`/v1/memory/${first!.id}`).set('X-Tenant-Id', TENANT).send({}).expect(400);
    await request(h.app)
      .patch(`/v1/memory/${first!.id}`)
      .set('X-Tenant-Id', TENANT)
      .send({ text: 'x'.repeat(201) })
      .expect(400);
    await request(h.app).patch(`/v1/memory/${first!.id}`).set('X-Tenant-Id', TENANT).send({ category: 'mood' }).expect(400);
    await request(h.app).delete('/v1/memory/not-a-fact').set('X-Tenant-Id', TENANT).expect(400);
    await request(h.app).delete('/v1/memory/F0000000000000000').set('X-Tenant-Id', TENANT).expect(404);
    await request(h.app).get('/v1/memory').query({ userId: 'bad user id' }).set('X-Tenant-Id', TENANT).expect(400);
    const bad = await request(h.app).post('/v1/research').set('X-Tenant-Id', TENANT).send({ question: 'q', userId: '-nope' }).expect(400);
    expect(JSON.stringify(bad.body)).toMatch(/userId/);
    // The command line lists the facts with their quotes and deletes one, through the API.
    const server = http.createServer(h.app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out: string[] = [];
    const io = { out: (t: string) => void out.push(t), err: (t: string) => void out.push(t), ask: async () => undefined };
    // (The CLI sends no X-Tenant-Id: on this open API its requests are the `default` tenant's.)
    const cliTenant = 'default';
    const cliFact = await createStore(h.pool).memory.learn({ tenant: cliTenant, userId: user }, (known) => ({
      facts: [
        ...known,
        {
          id: 'F000000000000c11f',
          category: 'dislike',
          text: 'The user dislikes vendor blogs.',
          evidence: [{ researchId: 'r-cli', kind: 'feedback', quote: 'no vendor blogs', at: new Date().toISOString() }],
          createdAt: new Date().toISOString(),
          updatedAt: new Date().toISOString(),
        },
      ],
      changed: ['F000000000000c11f'],
      dropped: [],
    }));
    expect(cliFact.changed).toEqual(['F000000000000c11f']);
    try {
      expect(await runClientCommand('memory', ['list', '--user', user, '--api', api], { api, key: undefined }, io)).toBe(0);
      expect(out.join('')).toContain(
        'F000000000000c11f  [dislike] The user dislikes vendor blogs.\n      "no vendor blogs" (feedback in r-cli',
      );
      out.length = 0;
      expect(await runClientCommand('memory', ['delete', 'F000000000000c11f', '--api', api], { api, key: undefined }, io)).toBe(0);
      expect(out.join('')).toBe('F000000000000c11f deleted\n');
    } finally {
      server.close();
      for (const table of ['user_facts', 'user_fact_tombstones'])
        await h.pool.query(`DELETE FROM ${table} WHERE tenant = $1 AND user_id = $2`, [cliTenant, user]);
    }
    expect((await memory(user, cliTenant)).facts).toEqual([]);

    const forgot = await request(h.app).delete('/v1/memory').query({ userId: user }).set('X-Tenant-Id', TENANT).expect(200);
    expect(forgot.body).toEqual({ userId: user, deleted: 2 });
    expect((await memory(user)).facts).toEqual([]);
    // Without userId the list is the caller's own: `default` on an open API without a key.
    expect((await request(h.app).get('/v1/memory').set('X-Tenant-Id', TENANT).expect(200)).body).toMatchObject({
      userId: 'default',
      enabled: true,
    });
  }, 240_000);

  it('uses and learns nothing with options.memory false, or with a key made with memory off', async () => {
    const user = 'private';
    const off = await run(Q1, { userId: user, options: { memory: false } });
    expect(off.of('memory')).toEqual([]);
    expect(off.requests.filter((r) => promptOf(r).includes('<user_memory>'))).toEqual([]);
    expect((await memory(user)).facts).toEqual([]);

    // A stored key with memory off: its user's runs neither read nor teach, even with facts stored
    // (taught here through the open API, which acts for any user of the tenant).
    const { id, key } = generateKey();
    keyIds.push(id);
    await createStore(h.pool).apiKeys.create({ id, tenant: TENANT, keyHash: hashKey(key), memory: false });
    try {
      await run(Q1, { userId: `key-${id}` });
      expect((await memory(`key-${id}`)).facts).toHaveLength(2);
      const byKey = await run('What is a confined aquifer?', { key });
      expect(byKey.of('memory')).toEqual([]);
      expect(byKey.requests.filter((r) => promptOf(r).includes('<user_memory>'))).toEqual([]);
      const own = await request(h.app).get('/v1/memory').set('Authorization', `Bearer ${key}`).expect(200);
      expect(own.body).toMatchObject({ tenant: TENANT, userId: `key-${id}`, enabled: false });
      expect(own.body.facts).toHaveLength(2);
    } finally {
      // A live stored key left behind would close the open API that later test files start.
      await h.pool.query('DELETE FROM api_keys WHERE id = $1', [id]);
    }
  }, 240_000);
});
