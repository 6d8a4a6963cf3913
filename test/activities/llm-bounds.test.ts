// Every model call is bounded and adapts to what the server says: an output limit on every
// request, "too slow" told from "down", a context overflow answered by trimming, a server that
// refuses tools asked with JSON actions, tool calls written as text taken as tool calls, two
// repairs that quote a clipped answer, and room to finish a cut-off one.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type OpenAI from 'openai';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlm, type ModelRequest } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { createStore } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import { ErrorType } from '../../src/shared/errors';
import { hasTools, ScriptedLlmServer, type ChatRequest } from '../support/llm-server';
import { testConfig } from '../support/harness';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());

const TOOLS: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'web_search',
      description: 'Search the web',
      parameters: { type: 'object', properties: { queries: { type: 'array', items: { type: 'string' } } }, required: ['queries'] },
    },
  },
];

type Turn = { content: string | null; calls: { name: string; arguments: string }[] };

describe.skipIf(!ready)(`bounded model calls (${ready ? 'live' : missingReason()})`, () => {
  const server = new ScriptedLlmServer();
  let pool: ReturnType<typeof createPool>;
  beforeAll(async () => {
    await server.start();
    pool = createPool(databaseUrl()!, 4);
  });
  afterAll(async () => {
    await pool?.end();
    await server.close();
  });

  function llmFor(env: Record<string, string> = {}, url = server.url) {
    const store = createStore(pool);
    const config = testConfig(url, env);
    const client = createLlmClient(config);
    return createLlm({ config, calls: store.llmCalls, leases: store.llmLeases, client: () => client });
  }
  const run = <T>(fn: () => Promise<T>, startToCloseTimeoutMs = 300_000) =>
    new MockActivityEnvironment({
      activityId: randomUUID(),
      attempt: 1,
      startToCloseTimeoutMs,
      currentAttemptScheduledTimestampMs: Date.now(),
      workflowExecution: { workflowId: 'w', runId: randomUUID() },
    }).run(fn) as Promise<T>;

  function turn(messages: ModelRequest<Turn>['messages'], tools = TOOLS): ModelRequest<Turn> {
    return {
      researchId: `r-${randomUUID()}`,
      role: 'researcher',
      promptName: 'researcher-react',
      messages,
      tools,
      expected: 'researcher turn',
      reuse: () => undefined,
      read: (choice) => {
        const calls = (choice?.message.tool_calls ?? []).flatMap((t) => (t.type === 'function' ? [t.function] : []));
        if (!calls.length && !choice?.message.content) return { problem: 'empty', repair: [{ role: 'user', content: 'again' }] };
        const value = { content: choice?.message.content ?? null, calls };
        return { value, logged: value };
      },
    };
  }
  const chats = (from: number) => server.requests.slice(from).map((r) => r.body as ChatRequest);

  it('sends every role its output limit', async () => {
    server.script([{ reply: { content: 'Findings: none yet.' } }]);
    const from = server.requests.length;
    const llm = llmFor({ LLM_MAX_TOKENS_RESEARCHER: '333' });
    await run(() => llm.complete(turn([{ role: 'user', content: 'go' }])));
    expect(chats(from).map((b) => b.max_tokens)).toEqual([333]);
  });

  it('a timeout while the server answers is "too slow": asked once more with half the limit, then LlmTooSlow', async () => {
    server.script([{ reply: { hang: true } }]);
    const from = server.requests.length;
    const llm = llmFor({ LLM_TIMEOUT_MS: '1000', LLM_MAX_TOKENS_RESEARCHER: '800' });
    const err = await run(() => llm.complete(turn([{ role: 'user', content: 'go' }]))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe(ErrorType.LlmTooSlow);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((err as Error).message).toMatch(/too slow.*LLM_TIMEOUT_MS_RESEARCHER/);
    expect(chats(from).map((b) => b.max_tokens)).toEqual([800, 400]);
  });

  it('a timeout while the server does not answer at all stays transient (an outage)', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const llm = llmFor({ LLM_TIMEOUT_MS: '1000' }, `http://127.0.0.1:${port}/v1`);
      const err = await run(() => llm.complete(turn([{ role: 'user', content: 'go' }]))).catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(ApplicationFailure);
      expect((err as Error).name).toBe('LlmTimeout');
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  }, 30_000);

  it("llama.cpp's overflow error is answered by trimming to the window it states", async () => {
    server.script([
      {
        times: 1,
        reply: {
          status: 400,
          error: {
            message: 'request (9000 tokens) exceeds the available context size (2048 tokens), try increasing it',
            type: 'exceed_context_size_error',
          },
        },
      },
      { reply: { content: 'Findings from a trimmed page.' } },
    ]);
    const from = server.requests.length;
    const llm = llmFor();
    const page = 'Solar module prices fell steadily. '.repeat(900);
    const out = await run(() =>
      llm.complete(
        turn([
          { role: 'system', content: 'You research.' },
          { role: 'user', content: `Read this page:\n${page}\nNow answer.` },
        ]),
      ),
    );
    expect(out.output.content).toBe('Findings from a trimmed page.');
    const [first, second] = chats(from);
    const size = (b: ChatRequest) => b.messages.reduce((n, m) => n + String(m.content ?? '').length, 0);
    expect(size(second!)).toBeLessThan(2048 * 3.2);
    expect(size(second!)).toBeLessThan(size(first!) / 3);
    // The task's head and its closing instruction both survive the cut.
    const user = String(second!.messages[1]!.content);
    expect(user.startsWith('Read this page:')).toBe(true);
    expect(user.endsWith('Now answer.')).toBe(true);
    expect(user).toContain('trimmed to fit');
    expect(second!.max_tokens as number).toBeLessThanOrEqual(2048);
  });

  it('a server that refuses tools (no --jinja) is asked with JSON actions from then on', async () => {
    server.script([
      { match: hasTools, reply: { status: 500, error: { message: 'tools param requires --jinja flag', type: 'server_error' } } },
      { reply: { content: '```json\n{"tool_calls": [{"name": "web_search", "arguments": {"queries": ["solar LCOE 2010"]}}]}\n```' } },
    ]);
    const from = server.requests.length;
    const llm = llmFor();
    const first = await run(() =>
      llm.complete(
        turn([
          { role: 'system', content: 'You research.' },
          { role: 'user', content: 'go' },
        ]),
      ),
    );
    expect(first.output.calls).toEqual([{ name: 'web_search', arguments: JSON.stringify({ queries: ['solar LCOE 2010'] }) }]);
    const sent = chats(from);
    expect(sent.map((b) => Boolean(b.tools?.length))).toEqual([true, false]);
    expect(String(sent[1]!.messages[0]!.content)).toMatch(/You can call these tools:[\s\S]*web_search[\s\S]*"tool_calls"/);
    // The next turn goes straight to JSON actions, with the earlier call and its result as text.
    server.script([{ reply: { content: 'Solar fell 89% [S1234abcd].' } }]);
    const from2 = server.requests.length;
    const second = await run(() =>
      llm.complete(
        turn([
          { role: 'system', content: 'You research.' },
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'web_search', arguments: '{"queries":["solar"]}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: '[S1234abcd] Solar costs: fell 89%' },
        ]),
      ),
    );
    expect(second.output.content).toBe('Solar fell 89% [S1234abcd].');
    const next = chats(from2);
    expect(next).toHaveLength(1);
    expect(next[0]!.tools).toBeUndefined();
    expect(next[0]!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(String(next[0]!.messages[3]!.content)).toContain('<tool_result name="web_search">');
  });

  it('a tool call written as text is a tool call, never findings', async () => {
    server.script([
      { reply: { content: '<tool_call>\n{"name": "web_search", "arguments": {"queries": ["battery pack price 2023"]}}\n</tool_call>' } },
    ]);
    const llm = llmFor();
    const out = await run(() => llm.complete(turn([{ role: 'user', content: 'go' }])));
    expect(out.output.content).toBeNull();
    expect(out.output.calls.map((c) => c.name)).toEqual(['web_search']);
    // A name that is not offered, without arguments, stays text.
    server.script([{ reply: { content: '{"name": "delete_everything"}' } }]);
    const other = await run(() => llm.complete(turn([{ role: 'user', content: 'go' }])));
    expect(other.output.calls).toEqual([]);
  });

  it('repairs twice, quoting the problem and only the start of the bad answer, then gives up as LlmInvalidOutput', async () => {
    const long = `not json ${'x'.repeat(5000)}`;
    server.script([{ reply: { content: long } }]);
    const from = server.requests.length;
    const llm = llmFor();
    const read = (choice: OpenAI.Chat.ChatCompletion.Choice | undefined) => {
      const content = choice?.message.content ?? '';
      return content.startsWith('{')
        ? { value: content, logged: content }
        : {
            problem: 'the answer was not JSON',
            repair: [
              { role: 'assistant' as const, content },
              { role: 'user' as const, content: 'JSON please' },
            ],
          };
    };
    const err = await run(() =>
      llm.complete({
        researchId: `r-${randomUUID()}`,
        role: 'planner',
        promptName: 'planner',
        messages: [{ role: 'user', content: 'plan' }],
        expected: 'Plan',
        reuse: () => undefined,
        read,
      }),
    ).catch((e: unknown) => e);
    expect((err as ApplicationFailure).type).toBe(ErrorType.LlmInvalidOutput);
    expect((err as Error).message).toMatch(/after 2 repair requests: the answer was not JSON/);
    const sent = chats(from);
    expect(sent).toHaveLength(3);
    const quoted = sent[2]!.messages.filter((m) => m.role === 'assistant').map((m) => String(m.content));
    expect(quoted).toHaveLength(2);
    for (const q of quoted) expect(q.length).toBeLessThan(700);
  });

  it('a cut-off answer is repaired with room to finish', async () => {
    server.script([{ times: 1, reply: { content: '{"title": "Sol', finishReason: 'length' } }, { reply: { json: { title: 'Solar' } } }]);
    const from = server.requests.length;
    const llm = llmFor({ LLM_MAX_TOKENS_PLANNER: '300' });
    const out = await run(() =>
      llm.complete({
        researchId: `r-${randomUUID()}`,
        role: 'planner',
        promptName: 'planner',
        messages: [{ role: 'user', content: 'plan' }],
        expected: 'Plan',
        reuse: () => undefined,
        read: (choice) =>
          choice?.finish_reason === 'length'
            ? {
                problem: 'cut off',
                repair: [
                  { role: 'assistant', content: choice.message.content ?? '' },
                  { role: 'user', content: 'again, briefer' },
                ],
              }
            : { value: choice?.message.content ?? '', logged: null },
      }),
    );
    expect(JSON.parse(String(out.output))).toEqual({ title: 'Solar' });
    expect(chats(from).map((b) => b.max_tokens)).toEqual([300, 600]);
    // The cut-off start is not quoted back: the model would copy it and run on again.
    expect(chats(from)[1]!.messages.map((m) => m.role)).toEqual(['user', 'user']);
  });
});
