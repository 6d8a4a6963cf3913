// A run's events as an async stream that resumes by itself: after a dropped connection it asks
// again with Last-Event-ID (the id of the last event it gave), so no event comes twice or is lost.
import type { ResearchView } from '../shared/messages';
import type { RunEvent } from '../shared/events';
import { readSse } from '../shared/sse';
import { checkPath, ClientError, failure, type Http } from './http';

export interface FollowOptions {
  /** Events after this id (0: from the start). */
  after?: number;
  /** Stops the stream (the loop ends without an error). */
  signal?: AbortSignal;
  /** Hears when the stream is live and when it reconnects. */
  onState?: (state: 'live' | 'reconnecting') => void;
  /** Wait between attempts (default 1 s). */
  retryDelayMs?: number;
  /** Failed attempts in a row before giving up with an `unreachable` ClientError (default 30). */
  maxFailures?: number;
}

/** Waits `ms`, or less when `signal` aborts (the listener goes with the wait: a page reconnects often). */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const stop = () => (clearTimeout(t), resolve());
    const t = setTimeout(() => (signal?.removeEventListener('abort', stop), resolve()), ms);
    signal?.addEventListener('abort', stop, { once: true });
  });

/** Answers worth asking again: rate limits, timeouts and server faults; any other 4xx is final. */
const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

export async function* followEvents(h: Http, id: string, o: FollowOptions = {}): AsyncGenerator<RunEvent> {
  const path = `/v1/research/${encodeURIComponent(id)}`;
  checkPath(path);
  let last = o.after ?? 0;
  let failures = 0;
  const retry = async (err: ClientError) => {
    if (++failures > (o.maxFailures ?? 30)) throw err;
    o.onState?.('reconnecting');
    await sleep(o.retryDelayMs ?? 1_000, o.signal);
  };
  while (!o.signal?.aborted) {
    let res: Response;
    try {
      res = await h.fetch(`${h.base}${path}/events`, {
        headers: h.headers({ accept: 'text/event-stream', 'last-event-id': String(last) }),
        ...(o.signal ? { signal: o.signal } : {}),
      });
    } catch (err) {
      if (o.signal?.aborted) return;
      await retry(h.unreachable(err));
      continue;
    }
    if (!res.ok) {
      const err = await failure(res);
      if (!retryable(res.status)) throw err;
      await retry(err);
      continue;
    }
    failures = 0;
    o.onState?.('live');
    try {
      for await (const e of readSse(res.body!)) {
        // A server that replays from an older id must not make the caller see an event twice.
        if (e.id <= last) continue;
        last = e.id;
        // The API streams the run's log as src/shared/events.ts declares it.
        yield e as RunEvent;
        if (e.type === 'done') return;
      }
    } catch {
      if (o.signal?.aborted) return;
      // The connection dropped: reconnect from the last event.
    }
    if (o.signal?.aborted) return;
    // The server ended the stream without `done` (a run from before events): stop if the run ended.
    const run = await h.call<Pick<ResearchView, 'status'>>('GET', path).catch(() => undefined);
    if (run && !['running', 'awaiting_review'].includes(run.status)) return;
    o.onState?.('reconnecting');
    await sleep(o.retryDelayMs ?? 1_000, o.signal);
  }
}
