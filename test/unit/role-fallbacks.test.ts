// Degrade, don't die: each role's activity, driven against a scripted model that answers badly
// (not JSON, a repair that is no better, a plan full of mistakes), returns what the workflow
// expects and leaves a note for the report saying which fallback it took and why.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptExamples } from '../../src/activities/llm/render';
import { createLlm } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { createCoordinatorActivities } from '../../src/activities/roles/coordinator';
import { fallbackNotes } from '../../src/activities/role-kit/fallbacks';
import { judgeStep } from '../../src/activities/roles/judge';
import { createKnowledgeRouterActivities } from '../../src/activities/roles/knowledge-router';
import { createBackgroundActivities } from '../../src/activities/roles/background';
import { createGapReflectionActivities } from '../../src/activities/roles/gap-reflection';
import { createPlannerActivities } from '../../src/activities/roles/planner';
import { createRewriteActivities } from '../../src/activities/roles/rewrite';
import { createStore, type Store } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import { planProblems } from '../../src/shared/plan-edits';
import type { PlanStep } from '../../src/shared/schemas';
import { bySchema, ScriptedLlmServer, type Reply } from '../support/llm-server';
import { testConfig } from '../support/harness';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());
const QUESTION = 'How much cheaper has solar power become since 2010?';
/** What a base model said: no JSON at all, to the question and to the repair request alike. */
const mumble: Reply = { content: 'yes' };

describe.skipIf(!ready)(`role fallbacks (${ready ? 'live' : missingReason()})`, () => {
  const server = new ScriptedLlmServer();
  let pool: ReturnType<typeof createPool>;
  let store: Store;
  let llm: ReturnType<typeof createLlm>;

  beforeAll(async () => {
    await server.start();
    pool = createPool(databaseUrl()!, 4);
    store = createStore(pool);
    const config = testConfig(server.url);
    const client = createLlmClient(config);
    llm = createLlm({ config, calls: store.llmCalls, leases: store.llmLeases, client: () => client });
  });
  afterAll(async () => {
    await pool?.end();
    await server.close();
  });

  /** Runs `fn` as the first attempt of an activity of a fresh run. */
  const asActivity = <T>(researchId: string, fn: () => Promise<T>): Promise<T> =>
    new MockActivityEnvironment({
      activityId: `act-${randomUUID()}`,
      attempt: 1,
      workflowExecution: { workflowId: researchId, runId: 'r' },
    }).run(fn);
  const newRun = () => `fallback-${randomUUID()}`;
  /** The planner's model role's activities: rewrite, background, plan and gap reflection. */
  const planner = (canRunCode = true) => ({
    ...createRewriteActivities({ llm, store }),
    ...createBackgroundActivities({ llm, store }),
    ...createPlannerActivities({ llm, store, canRunCode: async () => canRunCode }),
    ...createGapReflectionActivities({ llm, store, canRunCode: async () => canRunCode }),
  });

  it('coordinator: no usable answer → research the question as asked, locale detected or as requested', async () => {
    server.script([{ match: bySchema('CoordinatorDecision'), reply: mumble }]);
    const coordinator = createCoordinatorActivities({ llm, store });
    const id = newRun();
    const input = { researchId: id, question: QUESTION, allowClarification: true, clarifications: '' };
    const r = await asActivity(id, () => coordinator.classifyRequest(input));
    expect(r.decision).toEqual({
      action: 'research',
      locale: 'en-US',
      directAnswer: null,
      researchTopic: QUESTION,
      clarificationQuestion: null,
    });
    expect(server.requests.length).toBeGreaterThanOrEqual(2); // the question and at least one repair request
    const notes = await fallbackNotes(store, id);
    expect(notes).toEqual([
      expect.stringMatching(
        /^Fallback \(coordinator\): the request was researched as asked, in en-US, because the model gave no usable answer/,
      ),
    ]);

    const asked = await asActivity(id, () => coordinator.classifyRequest({ ...input, locale: 'de-DE' }));
    expect(asked.decision.locale).toBe('de-DE');
  });

  it('coordinator: a usable answer with a locale that contradicts the question gets the question language, with a note', async () => {
    server.script([
      {
        match: bySchema('CoordinatorDecision'),
        reply: {
          json: {
            action: 'research',
            locale: 'zh-CN',
            directAnswer: null,
            researchTopic: 'Solar costs',
            clarificationQuestion: 'Which country?',
          },
        },
      },
    ]);
    const coordinator = createCoordinatorActivities({ llm, store });
    const id = newRun();
    const r = await asActivity(id, () =>
      coordinator.classifyRequest({ researchId: id, question: QUESTION, allowClarification: false, clarifications: '' }),
    );
    // Clarification was not allowed: the model's question is dropped.
    expect(r.decision).toMatchObject({ action: 'research', locale: 'en-US', researchTopic: 'Solar costs', clarificationQuestion: null });
    expect(await fallbackNotes(store, id)).toEqual([expect.stringMatching(/the report is in en-US: zh-CN does not match the language/)]);
  });

  it('rewrite: no usable answer → the question itself as research question and query', async () => {
    server.script([{ match: bySchema('QueryExpansion'), reply: mumble }]);
    const id = newRun();
    const r = await asActivity(id, () =>
      planner().expandQueries({
        researchId: id,
        question: `${QUESTION}\n(Coordinator's reading: solar prices)`,
        locale: 'en-US',
        count: 3,
      }),
    );
    expect(r.expansion.researchQuestion).toBe(QUESTION);
    expect(r.expansion.queries[0]).toBe(QUESTION);
    expect(r.expansion.queries.length).toBeGreaterThanOrEqual(1);
    expect(r.expansion.queries.length).toBeLessThanOrEqual(3);
    expect(r.usage.promptTokens).toBe(0);
    expect(await fallbackNotes(store, id)).toEqual([expect.stringMatching(/^Fallback \(rewrite\): the question itself was researched/)]);
  });

  it("rewrite: its prompt's example copied for another topic is left out, and the question searched instead", async () => {
    const example = promptExamples('rewrite')[0] as { researchQuestion: string; queries: string[] };
    const alloy = 'Which properties make the Varnholt nickel-cobalt alloy suitable for turbine blades?';
    // The example whole, and one query of the model's own.
    const copy = { researchQuestion: example.researchQuestion, queries: [...example.queries, 'Varnholt alloy creep resistance'] };
    server.script([{ match: bySchema('QueryExpansion'), reply: { json: copy } }]);
    const id = newRun();
    const r = await asActivity(id, () => planner().expandQueries({ researchId: id, question: alloy, locale: 'en-US', count: 3 }));
    expect(r.expansion).toEqual({ researchQuestion: alloy, queries: ['Varnholt alloy creep resistance'] });
    expect(await fallbackNotes(store, id)).toEqual([
      `Correction (rewrite): ${example.queries.length + 1} texts of the rewrite repeated its prompt's example about another topic and were left out.`,
    ]);
    // For a question the example is about, the same answer stands.
    const onTopic = newRun();
    const same = await asActivity(onTopic, () =>
      planner().expandQueries({ researchId: onTopic, question: QUESTION, locale: 'en-US', count: 3 }),
    );
    expect(same.expansion.queries).toEqual(example.queries);
    expect(await fallbackNotes(store, onTopic)).toEqual([]);
  });

  it('rewrite: a long answer is cut to the count asked for, not refused', async () => {
    const queries = Array.from({ length: 14 }, (_, i) => `solar query ${i}`);
    server.script([{ match: bySchema('QueryExpansion'), reply: { json: { researchQuestion: QUESTION, queries } } }]);
    const id = newRun();
    const r = await asActivity(id, () => planner().expandQueries({ researchId: id, question: QUESTION, locale: 'en-US', count: 3 }));
    expect(r.expansion.queries).toEqual(['solar query 0', 'solar query 1', 'solar query 2']);
    expect(server.requests).toHaveLength(1);
    const schema = server.requests[0]!.body.response_format!.json_schema!.schema as { properties: { queries: { maxItems: number } } };
    expect(schema.properties.queries.maxItems).toBe(10);
  });

  it('planner: a plan with source ids, invented and self dependencies, a cycle, duplicate ids, an empty title, a processing step without a sandbox and too many steps is repaired by code', async () => {
    const step = (id: string, dependsOn: string[], extra: Partial<PlanStep> = {}) => ({
      id,
      title: `Step ${id}`,
      description: `Find facts for ${id}`,
      type: 'research',
      needSearch: true,
      dependsOn,
      ...extra,
    });
    const draft = {
      title: '',
      thought: 'Find prices.',
      locale: 'rnl',
      hasEnoughContext: false,
      steps: [
        step('prices', ['S3f9a01c2', 'prices', 'step-9']),
        step('prices', ['prices']),
        step('Causes Of Decline!', ['b-cycle'], { title: '' }),
        step('b-cycle', ['causes-of-decline']),
        step('calc', ['prices'], { type: 'processing', needSearch: false }),
        step('extra', []),
      ],
    };
    server.script([{ match: bySchema('Plan'), reply: { json: draft } }]);
    const id = newRun();
    const r = await asActivity(id, () =>
      planner(false).planResearch({ researchId: id, question: QUESTION, locale: 'en-US', maxSteps: 5, feedback: '', problems: [] }),
    );
    expect(server.requests).toHaveLength(1); // repaired, not re-asked
    expect(r.problems).toEqual([]);
    expect(planProblems(r.plan, 5)).toEqual([]);
    expect(r.plan.title).toBe(QUESTION);
    expect(r.plan.locale).toBe('en-US');
    expect(r.plan.steps.map((s) => [s.id, s.type, s.dependsOn])).toEqual([
      ['prices', 'research', []],
      ['prices-2', 'research', ['prices']],
      ['causes-of-decline', 'research', ['b-cycle']],
      ['b-cycle', 'research', []],
      ['calc', 'research', ['prices']],
    ]);
    expect(r.plan.steps[2]!.title).toBe('Find facts for Causes Of Decline!');
    // The planner was told there is no sandbox.
    expect(server.requests[0]!.body.messages[0]!.content).toMatch(/No code sandbox is available/);
    const [note] = await fallbackNotes(store, id);
    expect(note).toMatch(/^Correction \(planner\): code adjusted the planner's plan: /);
    expect(note).toMatch(/1 step beyond the 5 allowed was cut/);
    expect(note).toMatch(/step "prices": unknown dependencies dropped \(S3f9a01c2, prices, step-9\)/);
    expect(note).toMatch(/dependency on "causes-of-decline" dropped to break a cycle/);
    expect(note).toMatch(/step "calc" became a research step/);
  });

  it('planner: no usable answer → a one-step research plan from the question', async () => {
    server.script([{ match: bySchema('Plan'), reply: mumble }]);
    const id = newRun();
    const r = await asActivity(id, () =>
      planner().planResearch({ researchId: id, question: QUESTION, locale: 'en-US', maxSteps: 4, feedback: '', problems: [] }),
    );
    expect(r.problems).toEqual([]);
    expect(r.plan.hasEnoughContext).toBe(false);
    expect(r.plan.steps).toEqual([expect.objectContaining({ id: 'research', type: 'research', needSearch: true, dependsOn: [] })]);
    expect(r.plan.steps[0]!.description).toContain(QUESTION);
    expect(await fallbackNotes(store, id)).toEqual([expect.stringMatching(/^Fallback \(planner\): a one-step research plan was built/)]);
  });

  it("planner: a copy of the prompt's example plan on another topic is asked for again, then replaced by the question", async () => {
    // The prompt's own example, as a small model copied it for a question about an alloy.
    const example = promptExamples('planner')[0]!;
    server.script([{ match: bySchema('Plan'), reply: { json: example } }]);
    const question = 'Which properties make the Varnholt nickel-cobalt alloy suitable for turbine blades?';
    const ask = (problems: string[]) =>
      asActivity(id, () => planner().planResearch({ researchId: id, question, locale: 'en-US', maxSteps: 4, feedback: '', problems }));
    const id = newRun();
    const first = await ask([]);
    expect(first.problems[0]).toMatch(/^the plan is not about the question: none of its steps \("[^"]+", "[^"]+"\) shares a word with it/);
    expect(await fallbackNotes(store, id)).toEqual([]);
    // The workflow asks again with that problem quoted; the same copy again: the question, researched as asked.
    const second = await ask(first.problems);
    expect(
      server.requests
        .at(-1)!
        .body.messages.map((m) => m.content)
        .join('\n'),
    ).toContain('the plan is not about the question');
    expect(second.problems).toEqual([]);
    expect(second.plan.steps).toEqual([expect.objectContaining({ id: 'research', type: 'research' })]);
    expect(second.plan.steps[0]!.description).toContain(question);
    expect(await fallbackNotes(store, id)).toEqual([
      'Fallback (planner): a one-step research plan was built from the question, because the model twice wrote a plan that is not about the question.',
    ]);
    // The same example for a question it is about stands.
    const onTopic = newRun();
    const r = await asActivity(onTopic, () =>
      planner().planResearch({ researchId: onTopic, question: QUESTION, locale: 'en-US', maxSteps: 4, feedback: '', problems: [] }),
    );
    expect(r.problems).toEqual([]);
    expect(r.plan.steps.map((s) => s.title)).toEqual((example.steps as { title: string }[]).map((s) => s.title));
  });

  it("planner: the example plan with the question's subject put in is asked for again; a plan the question asks for stands", async () => {
    // As the 0.5B model wrote it for a question about an alloy: "Solar" became "Velmar".
    const example = promptExamples('planner')[0]! as { steps: { title: string; description: string }[] };
    const swapped = {
      ...example,
      steps: example.steps.map((st) => ({
        ...st,
        title: st.title.replace('Solar', 'Velmar'),
        description: st.description.replace('solar power', 'Velmar alloy'),
      })),
    };
    server.script([{ match: bySchema('Plan'), reply: { json: swapped } }]);
    const ask = (question: string) => {
      const id = newRun();
      return asActivity(id, () =>
        planner().planResearch({ researchId: id, question, locale: 'en-US', maxSteps: 4, feedback: '', problems: [] }),
      );
    };
    const alloy = await ask('What is the Velmar alloy made of, how strong and dense is it, and who makes it?');
    expect(alloy.problems[0]).toBe(
      `the plan is not about the question: its step "Velmar prices 2010-2024" is the example's "${example.steps[0]!.title}" with another subject put in; plan steps that research what the question asks`,
    );
    // A question on Velmar's prices from 2010 to 2024 asks for that very step.
    const prices = await ask('How did Velmar alloy prices change 2010-2024, and why did prices fell?');
    expect(prices.problems).toEqual([]);
    expect(prices.plan.steps.map((st) => st.title)).toEqual(['Velmar prices 2010-2024', example.steps[1]!.title]);
  });

  it("background: a brief that repeats the prompt's example is not used; the sources are listed, with the reason", async () => {
    const example = promptExamples('background')[0] as { text: string; summary: string };
    const id = newRun();
    const datasheet = 'The Velmar alloy datasheet. Tensile strength: 610 MPa. Density: 2.71 g/cm3. Made by Korsholm Metals.';
    await store.saveSources(id, [
      { sourceId: 'S00000003', url: 'https://example.org/velmar', title: 'Velmar datasheet', content: datasheet, provider: 'searxng' },
    ]);
    // The example's sentences with the subject swapped, citing the real source.
    const copy = {
      text: `Velmar alloy costs fell by about 90% between 2010 and 2023 [S00000003].`,
      summary: example.summary.replace('Solar', 'Velmar alloy'),
    };
    server.script([{ match: bySchema('BackgroundBrief'), reply: { json: copy } }]);
    const brief = await asActivity(id, () =>
      planner().writeBackground({
        researchId: id,
        question: 'How strong is the Velmar alloy?',
        locale: 'en-US',
        sourceIds: ['S00000003'],
        searchErrors: [],
      }),
    );
    expect(brief.sourceIds).toEqual(['S00000003']);
    const [doc] = await store.getDocuments(id, ['background']);
    expect(doc!.content).toContain('- **Velmar datasheet**: The Velmar alloy datasheet.');
    expect(doc!.content).not.toContain('90%');
    expect(await fallbackNotes(store, id)).toEqual([
      expect.stringMatching(
        /^Fallback \(background\): the background lists the sources found instead of summarising them, because the model repeated its prompt's example \("costs fell by about 90% between 2010 and 2023"\) instead of writing from the sources\.$/,
      ),
    ]);
    // On the example's own topic, with sources that say so, the same sentences are the brief.
    const solar = newRun();
    const costs =
      'Solar power costs fell by about 90% between 2010 and 2023. Cheaper modules drove most of it, mostly through cheaper modules.';
    await store.saveSources(solar, [
      { sourceId: 'S3f9a01c2', url: 'https://example.org/solar', title: 'Solar costs', content: costs, provider: 'searxng' },
    ]);
    server.script([
      {
        match: bySchema('BackgroundBrief'),
        reply: { json: { text: 'Solar power costs fell by about 90% between 2010 and 2023 [S3f9a01c2].', summary: example.summary } },
      },
    ]);
    await asActivity(solar, () =>
      planner().writeBackground({ researchId: solar, question: QUESTION, locale: 'en-US', sourceIds: ['S3f9a01c2'], searchErrors: [] }),
    );
    expect((await store.getDocuments(solar, ['background']))[0]!.content).toBe(
      'Solar power costs fell by about 90% between 2010 and 2023 [S3f9a01c2].',
    );
    expect(await fallbackNotes(store, solar)).toEqual([]);
  });

  it('planner: "enough context" on a thin background does not skip research', async () => {
    const id = newRun();
    await store.saveDocument(id, {
      key: 'background',
      kind: 'background',
      content: 'Solar is cheap.',
      summary: '',
      sourceIds: [],
      meta: {},
    });
    server.script([
      {
        match: bySchema('Plan'),
        reply: { json: { title: 'Done', thought: 'Known.', locale: 'en-US', hasEnoughContext: true, steps: [] } },
      },
    ]);
    const r = await asActivity(id, () =>
      planner().planResearch({ researchId: id, question: QUESTION, locale: 'en-US', maxSteps: 4, feedback: '', problems: [] }),
    );
    expect(r.plan.hasEnoughContext).toBe(false);
    expect(r.plan.steps).toHaveLength(1);
    expect(r.problems).toEqual([]);
    const [note] = await fallbackNotes(store, id);
    expect(note).toMatch(/the background .* missing or thin, so the question is researched/);
    expect(note).toMatch(/a research step for the question was added/);
  });

  it('planner: "enough context" on a cited brief skips research and says so', async () => {
    const id = newRun();
    const content = `${'Solar power costs fell by about 90% between 2010 and 2023 [S00000001]. '.repeat(4)}Modules got cheaper [S00000002].`;
    await store.saveDocument(id, {
      key: 'background',
      kind: 'background',
      content,
      summary: '',
      sourceIds: ['S00000001', 'S00000002'],
      meta: {},
    });
    const stepDraft = { id: 'a', title: 'A', description: 'Find A', type: 'research', needSearch: true, dependsOn: [] };
    server.script([
      {
        match: bySchema('Plan'),
        reply: { json: { title: 'Done', thought: 'Known.', locale: 'en-US', hasEnoughContext: true, steps: [stepDraft] } },
      },
    ]);
    const r = await asActivity(id, () =>
      planner().planResearch({ researchId: id, question: QUESTION, locale: 'en-US', maxSteps: 4, feedback: '', problems: [] }),
    );
    expect(r.plan).toMatchObject({ hasEnoughContext: true, steps: [] });
    expect(await fallbackNotes(store, id)).toEqual([
      expect.stringMatching(/background brief answers the question, so no research steps ran, and its 1 planned step/),
    ]);
  });

  it('planner: "enough context" on a brief that code listed from the sources (no usable brief) does not skip research', async () => {
    const id = newRun();
    const long = 'Solar power costs fell by about 90% between 2010 and 2023, according to this source. '.repeat(4);
    await store.saveSources(id, [
      { sourceId: 'S00000001', url: 'https://example.org/a', title: 'Costs A', content: long, provider: 'searxng' },
      { sourceId: 'S00000002', url: 'https://example.org/b', title: 'Costs B', content: long, provider: 'searxng' },
    ]);
    const enough = { title: 'Done', thought: 'Known.', locale: 'en-US', hasEnoughContext: true, steps: [] };
    server.script([
      { match: bySchema('BackgroundBrief'), reply: mumble },
      { match: bySchema('Plan'), reply: { json: enough } },
    ]);
    const brief = await asActivity(id, () =>
      planner().writeBackground({
        researchId: id,
        question: QUESTION,
        locale: 'en-US',
        sourceIds: ['S00000001', 'S00000002'],
        searchErrors: [],
      }),
    );
    expect(brief.sourceIds).toEqual(['S00000001', 'S00000002']);
    const r = await asActivity(id, () =>
      planner().planResearch({ researchId: id, question: QUESTION, locale: 'en-US', maxSteps: 4, feedback: '', problems: [] }),
    );
    expect(r.plan.hasEnoughContext).toBe(false);
    expect(r.plan.steps).toHaveLength(1);
  });

  it('judge: no usable verdict → the step passes, with a note and its verdict event', async () => {
    const id = newRun();
    await store.saveDocument(id, { key: 'step/a/1', kind: 'step', content: 'Costs fell.', summary: '', sourceIds: [], meta: {} });
    server.script([{ match: bySchema('JudgeVerdict'), reply: mumble }]);
    const step: PlanStep = { id: 'a', title: 'A', description: 'Find A', type: 'research', needSearch: true, dependsOn: [] };
    const r = await asActivity(id, () => judgeStep({ llm, store }, { researchId: id, key: 'step/a/1', step, question: QUESTION }));
    expect(r.verdict).toEqual({ passed: true, feedback: '' });
    expect(await fallbackNotes(store, id)).toEqual([
      expect.stringMatching(/^Fallback \(judge\): step a \(attempt 1\) passed unchecked, because/),
    ]);
    const { rows } = await pool.query<{ data: { passed: boolean } }>(
      `SELECT data FROM run_events WHERE research_id = $1 AND type = 'verdict'`,
      [id],
    );
    expect(rows.map((row) => row.data.passed)).toEqual([true]);
  });

  it('gap reflection: no usable answer → no gaps, nothing added', async () => {
    server.script([{ match: bySchema('GapReflection'), reply: mumble }]);
    const id = newRun();
    const r = await asActivity(id, () =>
      planner().reflectOnGaps({ researchId: id, question: QUESTION, stepKeys: [], existingIds: ['a'], maxSteps: 2 }),
    );
    expect(r).toMatchObject({ answered: true, gaps: [], steps: [] });
    expect(await fallbackNotes(store, id)).toEqual([
      expect.stringMatching(/^Fallback \(gap-reflection\): no follow-up research was added/),
    ]);
  });

  it('gap reflection: follow-up steps are repaired like a plan; one under a taken id is dropped', async () => {
    const followUp = (id: string, dependsOn: string[]) => ({
      id,
      title: `Prices ${id}`,
      description: 'Find 2024 prices',
      type: 'processing',
      needSearch: false,
      dependsOn,
    });
    server.script([
      {
        match: bySchema('GapReflection'),
        reply: {
          json: {
            answered: false,
            gaps: ['No 2024 figure.'],
            followUpSteps: [followUp('a', []), followUp('Prices 2024', ['a', 'S00000001', 'prices-2024'])],
          },
        },
      },
    ]);
    const id = newRun();
    const r = await asActivity(id, () =>
      planner(false).reflectOnGaps({ researchId: id, question: QUESTION, stepKeys: [], existingIds: ['a'], maxSteps: 2 }),
    );
    expect(r.answered).toBe(false);
    expect(r.steps).toEqual([expect.objectContaining({ id: 'prices-2024', type: 'research', needSearch: true, dependsOn: ['a'] })]);
  });

  it("the prompt's examples, copied for another subject: a follow-up step is left out, a judge's feedback passes the step, a coordinator's topic gives way to the question", async () => {
    const question = 'What is the Velmar alloy made of, how strong and dense is it, and who makes it?';
    const gap = promptExamples('gap-reflection')[0] as { followUpSteps: { title: string }[] };
    const copied = gap.followUpSteps.map((st) => ({ ...st, id: 'velmar-2024', title: st.title.replace('Solar', 'Velmar') }));
    const own = { ...copied[0]!, id: 'velmar-maker', title: 'Who makes Velmar', description: 'Find the maker of the alloy.' };
    server.script([
      { match: bySchema('GapReflection'), reply: { json: { answered: false, gaps: ['No maker.'], followUpSteps: [...copied, own] } } },
    ]);
    const id = newRun();
    const gaps = await asActivity(id, () =>
      planner().reflectOnGaps({ researchId: id, question, stepKeys: [], existingIds: ['a'], maxSteps: 3 }),
    );
    expect(gaps.steps.map((st) => st.title)).toEqual(['Who makes Velmar']);

    await store.saveDocument(id, {
      key: 'step/a/1',
      kind: 'step',
      content: 'Velmar is 610 MPa strong [S00000003].',
      summary: '',
      sourceIds: [],
      meta: {},
    });
    const feedback = (promptExamples('judge') as { feedback: string }[]).find((e) => e.feedback)!.feedback;
    server.script([{ match: bySchema('JudgeVerdict'), reply: { json: { passed: false, feedback } } }]);
    const step: PlanStep = {
      id: 'a',
      title: 'Strength',
      description: 'Find its strength',
      type: 'research',
      needSearch: true,
      dependsOn: [],
    };
    const judged = await asActivity(id, () => judgeStep({ llm, store }, { researchId: id, key: 'step/a/1', step, question }));
    expect(judged.verdict).toEqual({ passed: true, feedback: '' });

    const topic = (promptExamples('coordinator')[0] as { researchTopic: string }).researchTopic.replace('solar power', 'the Velmar alloy');
    server.script([
      {
        match: bySchema('CoordinatorDecision'),
        reply: { json: { action: 'research', locale: 'en-US', directAnswer: null, researchTopic: topic, clarificationQuestion: null } },
      },
    ]);
    const c = await asActivity(id, () =>
      createCoordinatorActivities({ llm, store }).classifyRequest({
        researchId: id,
        question,
        allowClarification: false,
        clarifications: '',
      }),
    );
    expect(c.decision.researchTopic).toBe(question);
    expect([...(await fallbackNotes(store, id))].sort()).toEqual([
      "Correction (coordinator): the question is researched as asked: the model's reading of it repeated its prompt's example.",
      expect.stringMatching(
        /^Fallback \(judge\): step a \(attempt 1\) passed unchecked, because the model repeated its prompt's example \("the 2024 price is missing/,
      ),
    ]);
  });

  it('knowledge router: no usable choice → every usable collection is searched', async () => {
    server.script([{ match: bySchema('KnowledgeChoice'), reply: mumble }]);
    const id = newRun();
    const collections = [
      { collectionId: 'C0000000000000001', name: 'Energy', description: 'Reports', documents: 3 },
      { collectionId: 'C0000000000000002', name: 'Misc', description: '', documents: 1 },
    ];
    const r = await asActivity(id, () =>
      createKnowledgeRouterActivities({ llm, store }).chooseCollections({ researchId: id, question: QUESTION, collections }),
    );
    expect(r.collectionIds).toEqual(['C0000000000000001', 'C0000000000000002']);
    expect(await fallbackNotes(store, id)).toEqual([
      expect.stringMatching(/^Fallback \(knowledge-router\): every usable knowledge base collection/),
    ]);
  });

  it('an outage is not a fallback: the activity fails and is retried', async () => {
    server.script([{ match: bySchema('JudgeVerdict'), reply: { status: 401, error: { message: 'bad key' } } }]);
    const id = newRun();
    await store.saveDocument(id, { key: 'step/a/1', kind: 'step', content: 'Costs fell.', summary: '', sourceIds: [], meta: {} });
    const step: PlanStep = { id: 'a', title: 'A', description: 'Find A', type: 'research', needSearch: true, dependsOn: [] };
    await expect(
      asActivity(id, () => judgeStep({ llm, store }, { researchId: id, key: 'step/a/1', step, question: QUESTION })),
    ).rejects.toMatchObject({ type: 'LlmAuth' });
    expect(await fallbackNotes(store, id)).toEqual([]);
  });
});
