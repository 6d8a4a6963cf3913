// The thin slice: POST /v1/research starts the research workflow on the real dev server; it calls
// the LLM (the scripted server) and the store (PostgreSQL) and finishes.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bySchema } from '../support/llm-server';
import { startHarness, type Harness } from '../support/harness';
import { missingReason, temporalAddress, databaseUrl } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`thin slice through the API (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  it('classifies a question with the LLM, stores the run and completes', async () => {
    h.llm.script([
      {
        name: 'coordinator',
        match: bySchema('CoordinatorDecision'),
        reply: {
          json: { action: 'research', locale: 'en-US', directAnswer: null, researchTopic: 'How fast did solar electricity costs fall from 2010 to 2022?' },
          usage: { prompt: 120, completion: 30 },
        },
      },
    ]);
    const question = 'How much cheaper has solar power become since 2010?';
    const res = await request(h.app).post('/v1/research').send({ question, options: { maxSteps: 3 } }).expect(202);
    expect(res.body.status).toBe('running');
    expect(res.body.id).toMatch(/^research-[0-9a-f-]{36}$/);

    const result = await h.client.workflow.getHandle(res.body.id).result();
    expect(result).toEqual({
      id: res.body.id,
      status: 'completed',
      outcome: 'research_accepted',
      locale: 'en-US',
      summary: 'How fast did solar electricity costs fall from 2010 to 2022?',
      // 120 prompt tokens at $1/M + 30 completion tokens at $2/M
      usage: { promptTokens: 120, completionTokens: 30, costUsd: 0.00018 },
    });

    const { rows } = await h.pool.query('SELECT * FROM research_runs WHERE id = $1', [res.body.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ question, status: 'completed', outcome: 'research_accepted', locale: 'en-US', tenant: 'default', prompt_tokens: 120, completion_tokens: 30 });
    expect(rows[0].completed_at).toBeInstanceOf(Date);
    const calls = await h.pool.query('SELECT role, model, prompt_name FROM llm_calls WHERE research_id = $1', [res.body.id]);
    expect(calls.rows).toEqual([{ role: 'coordinator', model: 'scripted-coordinator', prompt_name: 'coordinator' }]);

    expect(h.llm.requests).toHaveLength(1);
    const sent = h.llm.requests[0]!;
    expect(sent.body.model).toBe('scripted-coordinator');
    expect(sent.authorization).toBe('Bearer ***');
    expect(sent.body.response_format?.type).toBe('json_schema');
    expect(sent.body.response_format?.json_schema?.name).toBe('CoordinatorDecision');
    expect(sent.body.messages[0]!.role).toBe('system');
    // The question reaches the model as delimited data, not as instructions.
    expect(sent.body.messages[1]!.content).toBe(`<user_message>\n${question}\n</user_message>`);

    const status = await request(h.app).get(`/v1/research/${res.body.id}`).expect(200);
    expect(status.body).toMatchObject({ id: res.body.id, status: 'completed', phase: 'done', question, usage: { promptTokens: 120 } });
  });

  it('answers small talk directly and records that', async () => {
    h.llm.script([
      {
        match: bySchema('CoordinatorDecision'),
        reply: { json: { action: 'answer_directly', locale: 'de-DE', directAnswer: 'Hallo! Worüber soll ich recherchieren?', researchTopic: null } },
      },
    ]);
    const res = await request(h.app).post('/v1/research').send({ question: 'Hallo!' }).expect(202);
    const result = await h.client.workflow.getHandle(res.body.id).result();
    expect(result).toMatchObject({ outcome: 'answered_directly', locale: 'de-DE', summary: 'Hallo! Worüber soll ich recherchieren?' });
    const { rows } = await h.pool.query('SELECT answer, locale FROM research_runs WHERE id = $1', [res.body.id]);
    expect(rows[0]).toEqual({ answer: 'Hallo! Worüber soll ich recherchieren?', locale: 'de-DE' });
  });

  it('repairs an answer that does not match the schema with one more request', async () => {
    h.llm.script([
      { match: bySchema('CoordinatorDecision'), times: 1, reply: { json: { action: 'maybe', locale: 'en' } } },
      { match: bySchema('CoordinatorDecision'), reply: { json: { action: 'research', locale: 'en', directAnswer: null, researchTopic: 'Battery prices' } } },
    ]);
    const res = await request(h.app).post('/v1/research').send({ question: 'battery prices?' }).expect(202);
    const result = await h.client.workflow.getHandle(res.body.id).result();
    expect(result.outcome).toBe('research_accepted');
    expect(h.llm.requests).toHaveLength(2);
    const repair = h.llm.requests[1]!.body.messages.at(-1)!;
    expect(repair.role).toBe('user');
    expect(repair.content).toMatch(/did not match the schema: action/);
  });

  it('retries a 500 from the LLM and completes, one HTTP call per attempt', async () => {
    h.llm.script([
      { match: bySchema('CoordinatorDecision'), times: 1, reply: { status: 500 } },
      { match: bySchema('CoordinatorDecision'), reply: { json: { action: 'research', locale: 'en', directAnswer: null, researchTopic: 'x' } } },
    ]);
    const res = await request(h.app).post('/v1/research').send({ question: 'retry me' }).expect(202);
    const result = await h.client.workflow.getHandle(res.body.id).result();
    expect(result.status).toBe('completed');
    expect(h.llm.requests.map((r) => r.status)).toEqual([500, 200]);
  });
});
