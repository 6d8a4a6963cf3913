// A researcher turn's round trips to PostgreSQL: the first turn reads the earlier results and the
// background in one statement, writes the task in one, and (as a first attempt) does not read the
// conversation back; a later turn writes all its tool results in one statement and their events in
// one. What the model is sent and what the conversation holds are checked alongside the counts.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlm } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { createResearcherActivities, type TurnInput, type TurnResult } from '../../src/activities/phases/researcher-turn';
import { createStore } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import type { PlanStep } from '../../src/shared/schemas';
import { ScriptedLlmServer } from '../support/llm-server';
import { testConfig } from '../support/harness';
import { databaseUrl, missingReason } from '../support/services';
import { researcherBudgets } from '../../src/activities/role-kit/tool-budget';

const ready = Boolean(databaseUrl());
const step: PlanStep = {
  id: 's2',
  title: 'Solar prices',
  description: 'Find module prices since 2010',
  type: 'research',
  needSearch: true,
  dependsOn: ['s1'],
};

describe.skipIf(!ready)(`researcher turn statements (${ready ? 'live' : missingReason()})`, () => {
  const server = new ScriptedLlmServer();
  let pool: ReturnType<typeof createPool>;
  const statements: string[] = [];

  beforeAll(async () => {
    await server.start();
    pool = createPool(databaseUrl()!, 4);
  });
  afterAll(async () => {
    await pool?.end();
    await server.close();
  });

  /** The researcher's activities on a pool that counts the statements sent through it. */
  function activities() {
    const counting = new Proxy(pool, {
      get: (target, p) =>
        p === 'query' ? (text: string, values?: unknown[]) => (statements.push(text), target.query(text, values)) : Reflect.get(target, p),
    });
    const store = createStore(counting);
    const config = testConfig(server.url);
    const client = createLlmClient(config);
    const llm = createLlm({ config, calls: store.llmCalls, leases: store.llmLeases, client: () => client });
    return createResearcherActivities({ llm, store, budgets: researcherBudgets() });
  }
  const turn = (runId: string, activityId: string, attempt: number, input: TurnInput): Promise<TurnResult> =>
    new MockActivityEnvironment({ activityId, attempt, workflowExecution: { workflowId: 'w', runId } }).run(() =>
      activities().researcherTurn(input),
    );
  const conversation = async (researchId: string) =>
    (
      await pool.query<{ seq: number; message: { role: string; content: string } }>(
        'SELECT seq, message FROM conversation_messages WHERE research_id = $1 ORDER BY seq',
        [researchId],
      )
    ).rows;

  it('asks with the task after three statements, answers with one more each for the record and the message', async () => {
    const researchId = `turn-${randomUUID()}`;
    const store = createStore(pool);
    await store.saveDocument(researchId, { key: 's1/1', kind: 'step', content: 'EARLIER-RESULT', summary: '', sourceIds: [], meta: {} });
    await store.saveDocument(researchId, {
      key: 'background',
      kind: 'background',
      content: 'BACKGROUND-BRIEF',
      summary: '',
      sourceIds: [],
      meta: {},
    });
    server.script([{ reply: { toolCalls: [{ name: 'web_search', arguments: { queries: ['solar module price'] } }] } }]);
    const input: TurnInput = {
      researchId,
      convKey: 's2/1',
      seq: 0,
      question: 'How cheap is solar?',
      locale: 'en-US',
      step,
      feedback: '',
      dependencyKeys: ['s1/1'],
      mustAnswer: false,
    };
    statements.length = 0;
    const out = await turn(researchId, 'turn-1', 1, input);
    // documents, the task, the claim (with guidance), the record, the assistant's message.
    expect(statements).toHaveLength(5);
    expect(out.nextSeq).toBe(3);
    expect(out.calls).toEqual([expect.objectContaining({ name: 'web_search' })]);
    const sent = server.requests[0]!.body.messages as { role: string; content: string }[];
    expect(sent.map((m) => m.role)).toEqual(['system', 'user']);
    expect(sent.map((m) => m.content).join('\n')).toContain('EARLIER-RESULT');
    expect(sent.map((m) => m.content).join('\n')).toContain('BACKGROUND-BRIEF');
    const rows = await conversation(researchId);
    expect(rows.map((r) => [r.seq, r.message.role])).toEqual([
      [0, 'system'],
      [1, 'user'],
      [2, 'assistant'],
    ]);
    expect(rows[0]!.message.content).toBe(sent[0]!.content);

    // A retry of that turn finds the stored answer: it reads the conversation and asks nobody.
    statements.length = 0;
    const again = await turn(researchId, 'turn-1', 2, input);
    expect(server.requests).toHaveLength(1);
    expect(again.calls).toEqual(out.calls);
    expect(statements.some((s) => /SELECT seq, message FROM conversation_messages/.test(s))).toBe(true);

    // The next turn writes both tool results in one statement and their events in one.
    await store.saveSources(researchId, [
      { sourceId: 'S00000001', url: 'https://example.org/a', title: 'Prices A', content: 'MODULES-FELL', provider: 'searxng' },
    ]);
    server.script([{ reply: { content: 'Prices fell [S00000001].' } }]);
    statements.length = 0;
    const second = await turn(researchId, 'turn-2', 1, {
      ...input,
      seq: 5,
      toolResults: [
        { researchId, convKey: 's2/1', seq: 3, toolCallId: 'call_a', search: [{ query: 'solar module price', sourceIds: ['S00000001'] }] },
        {
          researchId,
          convKey: 's2/1',
          seq: 4,
          toolCallId: 'call_b',
          crawl: [{ url: 'https://example.org/b', status: 'failed', reason: 'HTTP 500' }],
        },
      ],
    });
    // sources, tool results, events, the conversation, the claim, the record, the answer.
    expect(statements).toHaveLength(7);
    expect(second.calls).toEqual([]);
    expect(second.nextSeq).toBe(6);
    const after = await conversation(researchId);
    expect(after.map((r) => [r.seq, r.message.role])).toEqual([
      [0, 'system'],
      [1, 'user'],
      [2, 'assistant'],
      [3, 'tool'],
      [4, 'tool'],
      [5, 'assistant'],
    ]);
    expect(after[3]!.message.content).toContain('[S00000001] Prices A');
    expect(after[3]!.message.content).toContain('MODULES-FELL');
    expect(after[4]!.message.content).toContain('https://example.org/b: failed (HTTP 500)');
    const lastSent = server.requests.at(-1)!.body.messages as { role: string }[];
    expect(lastSent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    const { rows: events } = await pool.query('SELECT type FROM run_events WHERE research_id = $1 ORDER BY seq', [researchId]);
    expect(events.map((e) => e.type)).toEqual(['search', 'crawl']);
  });

  it('keeps the first message written at a position and returns it', async () => {
    const researchId = `turn-${randomUUID()}`;
    const { conversations } = createStore(pool);
    const first = await conversations.putFirst(researchId, 'c', 2, { role: 'assistant', content: 'first' });
    const second = await conversations.putFirst(researchId, 'c', 2, { role: 'assistant', content: 'second' });
    expect(first).toEqual({ role: 'assistant', content: 'first' });
    expect(second).toEqual({ role: 'assistant', content: 'first' });
  });
});
