// The OpenAI-compatible endpoint through the official `openai` client, against a worker and the API
// on the suite's Temporal and PostgreSQL with a scripted LLM: models, a streamed run whose report
// cites pages of the fixture site, a follow-up in the same session that sees the first report, a
// non-streaming request past its wait, a plan left for review, and another tenant that cannot
// continue the first one's session.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { createStore } from '../../src/activities/store';
import { normalize } from '../../src/shared/memory';
import { bySchema, type Reply } from '../support/llm-server';
import { planJson, researchRules, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { listen, type RunningServer } from '../support/http';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const ALPHA = 'chat-alpha-key-0123456789';
const BETA = 'chat-beta-key-0123456789';

interface RunRef {
  runId: string;
  sessionId: string;
  status: string;
}
type Delta = { content?: string; reasoning_content?: string };

/** The first run's report: long enough to reach the client in many pieces. */
const LONG_REPORT =
  '## Key points\n\n- Costs fell sharply [1].\n- Batteries too [2].\n' +
  Array.from({ length: 10 }, (_, i) => `- Module prices fell again in ${2012 + i}, by a measured share [1].`).join('\n');

describe.skipIf(!ready)(`OpenAI-compatible endpoint (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let api: RunningServer;
  let alpha: OpenAI;
  let beta: OpenAI;
  const first = { question: 'How far did solar costs fall?', content: '', runId: '', sessionId: '' };

  beforeAll(async () => {
    h = await startHarness({ env: { API_KEYS: `${ALPHA}=alpha,${BETA}=beta`, CHAT_COMPLETION_WAIT: '2s' } });
    // The first report is held three times mid-stream until the chat client has read more of it.
    const reporter = (_req: unknown, n: number): Reply =>
      n === 0
        ? {
            json: { title: 'Solar costs', markdown: LONG_REPORT },
            beforeChunk: (c) => (c % 12 === 0 && c > 0 && c <= 36 ? contentSeen(c / 12) : undefined),
          }
        : { json: { title: 'Solar costs', markdown: '## Key points\n\n- Costs fell sharply [1].\n- Batteries too [2].' } };
    h.llm.script(researchRules({ reporter }, planJson([{ id: 'a' }])));
    api = await listen(h.app);
    alpha = new OpenAI({ apiKey: ALPHA, baseURL: `${api.url}/v1`, maxRetries: 0 });
    beta = new OpenAI({ apiKey: BETA, baseURL: `${api.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await api?.close();
    await h?.close();
  });

  const get = async (path: string, key = ALPHA) => {
    const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  /** When each streamed chunk with content arrived, over all streams of the file. */
  const contentTimes: number[] = [];
  /** Resolves once `n` chunks with content have arrived (or after 20 s, and the test's checks fail). */
  async function contentSeen(n: number): Promise<void> {
    const end = Date.now() + 20_000;
    while (contentTimes.length < n && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  }

  async function streamed(client: OpenAI, body: Omit<ChatCompletionCreateParamsStreaming, 'stream'> & { deep_research?: unknown }) {
    const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
    let content = '';
    let reasoning = '';
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) {
      chunks.push(c);
      const d = (c.choices[0]?.delta ?? {}) as Delta;
      if (d.content) contentTimes.push(Date.now());
      content += d.content ?? '';
      reasoning += d.reasoning_content ?? '';
    }
    const ref = (chunks[0] as unknown as { deep_research: RunRef }).deep_research;
    return { content, reasoning, chunks, ref };
  }

  it('lists the models and refuses an unknown one in OpenAI’s error shape', async () => {
    const models = await alpha.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['deep-research', 'deep-research-quick', 'deep-research-deep']);
    expect((await alpha.models.retrieve('deep-research-quick')).owned_by).toBe('deep-research');
    const err = await alpha.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.code).toBe('model_not_found');
    expect(err.type).toBe('invalid_request_error');
    expect(err.param).toBe('model');
    const bad = await alpha.chat.completions
      .create({ model: 'deep-research', messages: [{ role: 'user', content: 'q' }], deep_research: { maxSteps: 0 } } as never)
      .catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.param).toBe('deep_research.maxSteps');
    // A completion counts as a submit (RATE_LIMIT_SUBMITS), the model list as a read.
    const post = await fetch(`${api.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALPHA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'nope', messages: [] }),
    });
    expect(post.status).toBe(400);
    expect(post.headers.get('ratelimit-limit')).toBe(String(h.config.api.rateLimits.submits));
    expect((await get('/v1/models')).status).toBe(200);
    const list = await fetch(`${api.url}/v1/models`, { headers: { authorization: `Bearer ${ALPHA}` } });
    expect(list.headers.get('ratelimit-limit')).toBe(String(h.config.api.rateLimits.reads));
    const unauthenticated = new OpenAI({ apiKey: 'not-a-key-0123456789', baseURL: `${api.url}/v1`, maxRetries: 0 });
    await expect(unauthenticated.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    // The chat route's larger body limit goes wherever the router sends the request, whatever the
    // path's letter case or trailing slash: a 100 KB conversation is read (and its model refused).
    const big = JSON.stringify({ model: 'nope', messages: [{ role: 'user', content: 'x'.repeat(100_000) }] });
    for (const path of ['/v1/chat/completions', '/v1/Chat/Completions', '/V1/CHAT/COMPLETIONS/']) {
      const res = await fetch(`${api.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALPHA}`, 'content-type': 'application/json' },
        body: big,
      });
      expect([path, res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([path, 404, 'model_not_found']);
    }
  });

  it('streams a run: progress as reasoning, then the report whose references are sources the run read', async () => {
    const s = await streamed(alpha, { model: 'deep-research-quick', messages: [{ role: 'user', content: first.question }] });
    Object.assign(first, { content: s.content, runId: s.ref.runId, sessionId: s.ref.sessionId });
    // The report's text arrived in pieces while the model was still writing it: at least three
    // chunks with content before the scripted model sent its last chunk.
    const reporterCall = h.llm.requests.find((r) => r.rule === 'reporter')!;
    expect(reporterCall.body.stream).toBe(true);
    const lastSent = reporterCall.chunkTimes!.at(-1)!;
    expect(contentTimes.filter((t) => t >= reporterCall.startedAt && t < lastSent).length).toBeGreaterThanOrEqual(3);
    expect(s.content).toMatch(/^\*Draft, as the model writes it/);
    expect(s.content).toContain('Module prices fell again in 2021, by a measured share [1].');
    // …then the checked report, with its references.
    expect(s.ref.sessionId).toMatch(/^session-[0-9a-f]{16}$/);
    expect(s.chunks.every((c) => c.id === `chatcmpl-${first.runId}` && c.object === 'chat.completion.chunk')).toBe(true);
    expect(s.reasoning).toMatch(/Research started: How far did solar costs fall\?/);
    expect(s.reasoning).toMatch(/Plan \(version 1\)/);
    expect(s.reasoning).toMatch(/Searched: /);
    expect(s.reasoning).toMatch(/Report written: Solar costs/);
    const finish = s.chunks.filter((c) => c.choices[0]?.finish_reason === 'stop');
    expect(finish).toHaveLength(1);
    const usage = s.chunks.at(-1)!;
    expect(usage.choices).toEqual([]);
    expect(usage.usage!.prompt_tokens).toBeGreaterThan(0);

    // The report's references are the run's own sources: pages of the fixture site.
    const report = await get(`/v1/research/${first.runId}/report?format=json`);
    const refs = report.body.references as { n: number; url: string }[];
    expect(refs.length).toBeGreaterThan(0);
    for (const r of refs) {
      expect(r.url.startsWith(h.site.url)).toBe(true);
      expect(s.content).toContain(r.url);
    }
    expect(s.content).toContain('Costs fell sharply [1]');
    expect(s.content).toMatch(/## References/);
    expect(s.content).toContain(`Deep research run \`${first.runId}\``);
    // The quick preset and the auto-approved plan reached the run.
    const view = await get(`/v1/research/${first.runId}`);
    expect(view.body.status).toBe('completed');
    const history = await h.client.workflow.getHandle(first.runId).fetchHistory();
    const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    const input = JSON.parse(Buffer.from(payload.data!).toString('utf8')) as { options: Record<string, unknown>; sessionId: string };
    expect(input.options).toMatchObject({ effort: 'quick', maxSteps: 2, queryCount: 2, autoAcceptPlan: true });
    expect(input.sessionId).toBe(first.sessionId);
  });

  it('continues the session with the conversation so far: the follow-up sees the first report', async () => {
    const rewrites = h.llm.requests.filter((r) => r.rule === 'rewrite').length;
    const s = await streamed(alpha, {
      model: 'deep-research',
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: first.question },
        { role: 'assistant', content: first.content },
        { role: 'user', content: 'And how did battery prices change?' },
      ],
    });
    expect(s.ref.sessionId).toBe(first.sessionId);
    expect(s.ref.runId).not.toBe(first.runId);
    expect(s.content).toMatch(/## References/);
    // The run was asked the last message alone, in the first run's session.
    const view = await get(`/v1/research/${s.ref.runId}`);
    expect(view.body.question).toBe('And how did battery prices change?');
    const session = await get(`/v1/sessions/${first.sessionId}`);
    expect((session.body.runs as { id: string }[]).map((r) => r.id)).toEqual([first.runId, s.ref.runId]);
    // Its query rewrite saw the earlier question and report as session memory.
    const rewrite = h.llm.requests.filter((r) => r.rule === 'rewrite')[rewrites]!;
    expect(userText(rewrite.body)).toMatch(/<session_memory>[\s\S]*How far did solar costs fall\?[\s\S]*Solar costs/);
  });

  it('does not let another tenant continue the session: its run starts a session of its own, the conversation as context, learning from the last user message only', async () => {
    // The memory step proposes a fact quoted from each turn; only the last user message is what the
    // user said in this request (earlier turns are whatever the client sends, an assistant's among them).
    const answerWords = first.content
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim()
      .split(' ')
      .slice(0, 6)
      .join(' ');
    h.llm.script(
      researchRules(
        {
          memory: {
            json: {
              facts: [
                { category: 'other', text: 'The user asked how far solar costs fell.', quotes: ['How far did solar costs fall'] },
                { category: 'other', text: `The user wrote ${answerWords}.`, quotes: [answerWords] },
                { category: 'other', text: 'The user asks about wind.', quotes: ['What about wind'] },
              ],
            },
          },
        },
        planJson([{ id: 'a' }]),
      ),
    );
    const asked = h.llm.requests.length;
    const s = await streamed(beta, {
      model: 'deep-research-quick',
      messages: [
        { role: 'user', content: first.question },
        { role: 'assistant', content: first.content },
        { role: 'user', content: 'What about wind?' },
      ],
    });
    expect(s.ref.sessionId).not.toBe(first.sessionId);
    const view = await get(`/v1/research/${s.ref.runId}`, BETA);
    expect(view.body.question).toMatch(/^What about wind\?\n\n\(Earlier in this conversation:\nUser: How far did solar costs fall\?/);
    // Both earlier turns' quotes are in the run's question: the words learned from are what keeps them out.
    for (const quote of ['How far did solar costs fall', answerWords])
      expect(normalize(view.body.question as string)).toContain(normalize(quote));
    const learning = h.llm.requests.slice(asked).filter((r) => r.rule === 'memory');
    expect(learning).toHaveLength(1);
    expect(userText(learning[0]!.body)).toContain('[question] What about wind?');
    expect(userText(learning[0]!.body)).not.toMatch(/solar|Earlier in this conversation/i);
    const memory = await get('/v1/memory', BETA);
    expect((memory.body.facts as { text: string }[]).map((f) => f.text)).toEqual(['The user asks about wind.']);
    await createStore(h.pool).memory.purge('beta');
    // The first tenant's session is as it was, and the other tenant cannot read it.
    const session = await get(`/v1/sessions/${first.sessionId}`);
    expect((session.body.runs as unknown[]).length).toBe(2);
    expect((await get(`/v1/sessions/${first.sessionId}`, BETA)).status).toBe(404);
  });

  it('answers a non-streaming request past CHAT_COMPLETION_WAIT with the run id and where to fetch the report', async () => {
    h.llm.script([
      { match: bySchema('CoordinatorDecision'), reply: { delayMs: 8_000, json: { action: 'research', locale: 'en-US' } } },
      ...researchRules({}, planJson([{ id: 'a' }])),
    ]);
    const started = Date.now();
    const answer = await alpha.chat.completions.create({
      model: 'deep-research',
      messages: [{ role: 'user', content: 'A slow question?' }],
    });
    expect(Date.now() - started).toBeLessThan(7_000);
    const ref = (answer as unknown as { deep_research: RunRef }).deep_research;
    expect(answer.object).toBe('chat.completion');
    expect(answer.id).toBe(`chatcmpl-${ref.runId}`);
    expect(answer.system_fingerprint).toBe(ref.runId);
    expect(ref.status).toBe('running');
    const text = answer.choices[0]!.message.content!;
    expect(text).toMatch(/still running/);
    expect(text).toContain(`${api.url}/v1/research/${ref.runId}/report`);
    expect(text).toContain(`${api.url}/v1/research/${ref.runId}/events`);
    expect(answer.choices[0]!.finish_reason).toBe('stop');
    await h.client.workflow.getHandle(ref.runId).cancel();
  });

  it('leaves the plan for review when deep_research.autoAcceptPlan is false', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    const s = await streamed(alpha, {
      model: 'deep-research',
      messages: [{ role: 'user', content: 'Review this plan first?' }],
      deep_research: { autoAcceptPlan: false },
    });
    expect(s.content).toMatch(/The plan awaits your review \(version 1\)/);
    expect(s.content).toContain(`${api.url}/v1/research/${s.ref.runId}/plan/approve`);
    expect((await get(`/v1/research/${s.ref.runId}`)).body.status).toBe('awaiting_review');
    await h.client.workflow.getHandle(s.ref.runId).cancel();
  });
});
