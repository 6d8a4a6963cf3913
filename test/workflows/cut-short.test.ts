// A research step stopped early says so: its tool rounds ran out while the model still wanted
// tools, or its share of the run's budget was spent. The step's output and its findings' meta
// carry why, and the run's notes and the report's notes section list it. A step whose conversation
// outgrew the context budget says so too. A step that finished on its own carries nothing.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult, StepInput, StepOutput } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { defaultReact, planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { runResearcherStep } from '../support/researcher-step';

const ready = Boolean(temporalAddress() && databaseUrl());

const step = { id: 'costs', title: 'Solar cost decline', description: 'Find how far solar costs fell', type: 'research' as const };

describe.skipIf(!ready)(`steps cut short (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { RESEARCHER_PYTHON: 'false' } });
  });
  afterAll(async () => h?.close());

  async function researchStep(extra: Partial<StepInput>): Promise<{ out: StepOutput; meta: Record<string, unknown> }> {
    h.llm.script(researchRules());
    const { id, out } = await runResearcherStep(h, {
      question: 'How much cheaper has solar become?',
      step: { ...step, needSearch: true, dependsOn: [] },
      ...extra,
    });
    const doc = await h.pool.query('SELECT meta FROM documents WHERE research_id = $1 AND key = $2', [id, out.key]);
    return { out, meta: doc.rows[0].meta };
  }

  it('a step whose rounds ran out while the model still wanted tools says so, in its output and its findings', async () => {
    // The scripted researcher searches, then reads, then answers: one round is not enough.
    const { out, meta } = await researchStep({ maxToolRounds: 1 });
    expect(out.cutShort).toBe('its tool rounds (maxToolRounds 1) ran out while the model still wanted tools');
    expect(meta.cutShort).toBe(out.cutShort);
    expect(h.llm.requests.filter((r) => r.rule === 'react')).toHaveLength(2);
  });

  it("a step that spent its share of the run's budget says so", async () => {
    const { out, meta } = await researchStep({ budget: { tokens: 1 } });
    expect(out.cutShort).toBe("its share of the run's budget was spent");
    expect(meta.cutShort).toBe(out.cutShort);
  });

  it('a step that finished on its own carries no such note', async () => {
    const { out, meta } = await researchStep({});
    expect(out.cutShort).toBeUndefined();
    expect(meta.cutShort).toBeUndefined();
  });

  it("the run's notes and the report's notes section list a step that was cut short", async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    const res = await request(h.app)
      .post('/v1/research')
      .send({
        question: 'Solar costs?',
        options: { autoAcceptPlan: true, maxToolRounds: 1, maxResearchLoops: 0, maxReflectionAttempts: 0 },
      })
      .expect(202);
    const result = (await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
    const line = 'Step a was cut short (its tool rounds (maxToolRounds 1) ran out while the model still wanted tools)';
    const status = (await request(h.app).get(`/v1/research/${res.body.id}`).expect(200)).body;
    expect(status.notes.join('\n')).toContain(line);
    expect(status.plan.steps[0].notes).toContain('cut short: its tool rounds (maxToolRounds 1) ran out while the model still wanted tools');
    // The reporter is told, and the published report's notes list it.
    const reporter = h.llm.requests.filter((r) => r.rule === 'reporter').at(-1)!;
    expect(JSON.stringify(reporter.body.messages)).toContain(line);
    const report = await request(h.app).get(`/v1/research/${res.body.id}/report`).expect(200);
    expect(report.text).toContain(line);
  });
});

describe.skipIf(!ready)(`a step cut short by its context budget (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    // The smallest context budget there is: a task longer than it leaves no room for tools.
    h = await startHarness({ env: { RESEARCHER_PYTHON: 'false', RESEARCHER_CONTEXT_TOKENS: '1000' } });
  });
  afterAll(async () => h?.close());

  it('says that the context budget was reached', async () => {
    // Offered no tools, the researcher writes what it has.
    const react = (req: ChatRequest): Reply => (req.tools?.length ? defaultReact(req) : { content: 'What I have so far.' });
    h.llm.script(researchRules({ react }));
    const id = `researcher-${randomUUID()}`;
    const description = Array.from({ length: 400 }, (_, i) => `Find the solar cost figure number ${i} and its source.`).join(' ');
    const input: StepInput = {
      researchId: id,
      question: 'How much cheaper has solar become?',
      locale: 'en-US',
      step: { ...step, description, needSearch: true, dependsOn: [] },
      attempt: 1,
      feedback: '',
      dependencyKeys: [],
      maxToolRounds: 8,
    };
    const out = (await h.client.workflow.execute('researcherWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: id,
      args: [input],
    })) as StepOutput;
    expect(out.cutShort).toBe('the context budget was reached');
    const turns = h.llm.requests.filter((r) => r.rule === 'react');
    expect(turns.map((r) => r.body.tools?.length ?? 0)).toEqual([0]);
    const doc = await h.pool.query('SELECT meta FROM documents WHERE research_id = $1 AND key = $2', [id, out.key]);
    expect(doc.rows[0].meta.cutShort).toBe('the context budget was reached');
  });
});
