// The chat endpoint's pieces that need no services: following a run's event log (where it stops,
// keep-alive ticks, a client leaving) and reading a conversation (the question, the run id of the
// newest answer, earlier turns as bounded context).
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/activities/store/events';
import { followRun } from '../../src/api/chat/follow';
import { questionWithContext, readConversation } from '../../src/api/chat/conversation';

const RUN_A = 'research-0a1b2c3d-0000-4000-8000-000000000001';
const RUN_B = 'research-0123456789abcdef0123456789abcdef';

function log(events: Omit<StoredEvent, 'seq' | 'at'>[]) {
  const stored = events.map((e, i) => ({ ...e, seq: i + 1, at: new Date().toISOString() }));
  return {
    reads: 0,
    async after(_id: string, seq: number, limit: number) {
      this.reads++;
      return stored.filter((e) => e.seq > seq).slice(0, limit);
    },
  };
}

describe('followRun', () => {
  const never = async () => false;

  it('hands over every event in order and stops at done', async () => {
    const seen: string[] = [];
    const events = log([
      { type: 'started', data: {} },
      { type: 'phase', data: { phase: 'planning' } },
      { type: 'done', data: { status: 'completed' } },
      { type: 'usage', data: {} },
    ]);
    const end = await followRun(
      'r',
      { events, pollMs: 5 },
      { ended: never, signal: new AbortController().signal, onEvent: (e) => void seen.push(e.type) },
    );
    expect(end).toBe('done');
    expect(seen).toEqual(['started', 'phase', 'done']);
  });

  it('stops when the run waits for a person', async () => {
    const events = log([{ type: 'status', data: { status: 'awaiting_review', phase: 'reviewing' } }]);
    const end = await followRun('r', { events, pollMs: 5 }, { ended: never, signal: new AbortController().signal, onEvent: () => {} });
    expect(end).toBe('awaiting_review');
  });

  it('ticks while the log is quiet and stops at the deadline', async () => {
    let ticks = 0;
    const started = Date.now();
    const end = await followRun(
      'r',
      { events: log([]), pollMs: 1_000 },
      {
        ended: never,
        signal: new AbortController().signal,
        onEvent: () => {},
        tickMs: 30,
        onTick: () => ticks++,
        deadline: Date.now() + 200,
      },
    );
    expect(end).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(600);
    expect(ticks).toBeGreaterThanOrEqual(3);
  });

  it('ends with the run when its log has no done event, and at once when the client leaves', async () => {
    const ended = await followRun(
      'r',
      { events: log([]), pollMs: 5, endCheckMs: 20 },
      {
        ended: async () => true,
        signal: new AbortController().signal,
        onEvent: () => {},
      },
    );
    expect(ended).toBe('ended');
    const leaving = new AbortController();
    const started = Date.now();
    setTimeout(() => leaving.abort(), 50);
    const left = await followRun('r', { events: log([]), pollMs: 10_000 }, { ended: never, signal: leaving.signal, onEvent: () => {} });
    expect(left).toBe('left');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('readConversation', () => {
  it('takes the last user message as the question and the newest answer’s run id', () => {
    const c = readConversation([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'First?' },
      { role: 'assistant', content: `Report one.\n\n---\n*Deep research run \`${RUN_A}\`*` },
      { role: 'user', content: [{ type: 'text', text: 'Second?' }] },
      { role: 'assistant', content: `Report two mentions nothing, then *Deep research run \`${RUN_B}\`*` },
      { role: 'assistant', content: 'An edited answer without a footer.' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'x' } },
          { type: 'text', text: ' Third? ' },
        ],
      },
    ]);
    expect(c.question).toBe('Third?');
    expect(c.previousRunId).toBe(RUN_B);
    expect(c.earlier.map((t) => t.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'assistant']);
  });

  it('refuses a conversation that does not end with a user question', () => {
    expect(() =>
      readConversation([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ]),
    ).toThrow(/last message must be the user/);
    expect(() => readConversation([{ role: 'user', content: '  ' }])).toThrow(/no text/);
  });

  it('carries the newest earlier turns as context within the question’s limit', () => {
    const earlier = Array.from(
      { length: 30 },
      (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} ${'x'.repeat(200)}` }) as const,
    );
    const q = questionWithContext(readConversation([...earlier, { role: 'user', content: 'Now?' }]));
    expect(q.startsWith('Now?\n\n(Earlier in this conversation:\n')).toBe(true);
    expect(q).toContain('turn 29');
    expect(q).not.toContain('turn 0 ');
    expect(q.length).toBeLessThanOrEqual(1_700);
    expect(questionWithContext(readConversation([{ role: 'user', content: 'Alone?' }]))).toBe('Alone?');
  });
});
