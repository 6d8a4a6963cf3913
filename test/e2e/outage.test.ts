// Transient faults wait: an LLM provider that is down for longer than the old attempt limits
// allowed (8 attempts) only costs time. The run completes with every step, and no LLM call that had
// completed before the outage is paid for again.
import type { WorkflowHandle } from '@temporalio/client';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import { getStatusQuery } from '../../src/workflows/messages';
import { planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { repeatedCompleted, startRun, untilAsked } from '../support/faults';

/** What the Temporal UI shows as the workflow's current details. */
async function currentDetails(handle: WorkflowHandle): Promise<string> {
  const meta = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return meta.currentDetails ?? '';
}

const ready = Boolean(temporalAddress() && databaseUrl());
/** The old attempt limit the outage must outlast. With this file's backoff (200 ms doubling to
 *  500 ms), 8 attempts take about 4 s of the server's timers. */
const OLD_LIMIT = 8;

describe.skipIf(!ready)(`outages (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    // A maxOutage of seconds, so the step that outlasts it fails in a test's time (the API's floor is lowered for it).
    h = await startHarness({ env: { RUN_MIN_OUTAGE: '1s', RETRY_MAX_INTERVAL: '500ms' } });
  });
  afterAll(async () => h?.close());

  it('waits out an LLM outage longer than the old attempt limits and completes every step', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }, { id: 'b' }])));
    const handle = await startRun(h);
    // The provider goes down when the first researcher turn is asked for, mid-run.
    await untilAsked(h.llm, 'react');
    await h.llm.down();
    // While it waits, the call is retried beyond the old limit of 8 attempts (watched, not slept on:
    // how long that takes is the machine's business, that it happens is the test's).
    const attemptsSoFar = async () => {
      const pending = await Promise.all(
        ['a', 'b'].map(
          async (step) => (await h.client.workflow.getHandle(`${handle.workflowId}/step/${step}`).describe()).raw.pendingActivities ?? [],
        ),
      );
      return Math.max(0, ...pending.flat().map((p) => p.attempt ?? 0));
    };
    for (const end = Date.now() + 60_000; (await attemptsSoFar()) <= OLD_LIMIT;) {
      if (Date.now() > end) throw new Error(`the call was not retried past ${OLD_LIMIT} attempts within 60 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
    // ... and the API says what the run waits for.
    const view = await request(h.app).get(`/v1/research/${handle.workflowId}`).expect(200);
    expect(view.body.waiting).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          step: expect.stringMatching(/^[ab]$/),
          activity: 'researcherTurn',
          lastError: expect.stringMatching(/connect/),
        }),
      ]),
    );
    expect(Math.max(...view.body.waiting.map((w: { attempt: number }) => w.attempt))).toBeGreaterThan(OLD_LIMIT);
    // ... and so does the run's page in the Temporal UI (its current details), and the step's.
    expect(await currentDetails(handle)).toMatch(
      /Waiting for the LLM \(researcherTurn, step [ab]\): .*connect.*; attempt \d+ failed, retrying since \d\d:\d\d:\d\d UTC/,
    );
    expect(await currentDetails(h.client.workflow.getHandle(`${handle.workflowId}/step/a`))).toMatch(/^Step a: .*\n\nWaiting for the LLM/);
    await h.llm.up();

    const result = (await handle.result()) as ResearchResult;
    expect(result.status).toBe('completed');
    expect(result.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'b', status: 'completed', attempts: 1 },
    ]);
    expect(repeatedCompleted(h.llm)).toBe(0);
    // Once the calls went through, nothing is shown as waiting.
    expect(await currentDetails(handle)).not.toMatch(/Waiting for/);
  }, 90_000);

  it('fails the step after maxOutage, saying which call could not reach its service and why', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    const handle = await startRun(h, { maxOutage: '3s' });
    await untilAsked(h.llm, 'react');
    await h.llm.down();
    // Down until the step gives up (after maxOutage); back for the report.
    for (const end = Date.now() + 30_000; ;) {
      const step = (await handle.query(getStatusQuery)).plan?.steps[0];
      if (step?.status === 'failed') break;
      if (Date.now() > end) throw new Error(`step a did not fail: ${JSON.stringify(step)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await h.llm.up();
    const result = (await handle.result()) as ResearchResult;
    expect(result.steps).toEqual([{ id: 'a', status: 'failed', attempts: 1 }]);
    expect(result.notes.join('\n')).toMatch(
      /Step a failed: researcherTurn could not be completed within maxOutage \(3s, since about \d{4}-\d\d-\d\d \d\d:\d\d UTC\): ./,
    );
  }, 60_000);
});
