// One attempt at a time pays: two attempts of one LLM activity alive at once (a heartbeat timeout
// while the first still waits for the provider) make one request; the second waits for the
// first's answer. When the holder fails, the waiting attempt takes the call over.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlm } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { PROMPTS } from '../../src/activities/roles';
import { createStore } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import { bySchema, ScriptedLlmServer } from '../support/llm-server';
import { testConfig } from '../support/harness';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());
const vars = {
  question: 'Hello there',
  requestedLocale: '',
  allowClarification: false,
  clarifications: '(none)',
  userMemory: '',
};
const decision = { action: 'answer_directly', locale: 'en-US', directAnswer: 'Hi!', researchTopic: null, clarificationQuestion: null };

describe.skipIf(!ready)(`LLM call claims (${ready ? 'live' : missingReason()})`, () => {
  const server = new ScriptedLlmServer();
  let pool: ReturnType<typeof createPool>;
  let llm: ReturnType<typeof createLlm>;

  beforeAll(async () => {
    await server.start();
    pool = createPool(databaseUrl()!, 4);
    const config = testConfig(server.url);
    const store = createStore(pool);
    const client = createLlmClient(config);
    llm = createLlm({ config, calls: store.llmCalls, leases: store.llmLeases, client: () => client });
  });
  afterAll(async () => {
    await pool?.end();
    await server.close();
  });

  /** Attempt `attempt` of the same activity (same run id, same activity id). */
  const attemptOf = (runId: string, attempt: number): Promise<Awaited<ReturnType<typeof llm.structured<typeof PROMPTS.coordinator>>>> =>
    new MockActivityEnvironment({ activityId: 'classify', attempt, workflowExecution: { workflowId: 'w', runId } }).run(() =>
      llm.structured(PROMPTS.coordinator, vars, { researchId: runId }),
    );
  const untilAtProvider = async () => {
    while (!server.requests.some((r) => r.endedAt === undefined)) await new Promise((r) => setTimeout(r, 10));
  };

  it("makes one request for two attempts alive at once; the second gets the first one's answer", async () => {
    server.script([{ match: bySchema('CoordinatorDecision'), reply: { json: decision, delayMs: 1_500 } }]);
    const runId = `claims-${randomUUID()}`;
    const first = attemptOf(runId, 1);
    await untilAtProvider();
    const second = attemptOf(runId, 2);
    const [a, b] = await Promise.all([first, second]);
    expect(server.requests).toHaveLength(1);
    expect(a.reused).toBe(false);
    expect(b).toMatchObject({ reused: true, output: a.output, usage: a.usage });
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM llm_requests WHERE research_id = $1', [runId]);
    expect(rows[0].n).toBe(1);
  });

  it('records the answer, its request and the release of the claim in one statement, and reads the guidance with the claim', async () => {
    server.script([{ match: bySchema('CoordinatorDecision'), reply: { json: decision } }]);
    const runId = `claims-${randomUUID()}`;
    await pool.query('INSERT INTO run_guidance (research_id, seq, text) VALUES ($1, 1, $2)', [runId, 'Only count Europe.']);
    const statements: string[] = [];
    const counting = new Proxy(pool, {
      get: (target, p) =>
        p === 'query' ? (text: string, values?: unknown[]) => (statements.push(text), target.query(text, values)) : Reflect.get(target, p),
    });
    const store = createStore(counting);
    const client = createLlmClient(testConfig(server.url));
    const counted = createLlm({ config: testConfig(server.url), calls: store.llmCalls, leases: store.llmLeases, client: () => client });
    const out = await new MockActivityEnvironment({
      activityId: 'classify',
      attempt: 1,
      workflowExecution: { workflowId: 'w', runId },
    }).run(() => counted.structured(PROMPTS.coordinator, vars, { researchId: runId }));
    expect(out).toMatchObject({ reused: false, output: decision });
    // The claim (with the guidance), then the record (with the request and the release).
    expect(statements).toHaveLength(2);
    expect(server.requests.at(-1)!.body.messages[0]!.content).toContain('Only count Europe.');
    const [requests, calls, leases] = await Promise.all([
      pool.query('SELECT answer FROM llm_requests WHERE research_id = $1', [runId]),
      pool.query('SELECT response FROM llm_calls WHERE research_id = $1', [runId]),
      pool.query("SELECT count(*)::int AS n FROM llm_call_leases WHERE call_key LIKE '%' || $1 || '%'", [runId]),
    ]);
    expect(requests.rows).toHaveLength(1);
    expect(requests.rows[0].answer.message.content).toContain('answer_directly');
    expect(calls.rows).toHaveLength(1);
    expect(leases.rows[0].n).toBe(0);
  });

  it('lets the waiting attempt take over when the one holding the call fails', async () => {
    server.script([
      { match: bySchema('CoordinatorDecision'), times: 1, reply: { status: 503, delayMs: 800 } },
      { match: bySchema('CoordinatorDecision'), reply: { json: decision } },
    ]);
    const runId = `claims-${randomUUID()}`;
    const first = attemptOf(runId, 1);
    await untilAtProvider();
    const second = attemptOf(runId, 2);
    await expect(first).rejects.toThrow(/503/);
    const b = await second;
    expect(b).toMatchObject({ reused: false, output: decision });
    expect(server.requests.map((r) => r.status)).toEqual([503, 200]);
  });

  it('rebuilds an answer the killed attempt got but never recorded, without asking again', async () => {
    server.script([{ match: bySchema('CoordinatorDecision'), reply: { json: decision } }]);
    const runId = `claims-${randomUUID()}`;
    const first = await attemptOf(runId, 1);
    // The worker died after the answer was logged, before the call log took it.
    await pool.query('DELETE FROM llm_calls WHERE research_id = $1', [runId]);
    const second = await attemptOf(runId, 2);
    expect(server.requests).toHaveLength(1);
    expect(second).toMatchObject({ reused: true, output: decision, usage: first.usage });
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM llm_calls WHERE research_id = $1', [runId]);
    expect(rows[0].n).toBe(1);
  });

  it('rebuilds a repaired call from both logged answers, and asks for the repair only when it is missing', async () => {
    server.script([
      { match: bySchema('CoordinatorDecision'), times: 1, reply: { content: 'not json at all' } },
      { match: bySchema('CoordinatorDecision'), reply: { json: decision } },
    ]);
    const runId = `claims-${randomUUID()}`;
    const first = await attemptOf(runId, 1);
    expect(server.requests).toHaveLength(2);
    await pool.query('DELETE FROM llm_calls WHERE research_id = $1', [runId]);
    const second = await attemptOf(runId, 2);
    expect(server.requests).toHaveLength(2);
    expect(second).toMatchObject({ reused: true, output: decision, usage: first.usage });

    // Killed after the unusable first answer: the next attempt sends only the repair request,
    // with the first answer and the reason in it.
    server.script([
      { match: bySchema('CoordinatorDecision'), times: 1, reply: { content: 'still not json' } },
      { match: bySchema('CoordinatorDecision'), reply: { json: decision } },
    ]);
    const runId2 = `claims-${randomUUID()}`;
    await expect(attemptOf(runId2, 1)).resolves.toMatchObject({ output: decision });
    const { rows } = await pool.query('SELECT id FROM llm_requests WHERE research_id = $1 ORDER BY id', [runId2]);
    await pool.query('DELETE FROM llm_requests WHERE id = $1', [rows[1].id]);
    await pool.query('DELETE FROM llm_calls WHERE research_id = $1', [runId2]);
    const before = server.requests.length;
    const third = await attemptOf(runId2, 2);
    expect(third.output).toEqual(decision);
    const asked = server.requests.slice(before);
    expect(asked).toHaveLength(1);
    const last = asked[0]!.body.messages;
    expect(last.at(-2)).toMatchObject({ role: 'assistant', content: 'still not json' });
    expect(String(last.at(-1)?.content)).toMatch(/could not be used: the answer was not valid JSON/);
  });
});
