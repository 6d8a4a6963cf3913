// Every branch of the research workflow on the real dev server with the scripted LLM.
import type { DraftEventData, PlanEventData } from '../../src/shared/events';
import { Draft } from '../../src/shared/draft';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchStatusView, ResearchView } from '../../src/shared/messages';
import { approvePlanSignal, getStatusQuery } from '../../src/workflows/messages';
import type { ResearchResult, StepInput } from '../../src/shared/schemas';
import { defaultReact, planJson, researchRules, sourceIdsIn, stepTitleOf, userText, type RoleOverrides } from '../support/research-script';
import type { ChatRequest, Reply } from '../support/llm-server';
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

  async function start(
    options: Record<string, unknown>,
    overrides: RoleOverrides = {},
    plan = planJson([{ id: 'a' }, { id: 'b' }]),
  ): Promise<string> {
    h.llm.script(researchRules(overrides, plan));
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'How much cheaper has solar power become?', options })
      .expect(202);
    return res.body.id as string;
  }
  const status = (id: string) => h.client.workflow.getHandle(id).query(getStatusQuery);
  /** The API's status of the run: for a run on this code, the view its row's last write kept. */
  async function apiStatusWhen(id: string, pred: (v: ResearchView) => boolean, timeoutMs = 20_000): Promise<ResearchView> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = (await request(h.app).get(`/v1/research/${id}`).expect(200)).body as ResearchView;
      if (pred(v)) return v;
      if (Date.now() > end) throw new Error(`timed out; last API view ${JSON.stringify(v)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  async function waitFor(id: string, pred: (v: ResearchStatusView) => boolean, timeoutMs = 20_000): Promise<ResearchStatusView> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await status(id);
      if (pred(v)) return v;
      if (Date.now() > end) throw new Error(`timed out; last view ${JSON.stringify(v)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const result = (id: string) => h.client.workflow.getHandle(id).result() as Promise<ResearchResult>;
  const requestsFor = (rule: string) => h.llm.requests.filter((r) => r.rule === rule);

  /** The notes of what code decided instead of a model, as the run stored them for its report. */
  const fallbackDocs = async (id: string) =>
    (await h.pool.query<{ content: string }>(`SELECT content FROM documents WHERE research_id = $1 AND kind = 'fallback'`, [id])).rows.map(
      (row) => row.content,
    );

  it('repairs a plan with an unknown dependency by code instead of asking again, and says so', async () => {
    const bad = planJson([
      { id: 'a', dependsOn: ['zzz'] },
      { id: 'b', dependsOn: ['S3f9a01c2'] },
    ]);
    const id = await start({ autoAcceptPlan: true }, { planner: { json: bad } });
    const r = await result(id);
    expect(r.status).toBe('completed');
    expect(requestsFor('planner')).toHaveLength(1);
    expect(r.steps?.map((s) => s.status)).toEqual(['completed', 'completed']);
    expect(r.notes.join('\n')).not.toMatch(/Planner attempt 1 was invalid/);
    expect((await fallbackDocs(id)).join('\n')).toMatch(/step "a": unknown dependencies dropped \(zzz\)/);
  });

  it('cuts a plan longer than maxSteps instead of failing the run', async () => {
    const id = await start({ autoAcceptPlan: true, maxSteps: 1 });
    const r = await result(id);
    expect(r.steps).toEqual([{ id: 'a', status: 'completed', attempts: 1 }]);
    expect(requestsFor('planner')).toHaveLength(1);
    expect((await fallbackDocs(id)).join('\n')).toMatch(/1 step beyond the 1 allowed was cut/);
  });

  it('waits for review, then runs the approved plan', async () => {
    const id = await start({});
    const v = await waitFor(id, (s) => s.phase === 'reviewing');
    expect(v.status).toBe('awaiting_review');
    // What the reviewer reads: why, what each step will do, and the brief the plan rests on with
    // the sources it cites.
    expect(v.plan).toMatchObject({
      version: 1,
      thought: 'Find the figures, then compare them.',
      steps: [
        { id: 'a', status: 'pending', description: 'Find facts for step a' },
        { id: 'b', status: 'pending', description: 'Find facts for step b' },
      ],
    });
    const brief = v.plan!.brief!;
    expect(brief.sources.length).toBeGreaterThan(0);
    expect(brief.sources[0]).toMatchObject({ n: 1, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//) });
    expect(brief.text).toMatch(/\[1\]/);
    expect(brief.text).not.toMatch(/\bS[0-9a-f]{8}\b/);
    // The API answers from the run's row, written by a local activity just after the phase changed.
    const api = { body: await apiStatusWhen(id, (s) => s.phase !== 'planning') };
    expect(api.body).toMatchObject({
      status: 'awaiting_review',
      phase: 'reviewing',
      plan: { version: 1, title: 'Solar cost research plan', brief, steps: [{ description: 'Find facts for step a' }, {}] },
    });
    // The event stream's plan event and the Temporal UI's details say the same.
    const { rows } = await h.pool.query<{ data: PlanEventData }>(`SELECT data FROM run_events WHERE research_id = $1 AND type = 'plan'`, [
      id,
    ]);
    expect(rows[0]!.data).toMatchObject({
      thought: 'Find the figures, then compare them.',
      brief,
      steps: [{ id: 'a', description: 'Find facts for step a' }, { id: 'b' }],
    });
    const meta = await h.client.workflow.getHandle(id).query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(meta.currentDetails).toContain('Why: Find the figures, then compare them.');
    expect(meta.currentDetails).toContain('Step a — Find facts for step a');
    expect(meta.currentDetails).toContain(`- [1] ${brief.sources[0]!.title}`);
    const desc = await h.client.workflow.getHandle(id).describe();
    expect(desc.searchAttributes).toMatchObject({
      ResearchStatus: ['awaiting_review'],
      ResearchPhase: ['reviewing'],
      ResearchStepCount: [2],
    });
    expect(requestsFor('researcher')).toHaveLength(0);
    await request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 1 }).expect(200);
    expect((await result(id)).outcome).toBe('report');
    expect(requestsFor('researcher')).toHaveLength(2);
    // Neither the run nor its step records a patch marker (or upserts TemporalChangeVersion). No
    // start attribute is repeated.
    for (const [wid, patches] of [
      [id, 0],
      [`${id}/step/a`, 0],
    ] as const) {
      const events = (await h.client.workflow.getHandle(wid).fetchHistory()).events!;
      expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toHaveLength(patches);
      const upserted = events.flatMap((e) =>
        Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
      );
      expect(upserted.filter((k) => k === 'TemporalChangeVersion')).toHaveLength(patches);
      expect(upserted).not.toContain('ResearchTenant');
    }
    // The plan's step count went with the phase change after it: one upsert, not two.
    const upserts = (await h.client.workflow.getHandle(id).fetchHistory()).events!.flatMap((e) => {
      const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
      return fields ? [Object.keys(fields).sort()] : [];
    });
    expect(upserts).toContainEqual(['ResearchPhase', 'ResearchStatus', 'ResearchStepCount']);
    expect(upserts.filter((keys) => keys.includes('ResearchStepCount'))).toHaveLength(1);
    // No workflow task writes the run's row twice (a new plan is written by the row's sync loop
    // alone): each write is a local activity the task waits for.
    const runEvents = (await h.client.workflow.getHandle(id).fetchHistory()).events!;
    // Each step's last turn judged its findings (compress-in-last-turn): the run asked no judge itself.
    const runActivities = runEvents.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(runActivities).not.toContain('judgeStep');
    // The coordinator classified the request inside the background phase's activity
    // (classify-in-background), which then wrote the first plan from its brief; the gap
    // reflection, finding nothing missing, wrote the report in its activity.
    expect(runActivities.slice(0, 1)).toEqual(['classifyThenBackground']);
    for (const t of ['classifyRequest', 'researchBackground', 'planResearch']) expect(runActivities).not.toContain(t);
    expect(requestsFor('coordinator')).toHaveLength(1);
    expect(runActivities.filter((t) => t === 'reflectThenReport')).toHaveLength(1);
    for (const t of ['reflectOnGaps', 'writeCheckedReport', 'learnAboutUser']) expect(runActivities).not.toContain(t);
    expect(requestsFor('planner')).toHaveLength(1);
    expect(requestsFor('judge')).toHaveLength(2);
    const writesPerTask: number[] = [0];
    for (const e of runEvents) {
      if (e.workflowTaskCompletedEventAttributes) writesPerTask.push(0);
      const marker = e.markerRecordedEventAttributes;
      const details = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : undefined;
      if (details && (JSON.parse(Buffer.from(details).toString()) as { activity_type: string }).activity_type === 'recordRun')
        writesPerTask[writesPerTask.length - 1]!++;
    }
    expect(Math.max(...writesPerTask)).toBe(1);
    expect(writesPerTask.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(5);
    recordHistories([
      [id, 'reviewed.json'],
      [`${id}/step/a`, 'researcher-step.json'],
    ]);
  });

  it("revises the plan with the feedback, ignores a stale approval, takes the reviewer's edits, then runs version 3", async () => {
    const id = await start(
      {},
      { planner: (req, n) => ({ json: n === 0 ? planJson([{ id: 'a' }, { id: 'b' }]) : planJson([{ id: 'c' }]) }) },
    );
    await waitFor(id, (s) => s.phase === 'reviewing');
    await request(h.app)
      .post(`/v1/research/${id}/plan/revise`)
      .send({ planVersion: 1, feedback: 'Focus on rooftop solar in Germany' })
      .expect(200, { id, planVersion: 1, decision: 'revising', nextPlanVersion: 2 });
    const v2 = await waitFor(id, (s) => s.phase === 'reviewing' && s.plan?.version === 2);
    expect(v2.plan?.steps.map((s) => s.id)).toEqual(['c']);
    const planner = requestsFor('planner');
    expect(userText(planner[1]!.body)).toMatch(/<feedback>\nFocus on rooftop solar in Germany\n<\/feedback>/);
    expect(userText(planner[0]!.body)).toMatch(/<feedback>\n\(none\)\n<\/feedback>/);
    // Reviewer text is data in the user message, never part of the instructions.
    expect(planner[1]!.body.messages[0]!.content).not.toMatch(/rooftop/);

    // The API refuses a stale version outright; a stale signal sent straight to Temporal (as an
    // operator might from the UI) is ignored by the workflow and recorded.
    const stale = await request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 1 }).expect(409);
    expect(stale.body.error).toMatchObject({ code: 'stale_plan_version', details: { currentVersion: 2 } });
    await h.client.workflow.getHandle(id).signal(approvePlanSignal, { planVersion: 1 });
    const after = await waitFor(id, (s) => s.ignoredSignals.length > 0);
    expect(after.ignoredSignals[0]).toMatchObject({
      signal: 'approvePlan',
      planVersion: 1,
      reason: 'stale: the plan under review is version 2',
    });
    expect(after.phase).toBe('reviewing');
    // The ignored signal changed the run's view alone: its row was written for it, and the API,
    // which answers from the row, lists it.
    const fromRow = await apiStatusWhen(id, (v) => (v.ignoredSignals?.length ?? 0) > 0, 10_000);
    expect(fromRow.ignoredSignals).toEqual(after.ignoredSignals);

    // The reviewer edits version 2's steps directly: applied as given, without a planner call.
    const edits = [
      { kind: 'setDescription', stepId: 'c', description: 'Module prices in Germany, 2010 to 2024' },
      { kind: 'add', step: { id: 'd', title: 'Compare with Spain', description: 'The same figures for Spain', dependsOn: ['c'] } },
    ];
    // Edits that would not make a plan are refused with the reason, on the API as in the workflow.
    const cycle = await request(h.app)
      .post(`/v1/research/${id}/plan/revise`)
      .send({ planVersion: 2, edits: [...edits, { kind: 'setDependencies', stepId: 'c', dependsOn: ['d'] }] })
      .expect(409);
    expect(cycle.body.error).toMatchObject({ code: 'invalid_edit', message: 'edits: steps: dependsOn forms a cycle' });
    const unknown = await request(h.app)
      .post(`/v1/research/${id}/plan/revise`)
      .send({ planVersion: 2, edits: [{ kind: 'remove', stepId: 'zz' }] })
      .expect(409);
    expect(unknown.body.error.message).toBe('edits.0: the plan has no step zz');
    await request(h.app).post(`/v1/research/${id}/plan/revise`).send({ planVersion: 2, edits }).expect(200);
    const v3 = await waitFor(id, (s) => s.phase === 'reviewing' && s.plan?.version === 3);
    expect(v3.plan?.steps.map((s) => [s.id, s.title, s.description, s.dependsOn])).toEqual([
      ['c', 'Step c', 'Module prices in Germany, 2010 to 2024', []],
      ['d', 'Compare with Spain', 'The same figures for Spain', ['c']],
    ]);
    expect(requestsFor('planner')).toHaveLength(2);

    await request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 3 }).expect(200);
    const r = await result(id);
    expect(r.planVersion).toBe(3);
    expect(r.steps).toEqual([
      { id: 'c', status: 'completed', attempts: 1 },
      { id: 'd', status: 'completed', attempts: 1 },
    ]);
    // The edited step was researched as the reviewer described it.
    expect(
      h.llm.requests.some(
        (q) => q.rule !== 'planner' && JSON.stringify(q.body.messages).includes('Module prices in Germany, 2010 to 2024'),
      ),
    ).toBe(true);
    recordHistories([[id, 'revised.json']]);
  });

  it('refuses a revision beyond maxPlanRevisions', async () => {
    const id = await start({ maxPlanRevisions: 1 });
    await waitFor(id, (s) => s.phase === 'reviewing');
    await request(h.app).post(`/v1/research/${id}/plan/revise`).send({ planVersion: 1, feedback: 'shorter' }).expect(200);
    const v2 = await waitFor(id, (s) => s.phase === 'reviewing' && s.plan?.version === 2);
    expect(v2.plan?.revisionsLeft).toBe(0);
    const res = await request(h.app).post(`/v1/research/${id}/plan/revise`).send({ planVersion: 2, feedback: 'again' }).expect(409);
    expect(res.body.error.code).toBe('revision_limit');
    // Sent past the API, the workflow ignores it and records why.
    await h.client.workflow.getHandle(id).signal('revisePlan', { planVersion: 2, feedback: 'again' });
    const after = await waitFor(id, (s) => s.ignoredSignals.length > 0);
    expect(after.ignoredSignals[0]!.reason).toBe('the plan was already revised 1 times (maxPlanRevisions); approve it or cancel the run');
    await request(h.app).post(`/v1/research/${id}/cancel`).expect(202);
  });

  it('validates review bodies', async () => {
    const id = await start({});
    await waitFor(id, (s) => s.phase === 'reviewing');
    const bad = await request(h.app).post(`/v1/research/${id}/plan/revise`).send({ planVersion: 1, feedback: ' ' }).expect(400);
    expect(bad.body.error.message).toBe("body: feedback must not be empty (or give the steps' edits)");
    const badEdit = await request(h.app)
      .post(`/v1/research/${id}/plan/revise`)
      .send({ planVersion: 1, edits: [{ kind: 'setType', stepId: 'a', type: 'poetry' }] })
      .expect(400);
    expect(badEdit.body.error.message).toMatch(/edits\.0\.type/);
    await request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 'one' }).expect(400);
    await request(h.app).post(`/v1/research/${id}/cancel`).expect(202);
    await expect(result(id)).rejects.toThrow();
    const ended = await request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 1 }).expect(409);
    expect(ended.body.error.code).toBe('not_running');
  });

  it('approves on review timeout when onReviewTimeout is approve', async () => {
    const id = await start({ reviewTimeout: '2s', onReviewTimeout: 'approve' });
    const r = await result(id);
    expect(r).toMatchObject({ status: 'completed', outcome: 'report' });
    expect(r.notes).toContain('No review within 2s: the plan was approved automatically.');
  });

  it('cancels on review timeout when onReviewTimeout is cancel', async () => {
    const id = await start({ reviewTimeout: '2s', onReviewTimeout: 'cancel' });
    const r = await result(id);
    expect(r).toMatchObject({ status: 'cancelled', outcome: 'cancelled_at_review' });
    expect(requestsFor('researcher')).toHaveLength(0);
    const { rows } = await h.pool.query('SELECT status FROM research_runs WHERE id = $1', [id]);
    expect(rows[0].status).toBe('cancelled');
  });

  it('skips to the reporter when the plan has enough context and the background is a cited brief', async () => {
    // A brief of some length that cites two retrieved sources: the planner may call it enough.
    const brief = (req: ChatRequest): Reply => {
      const cite = sourceIdsIn(req)
        .slice(0, 2)
        .map((s) => `[${s}]`);
      const sentence = `Solar power got far cheaper between 2010 and 2022 ${cite.join('')}. `;
      return { json: { text: sentence.repeat(6), summary: 'Solar got cheaper.' } };
    };
    const id = await start({}, { background: brief }, planJson([], { hasEnoughContext: true }));
    const r = await result(id);
    expect(r.outcome).toBe('report');
    expect(requestsFor('researcher')).toHaveLength(0);
    expect(requestsFor('reporter')).toHaveLength(1);
    recordHistories([[id, 'enough-context.json']]);
  });

  it('researches anyway when the planner says the context is enough but the background is thin', async () => {
    const id = await start({ autoAcceptPlan: true }, {}, planJson([], { hasEnoughContext: true }));
    const r = await result(id);
    expect(r.outcome).toBe('report');
    expect(r.steps).toEqual([{ id: 'research', status: 'completed', attempts: 1 }]);
    expect(requestsFor('researcher')).toHaveLength(1);
  });

  it('runs a step after the steps it depends on and hands it their results', async () => {
    const plan = planJson([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', type: 'processing', dependsOn: ['a', 'b'] }]);
    const id = await start(
      { autoAcceptPlan: true },
      { researcher: (req) => ({ json: { text: `Result of ${stepTitleOf(req)}.`, summary: `s ${stepTitleOf(req)}` }, delayMs: 200 }) },
      plan,
    );
    const r = await result(id);
    expect(r.steps?.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
    const v = await status(id);
    const [a, b, c] = v.plan!.steps;
    expect(b!.startedAt!).toBeGreaterThanOrEqual(a!.endedAt!);
    expect(c!.startedAt!).toBeGreaterThanOrEqual(b!.endedAt!);
    const researcherB = requestsFor('react').find((q) => stepTitleOf(q.body) === 'Step b')!;
    expect(userText(researcherB.body)).toMatch(/<result key="step\/a\/1">[\s\S]*Result of Step a\./);
    expect(requestsFor('react').find((q) => stepTitleOf(q.body) === 'Step a')!.startedAt).toBeLessThan(researcherB.startedAt);
    const analyst = requestsFor('analyst')[0]!;
    expect(userText(analyst.body)).toMatch(/Result of Step a\.[\s\S]*Result of Step b\./);
  });

  it('runs at most maxConcurrentSteps steps at once', async () => {
    const plan = planJson([{ id: 's1' }, { id: 's2' }, { id: 's3' }, { id: 's4' }, { id: 's5' }]);
    const slow: Reply = { json: { text: 'x', summary: 'y' }, delayMs: 500 };
    const id = await start({ autoAcceptPlan: true, maxConcurrentSteps: 2, maxSteps: 5 }, { researcher: slow }, plan);
    await result(id);
    const steps = (await status(id)).plan!.steps;
    const edges = steps.flatMap((s) => [
      { t: s.startedAt!, d: 1 },
      { t: s.endedAt!, d: -1 },
    ]);
    edges.sort((x, y) => x.t - y.t || x.d - y.d);
    let now = 0;
    let peak = 0;
    for (const e of edges) peak = Math.max(peak, (now += e.d));
    expect(peak).toBe(2);
    // The same cap seen from the LLM server: never more than 2 researcher calls in flight.
    const calls = requestsFor('researcher').map((q) => [q.startedAt, q.endedAt!] as const);
    const overlap = Math.max(...calls.map(([s]) => calls.filter(([s2, e2]) => s2 <= s && e2 > s).length));
    expect(overlap).toBeLessThanOrEqual(2);
  });

  it('reruns a step the judge fails, with the feedback, then accepts it', async () => {
    const judge = (req: ChatRequest, n: number): Reply => ({
      json: n === 0 ? { passed: false, feedback: 'Add the 2022 figure' } : { passed: true, feedback: '' },
    });
    // The second attempt's first turn takes a while: the API is asked meanwhile.
    const react = (req: ChatRequest): Reply => {
      const again = /Add the 2022 figure/.test(userText(req)) && !req.messages.some((m) => m.role === 'tool');
      return again ? { ...defaultReact(req), delayMs: 2_000 } : defaultReact(req);
    };
    const id = await start({ autoAcceptPlan: true }, { judge, react }, planJson([{ id: 'a' }]));
    // The step's second attempt is written to the run's row when it starts (the API answers from
    // the row): not only with the step's end.
    const during = await apiStatusWhen(id, (v) => v.plan?.steps[0]?.attempts === 2 || v.status !== 'running');
    expect(during).toMatchObject({
      status: 'running',
      phase: 'researching',
      plan: { steps: [{ id: 'a', status: 'running', attempts: 2 }] },
    });
    const r = await result(id);
    expect(r.steps).toEqual([{ id: 'a', status: 'completed', attempts: 2 }]);
    expect(requestsFor('researcher')).toHaveLength(2);
    const firstTurns = requestsFor('react').filter((q) => !q.body.messages.some((m) => m.role === 'tool'));
    expect(firstTurns).toHaveLength(2);
    expect(userText(firstTurns[0]!.body)).toMatch(/\(address it\): \(none\)/);
    expect(userText(firstTurns[1]!.body)).toMatch(
      /Reviewer feedback on an earlier attempt of this step \(address it\): Add the 2022 figure/,
    );
    const { rows } = await h.pool.query("SELECT key FROM documents WHERE research_id = $1 AND kind = 'step' ORDER BY key", [id]);
    expect(rows.map((x) => x.key)).toEqual(['step/a/1', 'step/a/2']);
    recordHistories([[id, 'reflection.json']]);
  });

  it('passes a step with a note after maxReflectionAttempts reruns', async () => {
    const id = await start(
      { autoAcceptPlan: true, maxReflectionAttempts: 1 },
      { judge: { json: { passed: false, feedback: 'Still vague' } } },
      planJson([{ id: 'a' }]),
    );
    const r = await result(id);
    expect(r.steps).toEqual([{ id: 'a', status: 'completed', attempts: 2 }]);
    const v = await status(id);
    expect(v.plan!.steps[0]!.notes).toEqual(["passed after 2 attempts without the judge's approval: Still vague"]);
  });

  it('passes a step the judge cannot check (its server refuses the request) and records it for the report', async () => {
    const id = await start(
      { autoAcceptPlan: true },
      { judge: { status: 400, error: { message: 'judge model rejected the request' } } },
      planJson([{ id: 'a' }]),
    );
    const r = await result(id);
    expect(r.steps).toEqual([{ id: 'a', status: 'completed', attempts: 1 }]);
    // The judge activity falls back by itself: the workflow never sees an error.
    // (The scripted reporter writes no executive summary: code's stands in, noted too.)
    expect(await fallbackDocs(id)).toEqual([
      expect.stringMatching(/^Fallback \(judge\): step a \(attempt 1\) passed unchecked, because the model server refused the request/),
      expect.stringMatching(/^Correction \(reporter\): the executive summary was taken from the report's cited key points/),
    ]);
  });

  it('removes a fabricated citation from the report and records it', async () => {
    const reporter: Reply = { json: { title: 'Solar', markdown: 'Costs fell [1]. Made up [42]. Also [2, 99] and `code [7]`.' } };
    const id = await start({ autoAcceptPlan: true }, { reporter }, planJson([{ id: 'a' }]));
    const r = await result(id);
    expect(r.removedCitations).toEqual([42, 99]);
    const report = await request(h.app).get(`/v1/research/${id}/report`).expect(200);
    expect(report.text).toMatch(/Costs fell \[1\]\. Made up\. Also \[2\] and `code \[7\]`\./);
    expect(report.text).not.toMatch(/\[42\]|\[99\]/);
    expect(r.notes.join('\n')).toMatch(/Removed 2 citations that pointed at no retrieved source: \[42\], \[99\]/);
  });

  it('cancels a run mid-research: children stop, the run ends cancelled, stored rows stay', async () => {
    const id = await start({ autoAcceptPlan: true }, { researcher: { hang: true } });
    await waitFor(id, (s) => s.phase === 'researching' && s.plan!.steps.every((x) => x.status === 'running'));
    const end = Date.now() + 10_000;
    while (requestsFor('researcher').length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(requestsFor('researcher').length).toBeGreaterThanOrEqual(2);
    await request(h.app).post(`/v1/research/${id}/cancel`).expect(202);
    await expect(result(id)).rejects.toThrow(/cancel/i);
    const child = await h.client.workflow.getHandle(`${id}/step/a`).describe();
    expect(child.status.name).toBe('CANCELLED');
    const { rows } = await h.pool.query('SELECT status FROM research_runs WHERE id = $1', [id]);
    expect(rows[0].status).toBe('cancelled');
    const sources = await h.pool.query('SELECT count(*)::int AS n FROM sources WHERE research_id = $1', [id]);
    expect(sources.rows[0].n).toBeGreaterThan(0);
    const v = await request(h.app).get(`/v1/research/${id}`).expect(200);
    expect(v.body.status).toBe('cancelled');
    await request(h.app).get(`/v1/research/${id}/report`).expect(404);
    recordHistories([
      [id, 'cancelled.json'],
      [`${id}/step/a`, 'researcher-cancelled.json'],
    ]);
  });

  it('stops researching when the token budget is spent and reports from what exists', async () => {
    const plan = planJson([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]);
    const big = (req: ChatRequest): Reply => ({
      json: { text: `r ${stepTitleOf(req)}`, summary: 's' },
      usage: { prompt: 5_000, completion: 100 },
    });
    const id = await start({ autoAcceptPlan: true, maxTokens: 4_000 }, { researcher: big }, plan);
    const r = await result(id);
    expect(r.outcome).toBe('report');
    expect(r.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'b', status: 'skipped', attempts: 0 },
    ]);
    expect(r.notes.join('\n')).toMatch(/Research stopped early: the token budget \(4000\) was spent/);
    const reporter = requestsFor('reporter')[0]!;
    // The run's notes end the reporter's user message: per-run text, after the stable instructions.
    expect(userText(reporter.body)).toMatch(/Notes about this run: [\s\S]*Research stopped early: the token budget/);
    expect(reporter.body.messages[0]!.content).not.toMatch(/Research stopped early/);
    const report = await request(h.app).get(`/v1/research/${id}/report`).expect(200);
    expect(report.text).toMatch(/> Research stopped early/);
    recordHistories([[id, 'budget.json']]);
  });

  it('counts the deadline from the start of the research, not from the time the plan waited for review', async () => {
    const id = await start({ deadline: '30s' });
    await waitFor(id, (s) => s.phase === 'reviewing');
    // The plan waits for review: a deadline counted from the submit would lose this time.
    await new Promise((r) => setTimeout(r, 2_000));
    const approvedAt = Date.now();
    await request(h.app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 1 }).expect(200);
    const r = await result(id);
    expect(r.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'b', status: 'completed', attempts: 1 },
    ]);
    expect(r.notes.join('\n')).not.toMatch(/time budget/);
    // The steps were handed the deadline counted from the approval, whatever the machine's speed.
    const history = await h.client.workflow.getHandle(`${id}/step/a`).fetchHistory();
    const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    const { deadlineAt } = (JSON.parse(Buffer.from(payload.data!).toString()) as StepInput).budget!;
    expect(deadlineAt).toBeGreaterThanOrEqual(approvedAt + 30_000);
  });

  it('hands a step what is left of the budget: the researcher answers once it has spent it', async () => {
    // Every turn costs 25 000 tokens and asks for one more search: only the budget ends the loop early.
    const react = (req: ChatRequest): Reply =>
      req.tools
        ? {
            toolCalls: [{ name: 'web_search', arguments: { queries: [`q${req.messages.length}`] } }],
            usage: { prompt: 25_000, completion: 10 },
          }
        : { content: 'Findings from what I have.', usage: { prompt: 25_000, completion: 10 } };
    const id = await start({ autoAcceptPlan: true, maxTokens: 60_000 }, { react }, planJson([{ id: 'a' }]));
    const r = await result(id);
    expect(r.steps).toEqual([{ id: 'a', status: 'completed', attempts: 1 }]);
    const turns = requestsFor('react');
    expect(turns.length).toBeLessThan(9); // maxToolRounds (8) + the answer, without a budget
    expect(turns.at(-1)!.body.tools).toBeUndefined();
    expect(turns.at(-1)!.body.messages.at(-1)!.content).toMatch(/^Stop using tools/);
    expect(turns.slice(0, -1).every((t) => (t.body.tools?.length ?? 0) > 0)).toBe(true);
  });

  it('splits what is left of the budget between steps that run in parallel', async () => {
    const id = await start({ autoAcceptPlan: true, maxTokens: 60_000, maxConcurrentSteps: 2 }, {}, planJson([{ id: 'a' }, { id: 'b' }]));
    await result(id);
    const budgetOf = async (step: string) => {
      const history = await h.client.workflow.getHandle(`${id}/step/${step}`).fetchHistory();
      const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      return (JSON.parse(Buffer.from(payload.data!).toString()) as StepInput).budget!;
    };
    const [a, b] = await Promise.all([budgetOf('a'), budgetOf('b')]);
    // Each got half of what was left when research began (the coordinator, planner and background
    // investigation had spent some), not the whole of it.
    expect(a.tokens! + b.tokens!).toBeLessThanOrEqual(60_000);
    expect(a.tokens).toBeGreaterThan(20_000);
    expect(b.tokens).toBeGreaterThan(20_000);
  });

  it('counts every LLM request of the run in its usage, page extraction included', async () => {
    const id = await start({ autoAcceptPlan: true });
    const r = await result(id);
    expect(requestsFor('extractor').length).toBeGreaterThan(0);
    const { rows } = await h.pool.query(
      'SELECT count(*)::int AS n, sum(prompt_tokens)::int AS prompt, sum(completion_tokens)::int AS completion FROM llm_requests WHERE research_id = $1',
      [id],
    );
    expect(rows[0].n).toBe(h.llm.completed().filter((q) => userText(q.body).length > 0).length);
    expect(r.usage).toMatchObject({ promptTokens: rows[0].prompt, completionTokens: rows[0].completion });
    // Only the coordinator's model has a price here (LLM_PRICES in the harness): the cost is its
    // tokens', and every other token is counted as unpriced, so no surface shows the run as free.
    const split = await h.pool.query(
      `SELECT coalesce(sum(prompt_tokens + completion_tokens) FILTER (WHERE model <> 'scripted-coordinator'), 0)::int AS unpriced,
              coalesce(sum(cost_usd), 0)::float AS cost FROM llm_requests WHERE research_id = $1`,
      [id],
    );
    expect(split.rows[0].unpriced).toBeGreaterThan(0);
    expect(r.usage).toMatchObject({ unpricedTokens: split.rows[0].unpriced, costUsd: split.rows[0].cost });
    expect(r.usage.costUsd).toBeGreaterThan(0);
    const view = await request(h.app).get(`/v1/research/${id}`).expect(200);
    expect(view.body.usage.unpricedTokens).toBe(split.rows[0].unpriced);
  });

  it('counts the requests that gave no usable answer: a judge whose repairs failed too', async () => {
    const judge: Reply = { content: 'I think it is fine.', usage: { prompt: 700, completion: 50 } };
    const id = await start({ autoAcceptPlan: true }, { judge }, planJson([{ id: 'a' }]));
    const r = await result(id);
    expect(r.steps).toEqual([{ id: 'a', status: 'completed', attempts: 1 }]);
    expect(requestsFor('judge')).toHaveLength(3); // the answer and two repairs, all unusable
    const { rows } = await h.pool.query(
      'SELECT sum(prompt_tokens)::int AS prompt, sum(completion_tokens)::int AS completion FROM llm_requests WHERE research_id = $1',
      [id],
    );
    expect(r.usage).toMatchObject({ promptTokens: rows[0].prompt, completionTokens: rows[0].completion });
    const row = await h.pool.query('SELECT prompt_tokens FROM research_runs WHERE id = $1', [id]);
    expect(row.rows[0].prompt_tokens).toBe(rows[0].prompt);
    const view = await request(h.app).get(`/v1/research/${id}`).expect(200);
    expect(view.body.usage.promptTokens).toBe(rows[0].prompt);
  });

  it('asks a clarifying question and continues with the answer', async () => {
    const coordinator = (req: ChatRequest, n: number): Reply => ({
      json: {
        action: 'research',
        locale: 'en-US',
        directAnswer: null,
        researchTopic: 'solar',
        clarificationQuestion: n === 0 ? 'Which country?' : null,
      },
    });
    const id = await start({ autoAcceptPlan: true, maxClarifications: 1 }, { coordinator }, planJson([{ id: 'a' }]));
    const v = await waitFor(id, (s) => s.clarificationQuestion === 'Which country?');
    expect(v.status).toBe('awaiting_review');
    const api = await request(h.app).get(`/v1/research/${id}`).expect(200);
    expect(api.body.clarificationQuestion).toBe('Which country?');
    await request(h.app).post(`/v1/research/${id}/clarification`).send({ answer: '' }).expect(400);
    await request(h.app).post(`/v1/research/${id}/clarification`).send({ answer: 'Germany' }).expect(200, { id, accepted: true });
    const again = await request(h.app).post(`/v1/research/${id}/clarification`).send({ answer: 'France' }).expect(409);
    expect(again.body.error.code).toBe('no_question');
    expect((await result(id)).outcome).toBe('report');
    const second = requestsFor('coordinator')[1]!;
    expect(userText(second.body)).toMatch(/<clarifications>\nQ: Which country\?\nA: Germany\n<\/clarifications>/);
    recordHistories([[id, 'clarification.json']]);
  });

  it('shows the report while the model writes it: draft events in pieces, a restart when it is asked again, none in the history', async () => {
    const markdown =
      '## Key points\n\n' +
      Array.from({ length: 10 }, (_, i) => `- Module prices fell again in ${2012 + i}, by a measured share [1].`).join('\n') +
      '\n\n## Overview\n\nCosts fell sharply [1], and storage followed [2].';
    let id = '';
    const drafts = async () =>
      (
        await h.pool.query<{ data: DraftEventData }>(`SELECT data FROM run_events WHERE research_id = $1 AND type = 'draft' ORDER BY seq`, [
          id,
        ])
      ).rows.map((r) => r.data);
    /** Holds the answer mid-stream until the log has `n` pieces of the second request's draft. */
    const seen = async (n: number) => {
      const end = Date.now() + 20_000;
      while ((await drafts()).filter((d) => d.restart || d.offset > 0).length < n && Date.now() < end)
        await new Promise((r) => setTimeout(r, 50));
    };
    // The first draft cites nothing, so it is asked for again; the second is held twice mid-stream.
    const reporter = (_req: ChatRequest, n: number): Reply =>
      n === 0
        ? { json: { title: 'Solar costs', markdown: 'Prices fell, as everyone knows.' } }
        : { json: { title: 'Solar costs', markdown }, beforeChunk: (c) => (c === 20 ? seen(1) : c === 40 ? seen(2) : undefined) };
    id = await start({ autoAcceptPlan: true }, { reporter });
    const r = await result(id);
    expect(r.status).toBe('completed');
    const events = await drafts();
    const draft = new Draft();
    const applied = events.map((e) => draft.apply(e));
    // The first draft, then the second from the start, in at least three pieces, its last one final.
    expect(applied.filter((a) => a === 'restart')).toHaveLength(1);
    const second = events.slice(events.findIndex((e) => e.restart));
    expect(second[0]).toMatchObject({ part: 'report', offset: 0, restart: true, reason: 'the draft is being written again' });
    expect(second.filter((e) => e.text).length).toBeGreaterThanOrEqual(3);
    expect(second.at(-1)!.final).toBe(true);
    expect(draft.list()).toEqual([{ part: 'report', text: markdown, done: true, restarts: 1, heading: undefined }]);
    // Streamed from the model, usage counted as usual; the stored report is the checked one.
    expect(requestsFor('reporter').map((q) => q.body.stream)).toEqual([true, true]);
    expect((await status(id)).usage?.completionTokens).toBeGreaterThan(0);
    const report = (await request(h.app).get(`/v1/research/${id}/report`).expect(200)).text;
    expect(report).toContain('Module prices fell again in 2021');
    // The history holds none of the pieces: no signal or update reached the run while it was written.
    const history = (await h.client.workflow.getHandle(id).fetchHistory()).events!;
    expect(history.filter((e) => e.workflowExecutionSignaledEventAttributes || e.workflowExecutionUpdateAcceptedEventAttributes)).toEqual(
      [],
    );
  });

  it('answers directly when the coordinator can, with no plan and no steps', async () => {
    const coordinator: Reply = {
      json: {
        action: 'answer_directly',
        locale: 'en-US',
        directAnswer: 'Hello! What should I research?',
        researchTopic: null,
        clarificationQuestion: null,
      },
    };
    const id = await start({}, { coordinator });
    const r = await result(id);
    expect(r).toMatchObject({ status: 'completed', outcome: 'answered_directly' });
    expect(r.steps).toBeUndefined();
    expect(requestsFor('planner')).toHaveLength(0);
    expect((await status(id)).answer).toBe('Hello! What should I research?');
    // The answer was shown as the model wrote it.
    const draft = new Draft();
    const pieces = await h.pool.query<{ data: DraftEventData }>(
      `SELECT data FROM run_events WHERE research_id = $1 AND type = 'draft' ORDER BY seq`,
      [id],
    );
    for (const row of pieces.rows) draft.apply(row.data);
    expect(draft.list()).toMatchObject([{ part: 'answer', text: 'Hello! What should I research?', done: true }]);
    // Answered inside the background phase's activity (classify-in-background), before any search.
    const scheduled = (await h.client.workflow.getHandle(id).fetchHistory()).events!.flatMap(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    expect(scheduled).toEqual(['classifyThenBackground']);
    expect(requestsFor('rewrite')).toHaveLength(0);
    recordHistories([[id, 'direct.json']]);
  });

  it('waits out a failing model call: the step and the run are told of each retried attempt', async () => {
    const react = (req: ChatRequest, n: number): Reply =>
      n < 2 ? { status: 503, error: { message: 'the model is overloaded' } } : defaultReact(req);
    const id = await start({ autoAcceptPlan: true }, { react }, planJson([{ id: 'a' }]));
    const r = await result(id);
    expect(r.steps).toEqual([{ id: 'a', status: 'completed', attempts: 1 }]);
    expect(requestsFor('react').filter((q) => q.status === 503)).toHaveLength(2);
    // The worker told the step, and the step the run, of the retried attempts and of their end.
    for (const wid of [id, `${id}/step/a`]) {
      const events = (await h.client.workflow.getHandle(wid).fetchHistory()).events!;
      const waits = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'callWait');
      expect(waits.length).toBeGreaterThanOrEqual(1);
    }
    recordHistories([
      [id, 'waits.json'],
      [`${id}/step/a`, 'researcher-waits.json'],
    ]);
  });
});
