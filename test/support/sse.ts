// A server-sent-events client for tests: reads `id`/`event`/`data` blocks from a live stream until
// told to stop (the test "disconnects") or the server ends the stream.
export interface SseEvent {
  id: number;
  type: string;
  data: Record<string, unknown>;
}

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
      buf += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments++;
          const m = /^(\w+): ?(.*)$/.exec(line);
          if (m) fields[m[1]!] = fields[m[1]!] === undefined ? m[2]! : `${fields[m[1]!]}\n${m[2]}`;
        }
        if (fields.id === undefined) continue;
        const e = {
          id: Number(fields.id),
          type: fields.event ?? 'message',
          data: JSON.parse(fields.data ?? '{}') as Record<string, unknown>,
        };
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
