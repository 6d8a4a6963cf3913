// Supervisor mode (options.researchMode 'supervisor'): after the plan's steps (wave 1) the
// supervisor thinks (events of the run), delegates a second wave that the team runs, and ends the
// research; the report is written from both waves. A supervisor that never stops is bounded by the
// waves, the steps it may delegate and the budget; one that never calls a tool falls back to complete.
// It is the default of a deep run, whose researchers get a think tool.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { findingKeysIn, planJson, researchRules, stepTitleOf, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { recordHistories } from '../support/record-history';
import { untilAsked } from '../support/faults';

const ready = Boolean(temporalAddress() && databaseUrl());

const think = (reflection: string) => ({ name: 'think', arguments: { reflection } });
const delegate = (...titles: string[]) => ({
  name: 'conduct_research',
  arguments: { steps: titles.map((title) => ({ title, description: `Find ${title.toLowerCase()}.`, kind: 'researcher' })) },
});
const complete = { name: 'research_complete', arguments: { reason: 'Both waves answer the question.' } };

/** Thinks alone first (answered, asked again), then delegates one step, then ends the research. */
const thinkDelegateComplete = (_req: ChatRequest, n: number): Reply =>
  n === 0
    ? { toolCalls: [think('The plan found solar figures; wind figures are missing.')] }
    : n === 1
      ? { toolCalls: [delegate('Wind cost figures')] }
      : { toolCalls: [think('Solar and wind are covered now.'), complete] };

/** Delegates a new step every time it is asked, and never ends the research. */
const neverStops = (_req: ChatRequest, n: number): Reply => ({
  toolCalls: [think(`Wave ${n + 1} needs more.`), delegate(`More figures ${n + 1}`)],
});

describe.skipIf(!ready)(`supervisor mode (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  async function run(options: Record<string, unknown>) {
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'Solar or wind?', options: { autoAcceptPlan: true, researchMode: 'supervisor', ...options } })
      .expect(202);
    const result = (await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
    return { id: res.body.id as string, status: (await request(h.app).get(`/v1/research/${res.body.id}`).expect(200)).body };
  }
  const stepsOf = (status: { plan: { steps: { id: string; status: string }[] } }) => status.plan.steps.map((s) => [s.id, s.status]);

  it('thinks, delegates a second wave that the team runs, ends the research, and the report draws on both waves', async () => {
    h.llm.script(researchRules({ supervisor: thinkDelegateComplete }, planJson([{ id: 'a' }, { id: 'b' }])));
    const { id, status } = await run({ maxResearchLoops: 2 });
    const asked = h.llm.requests.filter((r) => r.rule === 'supervisor');
    expect(asked).toHaveLength(3);
    // Gap reflection is plan mode's: the supervisor replaces it.
    expect(h.llm.requests.filter((r) => r.rule === 'gaps')).toHaveLength(0);
    // Wave 1's findings reach the supervisor; its reflection is answered before it decides.
    expect(userText(asked[0]!.body)).toMatch(/<finding key="step\/a\/1">[\s\S]*<finding key="step\/b\/1">/);
    expect(asked[0]!.body.tools!.map((t) => t.function.name).sort()).toEqual(['conduct_research', 'research_complete', 'think']);
    expect(asked[1]!.body.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['Reflection recorded.']);
    // After wave 2 it is asked again, with the delegated step's findings.
    expect(userText(asked[2]!.body)).toContain('<finding key="step/wind-cost-figures/1">');
    expect(status.plan.version).toBe(2);
    expect(stepsOf(status)).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['wind-cost-figures', 'completed'],
    ]);
    const notes = status.notes.join('\n');
    expect(notes).toContain('Supervisor after wave 1: delegated step wind-cost-figures.');
    expect(notes).toContain('Supervisor after wave 2: research complete (Both waves answer the question.).');
    const reporter = h.llm.requests.filter((r) => r.rule === 'reporter').at(-1)!;
    expect(findingKeysIn(reporter.body)).toEqual(expect.arrayContaining(['step/a/1', 'step/b/1', 'step/wind-cost-figures/1']));
    // The reflections are events of the run (the timelines and the SSE stream show them).
    const thoughts = await h.pool.query(`SELECT data FROM run_events WHERE research_id = $1 AND type = 'think' ORDER BY seq`, [id]);
    expect(thoughts.rows.map((r) => [r.data.wave, r.data.thought])).toEqual([
      [1, 'The plan found solar figures; wind figures are missing.'],
      [2, 'Solar and wind are covered now.'],
    ]);
    const plans = await h.pool.query(`SELECT data FROM run_events WHERE research_id = $1 AND type = 'plan' ORDER BY seq`, [id]);
    expect(plans.rows.map((r) => r.data.steps.length)).toEqual([2, 3]);
    recordHistories([[id, 'supervisor.json']]);
  });

  it("leads a deep run unless the request says plan; a deep run's researchers think between searches, in the timeline", async () => {
    // A researcher that writes down a reflection first, then searches, then answers.
    const thinkThenSearch = (req: ChatRequest): Reply => {
      const results = req.messages.filter((m) => m.role === 'tool').length;
      if (results === 0) return { toolCalls: [think(`First the figures for ${stepTitleOf(req)}; then who publishes them.`)] };
      if (results === 1) return { toolCalls: [{ name: 'web_search', arguments: { queries: [stepTitleOf(req)] } }] };
      return { content: 'I have what I need.' };
    };
    h.llm.script(researchRules({ supervisor: { toolCalls: [complete] }, react: thinkThenSearch }, planJson([{ id: 'a' }])));
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'Solar or wind?', options: { autoAcceptPlan: true, effort: 'deep', maxSteps: 1 } })
      .expect(202);
    expect(((await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult).outcome).toBe('report');
    expect(h.llm.requests.filter((r) => r.rule === 'supervisor')).toHaveLength(1);
    expect(h.llm.requests.filter((r) => r.rule === 'gaps')).toHaveLength(0);
    const turns = h.llm.requests.filter((r) => r.rule === 'react');
    expect(turns[0]!.body.tools!.map((t) => t.function.name)).toEqual(expect.arrayContaining(['web_search', 'crawl', 'think']));
    expect(turns[0]!.body.messages[0]!.content).toContain('- `think(reflection)`: between searches');
    expect(turns[1]!.body.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'Reflection recorded. Go on: search, read a page, or write your findings when they answer the step.',
    ]);
    expect(turns[2]!.body.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
    // The reflection is an event of the run: the timelines (page, CLI) and the SSE stream show it.
    const thoughts = await h.pool.query(`SELECT data FROM run_events WHERE research_id = $1 AND type = 'think' ORDER BY seq`, [
      res.body.id,
    ]);
    expect(thoughts.rows.map((r) => r.data)).toEqual([
      { step: 'a', attempt: 1, thought: `First the figures for ${stepTitleOf(turns[0]!.body)}; then who publishes them.` },
    ]);

    // A quick run's researchers spend their four rounds on searching: no think offered.
    h.llm.script(researchRules({ react: thinkThenSearch }, planJson([{ id: 'a' }])));
    const quick = await request(h.app)
      .post('/v1/research')
      .send({ question: 'Solar or wind?', options: { autoAcceptPlan: true, effort: 'quick', maxSteps: 1 } })
      .expect(202);
    await h.client.workflow.getHandle(quick.body.id).result();
    const quickTurn = h.llm.requests.find((r) => r.rule === 'react')!;
    expect(quickTurn.body.tools!.map((t) => t.function.name)).not.toContain('think');
    expect(h.llm.requests.filter((r) => r.rule === 'supervisor')).toHaveLength(0);
  });

  it('a supervisor that never stops is bounded by the waves, the steps it may delegate and the budget', async () => {
    h.llm.script(researchRules({ supervisor: neverStops }, planJson([{ id: 'a' }])));
    const waves = await run({ maxResearchLoops: 2, maxSteps: 4 });
    expect(h.llm.requests.filter((r) => r.rule === 'supervisor')).toHaveLength(2);
    expect(stepsOf(waves.status)).toEqual([
      ['a', 'completed'],
      ['more-figures-1', 'completed'],
      ['more-figures-2', 'completed'],
    ]);
    expect(waves.status.notes.join('\n')).toContain('Supervisor: the research stopped at its limit of 3 waves');

    h.llm.script(researchRules({ supervisor: neverStops }, planJson([{ id: 'a' }])));
    const steps = await run({ maxResearchLoops: 3, maxSteps: 1 });
    expect(h.llm.requests.filter((r) => r.rule === 'supervisor')).toHaveLength(1);
    expect(stepsOf(steps.status)).toEqual([
      ['a', 'completed'],
      ['more-figures-1', 'completed'],
    ]);
    expect(steps.status.notes.join('\n')).toContain('Supervisor: the research stopped at its limit of 1 delegated steps');

    // A budget spent before the first wave ends stops the waves too: the supervisor is not asked.
    h.llm.script(researchRules({ supervisor: neverStops }, planJson([{ id: 'a' }])));
    const budget = await run({ maxResearchLoops: 3, maxTokens: 100 });
    expect(h.llm.requests.filter((r) => r.rule === 'supervisor')).toHaveLength(0);
    expect(budget.status.notes.join('\n')).toContain('Supervisor: no further wave: the token budget (100) was spent');
  });

  it('a wrap-up while the supervisor decides starts no new wave, and the report is written', async () => {
    const slowDelegate = (): Reply => ({ toolCalls: [delegate('Late figures')], delayMs: 2_000 });
    h.llm.script(researchRules({ supervisor: slowDelegate }, planJson([{ id: 'a' }])));
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'Solar or wind?', options: { autoAcceptPlan: true, researchMode: 'supervisor', maxResearchLoops: 2 } })
      .expect(202);
    await untilAsked(h.llm, 'supervisor');
    await request(h.app).post(`/v1/research/${res.body.id}/steer`).send({ kind: 'wrapUp' }).expect(200);
    expect(((await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult).outcome).toBe('report');
    const status = (await request(h.app).get(`/v1/research/${res.body.id}`).expect(200)).body;
    expect(h.llm.requests.filter((r) => r.rule === 'supervisor')).toHaveLength(1);
    expect(status.plan.version).toBe(1);
    expect(stepsOf(status)).toEqual([['a', 'completed']]);
  });

  it('a supervisor that never calls a tool ends the research, and the report says so', async () => {
    h.llm.script(researchRules({ supervisor: { content: 'I think we are done.' } }, planJson([{ id: 'a' }])));
    const { id, status } = await run({});
    // The answer, then two repair requests.
    expect(h.llm.requests.filter((r) => r.rule === 'supervisor')).toHaveLength(3);
    expect(stepsOf(status)).toEqual([['a', 'completed']]);
    expect(status.notes).toContain('Supervisor after wave 1: research complete (the model gave no usable decision).');
    const report = await request(h.app).get(`/v1/research/${id}/report`).expect(200);
    expect(report.text).toMatch(/Fallback \(supervisor\): the research was taken as complete after wave 1, because the model/);
  });
});
