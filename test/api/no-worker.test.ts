// When no worker polls (all stopped, a deploy in progress), the API still answers. A run's row
// keeps, with every write, the view the status query would answer: the status of an open run and of
// an ended one (for which a worker would replay the run's whole history) needs no worker at all. A
// row without a view (written by the previous release) gives the status from Temporal's visibility
// and the row's columns, marked stale. A review answers 503 with Retry-After. Never a 500.
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app';
import { createResearchService } from '../../src/api/research-service';
import { createStore } from '../../src/activities/store';
import { createLogger } from '../../src/infra/logger';
import { getStatusQuery } from '../../src/workflows/messages';
import { researchRules } from '../support/research-script';
import { runAwaitingReview } from '../support/awaiting-review';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

/** An API on the harness's Temporal and database whose status queries give up after a second. */
function apiWithoutWorker(h: Harness) {
  const store = createStore(h.pool);
  return createApp({
    research: createResearchService({ client: h.client, taskQueue: h.taskQueue, store, queryTimeoutMs: 1_000, updateTimeoutMs: 1_000 }),
    auth: { envKeys: [], table: store.apiKeys, open: true },
    events: store.events,
    rateLimits: h.config.api.rateLimits,
    readiness: {},
    log: createLogger('warn'),
  });
}

describe.skipIf(!ready)(`the API without a worker (${ready ? 'live' : missingReason()})`, () => {
  // Each test stops its harness's worker: a harness of its own each.
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => h?.close());

  it('answers from what was recorded, and 503 with Retry-After for a review', async () => {
    h.llm.script(researchRules());
    const { id, handle } = await runAwaitingReview(h);
    // The plan's row write runs in the background: wait until PostgreSQL has it.
    for (const end = Date.now() + 10_000; !(await h.pool.query('SELECT plan FROM research_runs WHERE id = $1', [id])).rows[0]?.plan;) {
      if (Date.now() > end) throw new Error('the plan was never recorded');
      await new Promise((r) => setTimeout(r, 100));
    }
    // What a worker answers for the run waiting for its review.
    const queried = await handle.query(getStatusQuery);
    h.worker.shutdown();
    await new Promise((r) => setTimeout(r, 500));

    const app = apiWithoutWorker(h);
    const started = Date.now();
    const full = await request(app).get(`/v1/research/${id}`).expect(200);
    expect(full.body).toEqual({ id, ...queried, budget: { maxTokens: h.config.api.runMaxTokens } });
    expect(full.body.notes.length + full.body.usage.promptTokens).toBeGreaterThan(0);
    // No query was tried: one would have waited out the second before giving up.
    expect(Date.now() - started).toBeLessThan(1_000);

    // A row the previous release wrote (a view with its last write only).
    await h.pool.query('UPDATE research_runs SET final_view = NULL WHERE id = $1', [id]);
    const view = await request(app).get(`/v1/research/${id}`).expect(200);
    expect(view.body).toMatchObject({
      id,
      status: 'awaiting_review',
      phase: 'reviewing',
      plan: {
        version: 1,
        title: 'Solar cost research plan',
        steps: [
          { id: 'a', status: 'pending' },
          { id: 'b', status: 'pending' },
        ],
      },
    });
    expect(view.body.stale).toMatch(/^no worker answered .*: this is what Temporal and PostgreSQL last recorded$/);

    const approve = await request(app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 1 }).expect(503);
    expect(approve.headers['retry-after']).toBe('5');
    expect(approve.body.error.code).toBe('no_worker');
    await handle.terminate('test over');
  }, 60_000);

  it('answers for an ended run in full from its row: the view the status query gives by replaying the run', async () => {
    h.llm.script(researchRules());
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'How much cheaper has solar power become?', options: { autoAcceptPlan: true } })
      .expect(202);
    const id = res.body.id as string;
    const handle = h.client.workflow.getHandle(id);
    await handle.result();
    // What a worker answers for the ended run: its history replayed, then the query.
    const replayed = await handle.query(getStatusQuery);
    expect(replayed).toMatchObject({ status: 'completed', phase: 'done', outcome: 'report' });
    expect(replayed.report?.references).toBeGreaterThan(0);
    expect(replayed.usage.promptTokens).toBeGreaterThan(0);
    h.worker.shutdown();
    await new Promise((r) => setTimeout(r, 500));

    const started = Date.now();
    const view = await request(apiWithoutWorker(h)).get(`/v1/research/${id}`).expect(200);
    // The budget the run got (RUN_MAX_TOKENS: its request set none) comes from its memo.
    expect(view.body).toEqual({ id, ...replayed, budget: { maxTokens: h.config.api.runMaxTokens } });
    // No query was tried: one would have waited out the second before giving up.
    expect(Date.now() - started).toBeLessThan(1_000);
  }, 60_000);
});
