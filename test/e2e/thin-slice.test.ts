// The thin slice: POST /v1/research starts the research workflow on the real dev server; it calls
// the LLM (the scripted server) and the store (PostgreSQL) and finishes.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bySchema } from '../support/llm-server';
import { researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { missingReason, temporalAddress, databaseUrl } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`thin slice through the API (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  it('runs a question end to end: LLM roles, searches, PostgreSQL rows and a cited report', async () => {
    h.llm.script(
      researchRules({
        coordinator: {
          json: {
            action: 'research',
            locale: 'en-US',
            directAnswer: null,
            researchTopic: 'How fast did solar electricity costs fall from 2010 to 2022?',
            clarificationQuestion: null,
          },
          usage: { prompt: 120, completion: 30 },
        },
      }),
    );
    const question = 'How much cheaper has solar power become since 2010?';
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question, options: { maxSteps: 3, autoAcceptPlan: true } })
      .expect(202);
    expect(res.body.status).toBe('running');
    expect(res.body.id).toMatch(/^research-[0-9a-f-]{36}$/);

    const result = await h.client.workflow.getHandle(res.body.id).result();
    expect(result).toMatchObject({
      id: res.body.id,
      status: 'completed',
      outcome: 'report',
      locale: 'en-US',
      planVersion: 1,
      references: 6,
      removedCitations: [],
    });
    expect(result.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'b', status: 'completed', attempts: 1 },
    ]);
    expect(result.usage.promptTokens).toBeGreaterThan(120);

    const { rows } = await h.pool.query('SELECT * FROM research_runs WHERE id = $1', [res.body.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      question,
      status: 'completed',
      outcome: 'report',
      locale: 'en-US',
      tenant: 'default',
      phase: 'done',
      plan_version: 1,
    });
    expect(rows[0].completed_at).toBeInstanceOf(Date);
    expect(rows[0].prompt_tokens).toBe(result.usage.promptTokens);
    const calls = await h.pool.query('SELECT role, prompt_name FROM llm_calls WHERE research_id = $1 ORDER BY created_at', [res.body.id]);
    // Per step: search, crawl, answer (3 ReAct turns), one page extraction, the compression, the judge;
    // once per run: three pages read for the background, the gap reflection after the team, one
    // batch of the claim check and the user memory's learning step after the report.
    expect(calls.rows.map((r) => r.prompt_name).sort()).toEqual([
      'background',
      'citation-check',
      'compressor',
      'compressor',
      'coordinator',
      'extractor',
      'extractor',
      'extractor',
      'extractor',
      'extractor',
      'gap-reflection',
      'judge',
      'judge',
      'planner',
      'reporter',
      'researcher-react',
      'researcher-react',
      'researcher-react',
      'researcher-react',
      'researcher-react',
      'researcher-react',
      'rewrite',
      'user-memory',
    ]);
    const sources = await h.pool.query('SELECT count(*)::int AS n FROM sources WHERE research_id = $1', [res.body.id]);
    expect(sources.rows[0].n).toBeGreaterThanOrEqual(2);

    const first = h.llm.requests[0]!;
    expect(first.body.model).toBe('scripted-coordinator');
    expect(first.authorization).toBe('Bearer ***');
    expect(first.body.response_format?.type).toBe('json_schema');
    expect(first.body.response_format?.json_schema?.name).toBe('CoordinatorDecision');
    // The question reaches the model as delimited data, not as instructions.
    expect(first.body.messages[1]!.content).toMatch(new RegExp(`^<user_message>\\n${question.replace('?', '\\?')}\\n</user_message>`));
    expect(h.search.queries).toEqual(expect.arrayContaining(['solar cost', 'solar lcoe', 'pv module price', 'Step a', 'Step b']));

    const report = await request(h.app).get(`/v1/research/${res.body.id}/report`).expect(200);
    expect(report.headers['content-type']).toMatch(/text\/markdown/);
    expect(report.text).toMatch(/^# Solar costs/);
    expect(report.text).toMatch(/## References\n\n1\. \[.+\]\(http:\/\/127\.0\.0\.1:\d+\/articles\/.+\)\n2\. /);
    const json = await request(h.app).get(`/v1/research/${res.body.id}/report?format=json`).expect(200);
    expect(json.body.references).toHaveLength(6);

    const status = await request(h.app).get(`/v1/research/${res.body.id}`).expect(200);
    expect(status.body).toMatchObject({
      id: res.body.id,
      status: 'completed',
      phase: 'done',
      question,
      plan: { version: 1, steps: [{ id: 'a', status: 'completed', attempts: 1, type: 'research' }, { id: 'b' }] },
    });
  });

  it('answers small talk directly and records that', async () => {
    h.llm.script([
      {
        match: bySchema('CoordinatorDecision'),
        reply: {
          json: {
            action: 'answer_directly',
            locale: 'de-DE',
            directAnswer: 'Hallo! Worüber soll ich recherchieren?',
            researchTopic: null,
            clarificationQuestion: null,
          },
        },
      },
    ]);
    const res = await request(h.app).post('/v1/research').send({ question: 'Hallo!' }).expect(202);
    const result = await h.client.workflow.getHandle(res.body.id).result();
    expect(result).toMatchObject({ outcome: 'answered_directly', locale: 'de-DE', summary: 'Hallo! Worüber soll ich recherchieren?' });
    const { rows } = await h.pool.query('SELECT answer, locale FROM research_runs WHERE id = $1', [res.body.id]);
    expect(rows[0]).toEqual({ answer: 'Hallo! Worüber soll ich recherchieren?', locale: 'de-DE' });
    // The answer is readable: in the status, and as a one-paragraph report.
    const view = await request(h.app).get(`/v1/research/${res.body.id}`).expect(200);
    expect(view.body).toMatchObject({
      status: 'completed',
      phase: 'done',
      outcome: 'answered_directly',
      answer: 'Hallo! Worüber soll ich recherchieren?',
    });
    const report = await request(h.app).get(`/v1/research/${res.body.id}/report`).expect(200);
    expect(report.text).toBe('# Hallo!\n\nHallo! Worüber soll ich recherchieren?\n');
    const json = await request(h.app).get(`/v1/research/${res.body.id}/report?format=json`).expect(200);
    expect(json.body).toMatchObject({ title: 'Hallo!', references: [], removedCitations: [] });
  });

  it('repairs an answer that does not match the schema with one more request', async () => {
    h.llm.script([
      { match: bySchema('CoordinatorDecision'), times: 1, reply: { json: { action: 'maybe', locale: 'en' } } },
      ...researchRules(),
    ]);
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'battery prices?', options: { autoAcceptPlan: true } })
      .expect(202);
    const result = await h.client.workflow.getHandle(res.body.id).result();
    expect(result.outcome).toBe('report');
    const coordinatorCalls = h.llm.requests.filter((r) => r.body.response_format?.json_schema?.name === 'CoordinatorDecision');
    expect(coordinatorCalls).toHaveLength(2);
    const repair = coordinatorCalls[1]!.body.messages.at(-1)!;
    expect(repair.role).toBe('user');
    expect(repair.content).toMatch(/did not match the schema: action/);
  });

  it('retries a 500 from the LLM and completes, one HTTP call per attempt', async () => {
    h.llm.script([{ match: bySchema('CoordinatorDecision'), times: 1, reply: { status: 500 } }, ...researchRules()]);
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'retry me', options: { autoAcceptPlan: true } })
      .expect(202);
    const result = await h.client.workflow.getHandle(res.body.id).result();
    expect(result.status).toBe('completed');
    expect(h.llm.requests.slice(0, 2).map((r) => r.status)).toEqual([500, 200]);
    expect(h.llm.requests.filter((r) => r.status !== 200)).toHaveLength(1);
  });
});
