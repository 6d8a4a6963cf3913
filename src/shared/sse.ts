// Reading server-sent events: the run's event stream as the CLI, the web page and the tests read
// it. Pure text handling and web streams, so that a browser bundle and Node share it.

export interface SseEvent {
  id: number;
  type: string;
  data: Record<string, unknown>;
}

/**
 * Takes the complete blocks off the front of `buffer`: the events among them (blocks with an id),
 * how many comment lines they held (keep-alives), and the incomplete rest to keep reading into.
 */
export function takeSseEvents(buffer: string): { events: SseEvent[]; comments: number; rest: string } {
  const events: SseEvent[] = [];
  let comments = 0;
  let rest = buffer;
  for (let cut = rest.indexOf('\n\n'); cut >= 0; cut = rest.indexOf('\n\n')) {
    const block = rest.slice(0, cut);
    rest = rest.slice(cut + 2);
    const fields: Record<string, string> = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments++;
      const m = /^(\w+): ?(.*)$/.exec(line);
      if (m) fields[m[1]!] = fields[m[1]!] === undefined ? m[2]! : `${fields[m[1]!]}\n${m[2]}`;
    }
    if (fields.id === undefined) continue;
    events.push({
      id: Number(fields.id),
      type: fields.event ?? 'message',
      data: JSON.parse(fields.data ?? '{}') as Record<string, unknown>,
    });
  }
  return { events, comments, rest };
}

/**
 * The one SSE reader: the events of a response body in order as each completes, for the CLI, the
 * web page and the tests alike (fetch's ReadableStream and TextDecoder exist in browsers and Node).
 * `onComments` hears how many comment lines (keep-alives) arrived. Leaving the loop early cancels
 * the body, which closes the connection.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, onComments?: (n: number) => void): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        return;
      }
      const taken = takeSseEvents(buffer + decoder.decode(value, { stream: true }));
      buffer = taken.rest;
      if (taken.comments) onComments?.(taken.comments);
      yield* taken.events;
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => undefined);
  }
}
