// An operator stops one step from the Temporal UI (cancel or terminate its child workflow): that
// step ends `cancelled` with a note, the rest of the run goes on and reports.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import { getStatusQuery } from '../../src/workflows/messages';
import type { ChatRequest, Reply } from '../support/llm-server';
import { defaultReact, planJson, researchRules, stepTitleOf } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { recordHistories } from '../support/record-history';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`an operator stops one step (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  it('ends a cancelled and a terminated step alone; the run completes from the rest', async () => {
    // Steps a and b think for a long time on their first turn: long enough to be stopped.
    const react = (req: ChatRequest): Reply => {
      const slow = ['Step a', 'Step b'].includes(stepTitleOf(req));
      return slow ? ({ ...(defaultReact(req) as object), delayMs: 30_000 } as Reply) : defaultReact(req);
    };
    h.llm.script(researchRules({ react }, planJson([{ id: 'a' }, { id: 'b' }, { id: 'c' }])));
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'How much cheaper has solar power become?', options: { autoAcceptPlan: true } })
      .expect(202);
    const handle = h.client.workflow.getHandle(res.body.id as string);
    // Both slow turns are at the provider: the children of steps a and b exist and are busy.
    const busy = (title: string) =>
      h.llm.requests.some((r) => r.rule === 'react' && stepTitleOf(r.body) === title && r.endedAt === undefined);
    for (const end = Date.now() + 20_000; !(busy('Step a') && busy('Step b'));) {
      if (Date.now() > end) throw new Error(`steps a and b did not start: ${JSON.stringify((await handle.query(getStatusQuery)).plan)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await h.client.workflow.getHandle(`${handle.workflowId}/step/a`).cancel();
    await h.client.workflow.getHandle(`${handle.workflowId}/step/b`).terminate('runaway step');

    const result = (await handle.result()) as ResearchResult;
    expect(result.status).toBe('completed');
    expect(result.outcome).toBe('report');
    expect(result.steps).toEqual([
      { id: 'a', status: 'cancelled', attempts: 1 },
      { id: 'b', status: 'cancelled', attempts: 1 },
      { id: 'c', status: 'completed', attempts: 1 },
    ]);
    expect(result.notes).toEqual(
      expect.arrayContaining([
        'Step a was cancelled by an operator; the report is written without it.',
        'Step b was cancelled by an operator; the report is written without it.',
      ]),
    );
    // The report was written from the step that completed.
    const reporter = h.llm.requests.find((r) => r.rule === 'reporter')!;
    expect(reporter.body.messages.map((m) => m.content).join('\n')).toMatch(/finding key="step\/c\/1"/);
    expect(reporter.body.messages.map((m) => m.content).join('\n')).not.toMatch(/finding key="step\/a\/1"/);
    recordHistories([
      [handle.workflowId, 'operator-cancel.json'],
      [`${handle.workflowId}/step/a`, 'researcher-operator-cancelled.json'],
    ]);
  }, 60_000);
});
