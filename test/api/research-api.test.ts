import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bySchema } from '../support/llm-server';
import { researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const auto = { autoAcceptPlan: true };

async function runsOnQueue(h: Harness): Promise<number> {
  let n = 0;
  for await (const _ of h.client.workflow.list({ query: `TaskQueue = "${h.taskQueue}"` })) n++;
  return n;
}

describe.skipIf(!ready)(`research API (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules());
  });
  afterAll(async () => h?.close());

  it.each([
    [{}, /question: /],
    [{ question: '   ' }, /question: question must not be empty/],
    [{ question: 'q', options: { maxSteps: 0 } }, /options.maxSteps: /],
    [{ question: 'q', options: { reviewTimeout: 'tomorrow' } }, /options.reviewTimeout: expected a duration/],
    [{ question: 'q', options: { colour: 'red' } }, /Unrecognized key.*colour/],
    [{ question: 'q', extra: 1 }, /Unrecognized key.*extra/],
  ])('rejects %j with 400 and the reason, starting nothing', async (body, message) => {
    const before = h.llm.requests.length;
    const res = await request(h.app).post('/v1/research').send(body).expect(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toMatch(message);
    expect(res.body.error.details[0].path).toBeTypeOf('string');
    expect(h.llm.requests.length).toBe(before);
  });

  it('rejects an oversized body with 413 and starts nothing', async () => {
    const before = h.llm.requests.length;
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'q', options: {}, padding: 'x'.repeat(70_000) })
      .expect(413);
    expect(res.body.error).toEqual({ code: 'payload_too_large', message: 'request body is too large' });
    expect(h.llm.requests.length).toBe(before);
  });

  it('rejects a body that is not JSON with 400 invalid_json', async () => {
    const res = await request(h.app).post('/v1/research').set('content-type', 'application/json').send('{"question": ').expect(400);
    expect(res.body.error.code).toBe('invalid_json');
  });

  it('rejects a bad tenant header and a bad Idempotency-Key', async () => {
    const t = await request(h.app).post('/v1/research').set('x-tenant-id', 'a b').send({ question: 'q' }).expect(400);
    expect(t.body.error.message).toMatch(/X-Tenant-Id/);
    const k = await request(h.app).post('/v1/research').set('idempotency-key', 'x'.repeat(201)).send({ question: 'q' }).expect(400);
    expect(k.body.error.message).toMatch(/Idempotency-Key/);
  });

  it('returns the same run for a repeated Idempotency-Key and 409 for a different body', async () => {
    const key = `key-${Date.now()}`;
    const first = await request(h.app)
      .post('/v1/research')
      .set('idempotency-key', key)
      .send({ question: 'same question', options: auto })
      .expect(202);
    const again = await request(h.app)
      .post('/v1/research')
      .set('idempotency-key', key)
      .send({ question: 'same question', options: auto })
      .expect(200);
    expect(again.body.id).toBe(first.body.id);
    await h.client.workflow.getHandle(first.body.id).result();
    const afterDone = await request(h.app)
      .post('/v1/research')
      .set('idempotency-key', key)
      .send({ question: 'same question', options: auto })
      .expect(200);
    expect(afterDone.body).toEqual({ id: first.body.id, status: 'completed' });
    const conflict = await request(h.app)
      .post('/v1/research')
      .set('idempotency-key', key)
      .send({ question: 'another question', options: auto })
      .expect(409);
    expect(conflict.body.error.code).toBe('idempotency_key_reused');
    // The same key from another tenant is another run.
    const other = await request(h.app)
      .post('/v1/research')
      .set('idempotency-key', key)
      .set('x-tenant-id', 'acme')
      .send({ question: 'same question', options: auto })
      .expect(202);
    expect(other.body.id).not.toBe(first.body.id);
    await h.client.workflow.getHandle(other.body.id).result();
  });

  it('refuses a cost budget when a model has no price, naming LLM_PRICES, and starts nothing', async () => {
    const before = h.llm.requests.length;
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'q', options: { maxCostUsd: 1 } })
      .expect(400);
    expect(res.body.error.code).toBe('cost_unknown');
    expect(res.body.error.message).toMatch(/options\.maxCostUsd needs the price of every model .*scripted-default.* set LLM_PRICES/);
    expect(res.body.error.details.unpriced).toEqual(['scripted-default']);
    expect(h.llm.requests.length).toBe(before);
  });

  it('refuses a maxOutage under RUN_MIN_OUTAGE (1m) with 400, for a run and a schedule, and starts nothing', async () => {
    const before = h.llm.requests.length;
    for (const maxOutage of ['0s', '59s']) {
      const run = await request(h.app).post('/v1/research').send({ question: 'q', options: { maxOutage } }).expect(400);
      expect(run.body.error).toMatchObject({ code: 'max_outage_too_short', details: { minOutage: '1m' } });
      expect(run.body.error.message).toMatch(new RegExp(`options.maxOutage is ${maxOutage}.*at least 1m \\(RUN_MIN_OUTAGE\\)`));
    }
    const schedule = await request(h.app)
      .post('/v1/schedules')
      .send({ question: 'q', every: '1h', options: { maxOutage: '0s' } })
      .expect(400);
    expect(schedule.body.error.code).toBe('max_outage_too_short');
    expect(h.llm.requests.length).toBe(before);
  });

  it('answers 404 for an unknown run and an unknown route', async () => {
    const res = await request(h.app).get('/v1/research/research-does-not-exist').expect(404);
    expect(res.body.error).toEqual({ code: 'not_found', message: 'no research run with id research-does-not-exist' });
    await request(h.app).get('/v1/nothing-here').expect(404);
  });

  it('reports a failed run with its reason', async () => {
    h.llm.script([{ match: bySchema('CoordinatorDecision'), reply: { status: 401, error: { message: 'Incorrect API key provided' } } }]);
    const res = await request(h.app).post('/v1/research').send({ question: 'will fail' }).expect(202);
    await expect(h.client.workflow.getHandle(res.body.id).result()).rejects.toThrow();
    const status = await request(h.app).get(`/v1/research/${res.body.id}`).expect(200);
    expect(status.body).toMatchObject({ status: 'failed', phase: 'done' });
    expect(status.body.error).toMatch(/401.*Check OPENAI_API_KEY/);
    // 401 is permanent: exactly one call, no retries.
    expect(h.llm.requests).toHaveLength(1);
    const { rows } = await h.pool.query('SELECT status, error FROM research_runs WHERE id = $1', [res.body.id]);
    expect(rows[0].status).toBe('failed');
    expect(rows[0].error).toMatch(/401/);
    h.llm.script(researchRules());
  });

  it('serves /healthz and /readyz', async () => {
    await request(h.app).get('/healthz').expect(200, { status: 'ok' });
    const ready = await request(h.app).get('/readyz').expect(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { temporal: { ok: true }, postgres: { ok: true } } });
  });

  it('puts the search attributes on the run for the Temporal UI', async () => {
    const res = await request(h.app)
      .post('/v1/research')
      .set('x-tenant-id', 'tenant-sa')
      .send({ question: 'attributes', options: auto })
      .expect(202);
    const handle = h.client.workflow.getHandle(res.body.id);
    await handle.result();
    const desc = await handle.describe();
    expect(desc.searchAttributes).toMatchObject({
      ResearchTenant: ['tenant-sa'],
      ResearchStatus: ['completed'],
      ResearchPhase: ['done'],
      ResearchStepCount: [2],
    });
    expect(await runsOnQueue(h)).toBeGreaterThan(0);
  });
});

describe.skipIf(!ready)(`without an LLM configured (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { OPENAI_BASE_URL: '', OPENAI_API_KEY: '' } });
  });
  afterAll(async () => h?.close());

  it('refuses a research request with 503 naming what to set, and starts nothing', async () => {
    const res = await request(h.app).post('/v1/research').send({ question: 'anything' }).expect(503);
    expect(res.body.error.code).toBe('llm_not_configured');
    expect(res.body.error.message).toMatch(/OPENAI_API_KEY/);
    expect(res.body.error.message).toMatch(/OPENAI_BASE_URL/);
    expect(await runsOnQueue(h)).toBe(0);
  });

  it('fails a run that reaches the worker at once, with the same message and no retries', async () => {
    const handle = await h.client.workflow.start('researchWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `research-direct-${Date.now()}`,
      args: [
        {
          question: 'q',
          tenant: 'default',
          options: {
            autoAcceptPlan: false,
            maxSteps: 4,
            maxConcurrentSteps: 4,
            maxReflectionAttempts: 2,
            maxPlanRevisions: 3,
            maxClarifications: 0,
            queryCount: 3,
            maxToolRounds: 8,
            maxCodeAttempts: 3,
            reviewTimeout: '24h',
            onReviewTimeout: 'approve',
          },
        },
      ],
    });
    const started = Date.now();
    await expect(handle.result()).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5_000);
    const history = await handle.fetchHistory();
    const failedActivity = history.events?.find((e) => e.activityTaskFailedEventAttributes);
    expect(failedActivity?.activityTaskFailedEventAttributes?.failure?.message).toMatch(/No LLM is configured\. Set OPENAI_API_KEY/);
    expect(failedActivity?.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.nonRetryable).toBe(true);
    expect(h.llm.requests).toHaveLength(0);
  });
});
