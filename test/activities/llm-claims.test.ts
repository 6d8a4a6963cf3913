// One attempt at a time pays: two attempts of one LLM activity alive at once (a heartbeat timeout
// while the first still waits for the provider) make one request; the second waits for the
// first's answer. When the holder fails, the waiting attempt takes the call over.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlm } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { PROMPTS } from '../../src/activities/llm/prompts';
import { createStore } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import { bySchema, ScriptedLlmServer } from '../support/llm-server';
import { testConfig } from '../support/harness';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());
const vars = {
  question: 'Hello there',
  localeHint: '',
  clarificationRule: 'Always set `clarificationQuestion` to null.',
  clarifications: '(none)',
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
});
