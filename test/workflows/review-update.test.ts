// The plan review by update (Temporal's workflow update, not a signal): on the dev server in the
// suite and again on the real Temporal server in the real-server pass (scripts/run-tests.mjs), which
// has its own setting for updates (frontend.enableUpdateWorkflowExecution).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStatusQuery } from '../../src/workflows/messages';
import { planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { recordHistories } from '../support/record-history';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`research workflow (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  it('reviews by update: the decision at once, the same answer for a retried key, 409 for a late or second one', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }, { id: 'b' }])));
    const id = (
      await request(h.app).post('/v1/research').send({ question: 'How much cheaper has solar power become?', options: {} }).expect(202)
    ).body.id as string;
    const handle = h.client.workflow.getHandle(id);
    for (const end = Date.now() + 20_000; (await handle.query(getStatusQuery)).phase !== 'reviewing';) {
      if (Date.now() > end) throw new Error('the plan never went to review');
      await new Promise((r) => setTimeout(r, 100));
    }
    const early = await request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 7 }).expect(409);
    expect(early.body.error).toMatchObject({ code: 'stale_plan_version', message: /version 1/, details: { currentVersion: 1 } });
    const first = await request(h.app)
      .post(`/v1/research/${id}/plan/approve`)
      .set('idempotency-key', 'approve-once')
      .send({ planVersion: 1 })
      .expect(200);
    expect(first.body).toEqual({ id, planVersion: 1, decision: 'approved' });
    // A client retrying with the same key (its connection dropped) gets the same answer.
    await request(h.app)
      .post(`/v1/research/${id}/plan/approve`)
      .set('idempotency-key', 'approve-once')
      .send({ planVersion: 1 })
      .expect(200, first.body);
    // Anyone else is told the review is over, with the version.
    const late = await request(h.app).post(`/v1/research/${id}/plan/revise`).send({ planVersion: 1, feedback: 'more' }).expect(409);
    expect(['already_decided', 'not_reviewing']).toContain(late.body.error.code);
    expect(late.body.error.details).toEqual({ currentVersion: 1 });
    await handle.result();
    const history = await handle.fetchHistory();
    const accepted = history.events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    expect(accepted).toHaveLength(1); // refused updates leave no trace in the history
    expect(history.events!.some((e) => e.workflowExecutionSignaledEventAttributes)).toBe(false);
    recordHistories([[id, 'review-update.json']]);
  });
});
