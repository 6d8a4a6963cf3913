// The load bench's prefix-reuse share: how much of each prompt a provider's prefix cache could
// reuse from earlier requests of the same conversation (or run, or load).
import { describe, expect, it } from 'vitest';
import {
  commonPrefix,
  conversationKey,
  conversationsOf,
  firstRequestShare,
  prefixReuse,
  renderPrompt,
  reuseShare,
  worstDivergence,
  type PromptRequest,
} from '../../bench/support/prompt-reuse';
import { modelCallFigures, requestRuns, tokenTable } from '../../bench/support/model-calls';
import type { LoggedRequest } from '../support/llm-server';

const system = { role: 'system', content: 'You are a researcher. Use the tools.' };
const task = { role: 'user', content: 'Step: find the 2022 solar cost.' };
const tools = [{ type: 'function', function: { name: 'web_search' } }];

describe('prompt prefix reuse', () => {
  it('renders the tools first, then each message with its tool calls and tool call id', () => {
    const prompt = renderPrompt({
      tools,
      messages: [
        system,
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1' }] },
        { role: 'tool', content: 'result', tool_call_id: 'c1' },
      ],
    });
    expect(prompt.startsWith(JSON.stringify(tools))).toBe(true);
    expect(prompt.indexOf(system.content)).toBeLessThan(prompt.indexOf('[{"id":"c1"}]'));
    expect(prompt.indexOf('[{"id":"c1"}]')).toBeLessThan(prompt.indexOf('result'));
    expect(prompt.endsWith('result\nc1')).toBe(true);
  });

  it('reuses all of an identical prompt sent again', () => {
    const req: PromptRequest = { tools, messages: [system, task] };
    const [first, second] = prefixReuse([req, req]);
    expect(first!.reusable).toBe(0);
    expect(second!.reusable).toBe(renderPrompt(req).length);
    expect(reuseShare([first!, second!])).toBeCloseTo(0.5, 5);
  });

  it('reuses almost nothing when the prompts differ at the front', () => {
    // The same conversation (system and task), but a per-call line before them in the tools' place.
    const long = { role: 'system', content: 'You are a researcher. Use the tools, cite what you read. '.repeat(10) };
    const a = { tools: [{ note: 'call 1 at 10:00:01' }], messages: [long, task] };
    const b = { tools: [{ note: 'call 2 at 10:00:07' }], messages: [long, task, { role: 'assistant', content: 'more' }] };
    const reuse = prefixReuse([a, b]);
    expect(reuse[1]!.conversation).toBe(reuse[0]!.conversation);
    expect(reuse[1]!.reusable).toBe(commonPrefix(renderPrompt(a), renderPrompt(b)));
    expect(reuse[1]!.reusable).toBeLessThan(20);
    expect(reuseShare(reuse)).toBeLessThan(0.05);
  });

  it('reuses most of a conversation that grows at the end', () => {
    const messages: PromptRequest['messages'] = [system, task];
    const requests: PromptRequest[] = [];
    for (let turn = 0; turn < 6; turn++) {
      requests.push({ tools, messages: [...messages] });
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${turn}`, name: 'web_search' }] });
      messages.push({ role: 'tool', content: `Result ${turn}: ${'solar costs fell. '.repeat(20)}`, tool_call_id: `c${turn}` });
    }
    const reuse = prefixReuse(requests);
    // Each request reuses the whole of the one before it.
    for (let i = 1; i < reuse.length; i++) {
      expect(reuse[i]!.reusable).toBe(renderPrompt(requests[i - 1]!).length);
      expect(reuse[i]!.predecessor).toEqual({ index: i - 1, divergesAt: renderPrompt(requests[i - 1]!).length });
    }
    expect(reuseShare(reuse)).toBeGreaterThan(0.6);
  });

  it('finds the longest prefix with any earlier request, not only the last one', () => {
    const base = [system, task];
    const a = { messages: [...base, { role: 'user', content: 'branch A, a long way down the same road' }] };
    const b = { messages: [...base, { role: 'user', content: 'something else entirely' }] };
    const c = { messages: [...base, { role: 'user', content: 'branch A, a long way down another road' }] };
    const reuse = prefixReuse([a, b, c]);
    expect(reuse[2]!.reusable).toBe(commonPrefix(renderPrompt(a), renderPrompt(c)));
    expect(reuse[2]!.reusable).toBeGreaterThan(commonPrefix(renderPrompt(b), renderPrompt(c)));
    expect(reuse[2]!.predecessor!.index).toBe(1);
  });

  it('does not compare requests of different conversations', () => {
    const a = { tools, messages: [system, task] };
    const b = { tools, messages: [system, { role: 'user', content: 'Step: find the 2023 battery price.' }] };
    expect(conversationKey(a)).not.toBe(conversationKey(b));
    const reuse = prefixReuse([a, b]);
    // b shares the tools and the system prompt with a, but starts a conversation of its own.
    expect(reuse[1]!.reusable).toBe(0);
    expect(reuse[1]!.predecessor).toBeUndefined();
    expect(reuseShare(reuse)).toBe(0);
  });

  it('picks the conversations a role takes part in, and the worst divergence among them', () => {
    const other = { messages: [{ role: 'system', content: 'judge' }, task] };
    const grown = { tools, messages: [system, task, { role: 'tool', content: 'found it', tool_call_id: 'c1' }] };
    const reordered = {
      tools,
      messages: [system, task, { role: 'user', content: 'Time now: 10:01' }, { role: 'tool', content: 'found it' }],
    };
    const requests = [{ tools, messages: [system, task] }, other, grown, reordered];
    const reuse = prefixReuse(requests);
    const researcher = conversationsOf(reuse, (i) => i === 0);
    expect(researcher.map((r) => r.index)).toEqual([0, 2, 3]);
    const worst = worstDivergence(researcher, (i) => renderPrompt(requests[i]!));
    expect(worst?.index).toBe(3);
    expect(worst?.after.startsWith('user|> Time now')).toBe(true);
    expect(worst?.before.startsWith('tool|> found it')).toBe(true);
    expect(worst?.context.endsWith('<|')).toBe(true);
    // A conversation of one request, or one where each request extends the one before: nothing parts.
    const alone = conversationsOf(reuse, (i) => i === 1);
    expect(worstDivergence(alone, (i) => renderPrompt(requests[i]!))).toBeUndefined();
    const pair = [requests[0]!, grown];
    const extending = prefixReuse(pair);
    expect(worstDivergence(extending, (i) => renderPrompt(pair[i]!))).toBeUndefined();
  });

  it('compares every request of a run with every earlier one when grouped by run, and tells runs apart by when they ran', () => {
    const a = { tools, messages: [system, task] };
    const b = { tools, messages: [system, { role: 'user', content: 'Step: find the 2023 battery price.' }] };
    const c = { tools, messages: [system, task] };
    const at = (startedAt: number, body: PromptRequest) =>
      ({ seq: 0, rule: undefined, authorization: undefined, startedAt, body }) as LoggedRequest;
    const log = [at(100, a), at(150, b), at(300, c)];
    // Two runs one after the other: a and b are the first run's, c the second's.
    const runs = requestRuns(log, [
      { start: 90, end: 200 },
      { start: 250, end: 400 },
    ])!;
    expect(runs).toEqual(['0', '0', '1']);
    const byRun = prefixReuse(
      log.map((r) => r.body),
      (_r, i) => runs[i]!,
    );
    // b shares the tools and the system prompt with a, in the same run; c starts the second run.
    expect(byRun[1]!.reusable).toBe(commonPrefix(renderPrompt(a), renderPrompt(b)));
    expect(byRun[1]!.reusable).toBeGreaterThan(JSON.stringify(tools).length + system.content.length);
    expect(byRun[2]!.reusable).toBe(0);
    // As one group (a provider caching across runs), c reuses all of a.
    expect(
      prefixReuse(
        log.map((r) => r.body),
        () => 'load',
      )[2]!.reusable,
    ).toBe(renderPrompt(c).length);
    // Runs that overlap in time cannot be told apart by it.
    expect(
      requestRuns(log, [
        { start: 90, end: 300 },
        { start: 250, end: 400 },
      ]),
    ).toBeUndefined();
  });

  it("gives each role's share of reusable prompt text within its run, and prints it in the token table", () => {
    const judge = { tools, messages: [system, task] };
    const extractor = { tools, messages: [system, { role: 'user', content: 'Page: a page about batteries.' }] };
    const answered = (rule: string, startedAt: number, body: PromptRequest) =>
      ({ seq: 0, rule, authorization: undefined, startedAt, endedAt: startedAt + 5, status: 200, body }) as unknown as LoggedRequest;
    const log = [answered('judge', 100, judge), answered('extractor', 110, extractor), answered('judge', 120, judge)];
    const figures = modelCallFigures(log, 1, 100, [{ start: 90, end: 200 }]);
    // The second judge call reuses all of the first; the extractor the tools and system prompt it shares with it.
    expect(figures.byRole.judge!.reuse).toBeCloseTo(0.5, 5);
    const shared = commonPrefix(renderPrompt(judge), renderPrompt(extractor));
    expect(figures.byRole.extractor!.reuse).toBeCloseTo(shared / renderPrompt(extractor).length, 5);
    const table = tokenTable(figures.byRole, figures.prefixReuseRun);
    expect(table[0]).toMatch(/reuse$/);
    expect(table.find((l) => l.trim().startsWith('judge'))).toMatch(/ 50%$/);
    expect(table.at(-1)).toMatch(new RegExp(` ${(100 * figures.prefixReuseRun!).toFixed(0)}%$`));
  });

  it('counts the text of first requests as what no layout can reuse', () => {
    const first = { tools, messages: [system, task] };
    const next = { tools, messages: [system, task, { role: 'tool', content: 'found it', tool_call_id: 'c1' }] };
    const reuse = prefixReuse([first, next]);
    const [a, b] = [renderPrompt(first).length, renderPrompt(next).length];
    expect(firstRequestShare(reuse)).toBeCloseTo(a / (a + b), 5);
    // The second request reuses all of the first; what is left is the text it adds.
    expect(reuseShare(reuse)).toBeCloseTo(a / (a + b), 5);
    expect(1 - firstRequestShare(reuse) - reuseShare(reuse)).toBeCloseTo((b - a) / (a + b), 5);
  });
});
