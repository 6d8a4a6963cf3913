// Gap reflection after the research team: a judge that reports a gap adds follow-up steps (a new
// plan version in the status and the events) that the team runs before the report, and the loop
// stops at maxResearchLoops.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { recordHistories } from '../support/record-history';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

/** Every reflection finds a gap and asks for one more step, named by how often it was asked. */
const alwaysAGap = (_req: ChatRequest, n: number): Reply => ({
  json: {
    answered: false,
    gaps: [`No figures for wind (round ${n + 1}).`],
    followUpSteps: [
      {
        id: `gap-${n + 1}`,
        title: `Wind figures ${n + 1}`,
        description: 'Find wind cost figures',
        type: 'research',
        needSearch: true,
        dependsOn: ['a'],
      },
      { id: 'a', title: 'A duplicate id', description: 'dropped by code', type: 'research', needSearch: true, dependsOn: [] },
    ],
  },
});

describe.skipIf(!ready)(`gap reflection (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  async function run(options: Record<string, unknown>) {
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'Solar or wind?', options: { autoAcceptPlan: true, ...options } })
      .expect(202);
    const result = (await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
    return { id: res.body.id as string, status: (await request(h.app).get(`/v1/research/${res.body.id}`).expect(200)).body };
  }

  it('adds the follow-up steps a reported gap asks for, as plan version 2, and runs them before the report', async () => {
    h.llm.script(researchRules({ gaps: alwaysAGap }, planJson([{ id: 'a' }, { id: 'b' }])));
    const { id, status } = await run({});
    expect(h.llm.requests.filter((r) => r.rule === 'gaps')).toHaveLength(1);
    expect(status.plan.version).toBe(2);
    expect(status.plan.steps.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['gap-1', 'completed'],
    ]);
    expect(status.notes.join('\n')).toMatch(/Gap reflection 1: No figures for wind \(round 1\)\.; added step gap-1\./);
    // The reflection saw the findings; the reporter saw the follow-up step's result.
    const reflection = h.llm.requests.find((r) => r.rule === 'gaps')!;
    expect(JSON.stringify(reflection.body.messages)).toMatch(/step\/a\/1[\s\S]*step\/b\/1/);
    const reporter = h.llm.requests.filter((r) => r.rule === 'reporter').at(-1)!;
    expect(JSON.stringify(reporter.body.messages)).toContain('step/gap-1/1');
    const plans = await h.pool.query(`SELECT data FROM run_events WHERE research_id = $1 AND type = 'plan' ORDER BY seq`, [id]);
    expect(plans.rows.map((r) => r.data.version)).toEqual([1, 2]);
    recordHistories([[id, 'gaps.json']]);
    // The reflection that found the gap wrote no report; the report came after the follow-up step.
    const types = ((await h.client.workflow.getHandle(id).fetchHistory()).events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter(Boolean);
    expect(types.filter((t) => t === 'reflectThenReport')).toHaveLength(1);
    expect(types.filter((t) => t === 'writeCheckedReport')).toHaveLength(1);
    expect(h.llm.requests.filter((r) => r.rule === 'reporter')).toHaveLength(1);
  });

  it("writes the report in the reflection's activity when nothing is missing; a retry after the report's outage asks no reflection again", async () => {
    h.llm.script(
      researchRules(
        {
          reporter: (_req, n) =>
            n === 0
              ? { status: 503, error: { message: 'overloaded' } }
              : { json: { title: 'Solar costs', markdown: '## Key points\n\n- Costs fell sharply [1].\n- Batteries too [2].' } },
        },
        planJson([{ id: 'a' }]),
      ),
    );
    const from = h.llm.requests.length;
    const { id, status } = await run({});
    const asked = (rule: string) => h.llm.requests.slice(from).filter((r) => r.rule === rule).length;
    expect([asked('gaps'), asked('reporter')]).toEqual([1, 2]);
    const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const types = events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(types.filter((t) => t === 'reflectThenReport')).toHaveLength(1);
    for (const t of ['reflectOnGaps', 'writeCheckedReport']) expect(types).not.toContain(t);
    expect(
      Math.max(...events.flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt ?? 0] : []))),
    ).toBe(2);
    expect(status.plan.version).toBe(1);
    expect(status.report.title).toBe('Solar costs');
  });

  it('stops at maxResearchLoops, and does nothing with 0', async () => {
    h.llm.script(researchRules({ gaps: alwaysAGap }, planJson([{ id: 'a' }])));
    const two = await run({ maxResearchLoops: 2 });
    expect(h.llm.requests.filter((r) => r.rule === 'gaps')).toHaveLength(2);
    expect(two.status.plan.steps.map((s: { id: string }) => s.id)).toEqual(['a', 'gap-1', 'gap-2']);
    expect(two.status.plan.version).toBe(3);

    h.llm.script(researchRules({ gaps: alwaysAGap }, planJson([{ id: 'a' }])));
    const none = await run({ maxResearchLoops: 0 });
    expect(h.llm.requests.filter((r) => r.rule === 'gaps')).toHaveLength(0);
    expect(none.status.plan.version).toBe(1);
  });
});
