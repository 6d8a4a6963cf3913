// A server-sent-events client for tests: reads the stream with the one SSE reader
// (src/shared/sse.ts) until told to stop (the test "disconnects") or the server ends the stream.
import { readSse, type SseEvent } from '../../src/shared/sse';

export type { SseEvent };

export async function readEvents(
  url: string,
  opts: { headers?: Record<string, string>; until?: (e: SseEvent) => boolean; timeoutMs?: number } = {},
): Promise<{ events: SseEvent[]; ended: boolean; comments: number }> {
  const abort = new AbortController();
  const timer = setTimeout(
    () => abort.abort(new Error(`no end of stream within ${opts.timeoutMs ?? 60_000} ms`)),
    opts.timeoutMs ?? 60_000,
  );
  try {
    const res = await fetch(url, { headers: { accept: 'text/event-stream', ...opts.headers }, signal: abort.signal });
    if (res.status !== 200) throw new Error(`events: ${res.status} ${await res.text()}`);
    const events: SseEvent[] = [];
    let comments = 0;
    for await (const e of readSse(res.body!, (n) => (comments += n))) {
      events.push(e);
      // Leaving the loop cancels the body: the client goes away mid-run.
      if (opts.until?.(e)) return { events, ended: false, comments };
    }
    return { events, ended: true, comments };
  } finally {
    clearTimeout(timer);
  }
}
