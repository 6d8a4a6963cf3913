// The page's view of the HTTP API: the key kept in this browser, JSON calls with it, the run's
// events as a stream that reconnects with Last-Event-ID by itself.
// Types only from the server's modules: the page's bundle carries none of their code (nor zod).
import { readSse } from '../../src/shared/sse';
import type { ErrorBody } from '../../src/api/contract';
import type { RunEvent } from '../../src/shared/events';

export type { RunEvent };

const KEY_ITEM = 'deep-research.key';

export const keyStore = {
  get: (): string | null => localStorage.getItem(KEY_ITEM),
  set: (key: string) => localStorage.setItem(KEY_ITEM, key),
  clear: () => localStorage.removeItem(KEY_ITEM),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorBody['error']['details'],
  ) {
    super(message);
  }
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const key = keyStore.get();
  return { ...(key ? { authorization: `Bearer ${key}` } : {}), ...extra };
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) {
    // An answer of the API itself has an ErrorBody; one of a proxy in between may have none.
    const e = (await res.json().catch(() => ({}))) as Partial<ErrorBody>;
    throw new ApiError(res.status, e.error?.code ?? String(res.status), e.error?.message ?? res.statusText, e.error?.details);
  }
  return (res.headers.get('content-type') ?? '').includes('json') ? ((await res.json()) as T) : ((await res.text()) as T);
}

/** A file of the API (an export, a chart) as a blob, with the key. */
export async function blob(path: string): Promise<Blob> {
  const res = await fetch(path, { headers: headers() });
  if (!res.ok) throw new ApiError(res.status, String(res.status), `${res.status} ${res.statusText}`);
  return res.blob();
}

/**
 * Follows the run's events from `after` on; calls `onEvent` for each, in order, once. Reconnects
 * after a dropped connection (with Last-Event-ID); stops after `done` or when `signal` aborts.
 */
export async function follow(
  id: string,
  after: number,
  onEvent: (e: RunEvent) => void,
  onState: (s: 'live' | 'reconnecting') => void,
  signal: AbortSignal,
): Promise<void> {
  let last = after;
  while (!signal.aborted) {
    try {
      const res = await fetch(`/v1/research/${encodeURIComponent(id)}/events`, {
        headers: headers({ accept: 'text/event-stream', 'last-event-id': String(last) }),
        signal,
      });
      if (!res.ok) throw new ApiError(res.status, String(res.status), res.statusText);
      onState('live');
      for await (const e of readSse(res.body!)) {
        if (e.id <= last) continue;
        last = e.id;
        // The API streams the run's log as src/shared/events.ts declares it.
        onEvent(e as RunEvent);
        if (e.type === 'done') return;
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && (err.status === 401 || err.status === 404)) throw err;
    }
    onState('reconnecting');
    await new Promise((r) => setTimeout(r, 1_500));
  }
}
