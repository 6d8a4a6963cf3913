// GET /v1/research/:id/events: the run's event log as server-sent events. Each event carries its
// number as the SSE id, so a client that reconnects with Last-Event-ID (its own restart, the
// API's) gets what followed and nothing twice. The stream ends after the run's `done` event (or
// when the run has ended and its log is read out); a comment line every few seconds keeps proxies
// from closing an idle stream. A client going away changes nothing in the run.
// The log is read again when a notification says it grew (activities/store/event-wakeups.ts), or
// every `pollMs` when notifications are not arriving; with them, every `idleReadMs` all the same.
// Keep-alives are written without a read.
import type { Request, Response } from 'express';
import type { EventsTable } from '../activities/store';
import { NO_WAKEUPS, type EventWakeups } from '../activities/store/event-wakeups';

export interface EventStreamOptions {
  events: Pick<EventsTable, 'after'>;
  /** Whether the run has ended (Temporal says so), for runs whose log has no `done` event. */
  ended: () => Promise<boolean>;
  wakeups?: EventWakeups;
  /** Between reads when notifications are not arriving. */
  pollMs?: number;
  /** Between reads when they are (in case one was lost). */
  idleReadMs?: number;
  heartbeatMs?: number;
  /** How long a quiet stream waits before it first asks Temporal whether its run has ended (END_CHECK_MS; then less often, EndCheck). */
  endCheckMs?: number;
}

/**
 * A run's own end writes its `done` event, which ends the stream at once; Temporal is asked only
 * for an end the run never logs (an operator's terminate, a workflow timeout). A run in flight
 * can be quiet for minutes (its calls queued behind others'), and a describe every few seconds of
 * each quiet stream was a good part of what a thousand followed runs cost the Temporal server.
 */
export const END_CHECK_MS = 60_000;

/**
 * When a quiet stream asks Temporal whether its run has ended. The first question comes after
 * `firstMs` without events; each answer "still running" doubles the wait, up to `maxMs`; any event
 * starts over. At a thousand runs in flight a run sits quiet in the model queue for minutes on
 * end, and a describe every minute was ten a run; the first still comes after a minute, and a
 * run ended from outside is still noticed within `maxMs`.
 */
export class EndCheck {
  private wait: number;
  private quietSince = Date.now();
  constructor(
    private readonly firstMs: number,
    private readonly maxMs = Math.max(firstMs, 5 * 60_000),
  ) {
    this.wait = firstMs;
  }
  /** The log grew: the run is alive. */
  heard(): void {
    this.quietSince = Date.now();
    this.wait = this.firstMs;
  }
  due(): boolean {
    return Date.now() - this.quietSince > this.wait;
  }
  /** Temporal said the run goes on. */
  stillRunning(): void {
    this.quietSince = Date.now();
    this.wait = Math.min(this.wait * 2, this.maxMs);
  }
}

/**
 * Between reads of a quiet run's log while notifications arrive: only a notification lost without
 * its connection dropping would be late, and a dropped connection wakes every stream
 * (activities/store/event-wakeups.ts). Reading every 10 s was most of a followed run's reads at a
 * thousand runs in flight.
 */
export const IDLE_READ_MS = 60_000;

/** What the API sets for all its streams. */
export type StreamSettings = Omit<EventStreamOptions, 'events' | 'ended'>;

const PAGE = 200;

export async function streamEvents(req: Request, res: Response, id: string, after: number, o: EventStreamOptions): Promise<void> {
  const pollMs = o.pollMs ?? 500;
  const idleReadMs = o.idleReadMs ?? IDLE_READ_MS;
  const heartbeatMs = o.heartbeatMs ?? 15_000;
  const endCheckMs = o.endCheckMs ?? END_CHECK_MS;
  const wakeups = o.wakeups ?? NO_WAKEUPS;
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  res.write('retry: 2000\n\n');
  let open = true;
  // Set by a notification (or the client leaving); the wait below ends early on it.
  let woken = false;
  let wake = () => undefined as void;
  const unsubscribe = wakeups.subscribe(id, () => {
    woken = true;
    wake();
  });
  req.on('close', () => {
    open = false;
    wake();
  });
  let last = after;
  let lastWrite = Date.now();
  const endCheck = new EndCheck(endCheckMs);
  try {
    while (open) {
      woken = false;
      const batch = await o.events.after(id, last, PAGE);
      for (const e of batch) {
        res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ ...e.data, at: e.at })}\n\n`);
        last = e.seq;
        if (e.type === 'done') return;
      }
      if (batch.length) {
        lastWrite = Date.now();
        endCheck.heard();
        if (batch.length === PAGE) continue;
      }
      // A run that ended without a `done` event (terminated, or older than them) ends the stream
      // once read out.
      if (endCheck.due()) {
        if (await o.ended()) break;
        endCheck.stillRunning();
      }
      // Until a notification (or the client leaving), or the next read when notifications do not
      // arrive (or one was lost); keep-alives go out in between without reading the log. At a
      // thousand runs in flight a run is followed for ten minutes, mostly quiet.
      const readAt = Date.now() + (wakeups.live ? idleReadMs : pollMs);
      while (!woken && open && Date.now() < readAt) {
        if (Date.now() - lastWrite >= heartbeatMs) {
          res.write(': keep-alive\n\n');
          lastWrite = Date.now();
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, Math.min(readAt, lastWrite + heartbeatMs) - Date.now()));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = () => undefined;
      }
    }
  } finally {
    unsubscribe();
    res.end();
  }
}
