// The one SSE reader (src/shared/sse.ts) that the CLI, the web page and the tests read the run's
// event stream with: events split across chunks, keep-alives, and leaving early.
import { describe, expect, it } from 'vitest';
import { readSse, type SseEvent } from '../../src/shared/sse';

/** A response body that delivers `chunks` one read at a time and records whether it was cancelled. */
function body(chunks: string[]) {
  const state = { cancelled: false };
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(encoder.encode(next));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe('readSse', () => {
  it('yields each event once it is complete, across chunk and UTF-8 boundaries, and counts keep-alives', async () => {
    const bytes = new TextEncoder().encode('id: 2\nevent: step\ndata: {"title":"Überblick"}\n\n');
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "Ü"
    const chunks = [bytes.slice(0, cut), bytes.slice(cut)];
    let comments = 0;
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('retry: 2000\n\nid: 1\nevent: started\nda'));
        c.enqueue(new TextEncoder().encode('ta: {"at":"t"}\n\n: keep-alive\n\n'));
        for (const chunk of chunks) c.enqueue(chunk);
        c.close();
      },
    });
    const events: SseEvent[] = [];
    for await (const e of readSse(stream, (n) => (comments += n))) events.push(e);
    expect(events).toEqual([
      { id: 1, type: 'started', data: { at: 't' } },
      { id: 2, type: 'step', data: { title: 'Überblick' } },
    ]);
    expect(comments).toBe(1);
  });

  it('cancels the body when the reader leaves early, and not when the stream ended', async () => {
    const early = body(['id: 1\nevent: plan\ndata: {}\n\n', 'id: 2\nevent: done\ndata: {}\n\n']);
    for await (const e of readSse(early.stream)) if (e.type === 'plan') break;
    expect(early.state.cancelled).toBe(true);

    const whole = body(['id: 1\nevent: done\ndata: {}\n\n']);
    const types: string[] = [];
    for await (const e of readSse(whole.stream)) types.push(e.type);
    expect(types).toEqual(['done']);
    expect(whole.state.cancelled).toBe(false);
  });
});
