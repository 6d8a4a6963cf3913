// A server-sent-events client for tests: reads `id`/`event`/`data` blocks from a live stream until
// told to stop (the test "disconnects") or the server ends the stream.
import { takeSseEvents, type SseEvent } from '../../src/shared/sse';

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
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...opts.headers }, signal: abort.signal });
  if (res.status !== 200) throw new Error(`events: ${res.status} ${await res.text()}`);
  const events: SseEvent[] = [];
  let comments = 0;
  let buf = '';
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { events, ended: true, comments };
      const taken = takeSseEvents(buf + decoder.decode(value, { stream: true }));
      buf = taken.rest;
      comments += taken.comments;
      for (const e of taken.events) {
        events.push(e);
        if (opts.until?.(e)) {
          await reader.cancel(); // the client goes away mid-run
          return { events, ended: false, comments };
        }
      }
    }
  } finally {
    clearTimeout(timer);
  }
}
