// GET /v1/research/:id/events: the run's event log as server-sent events. Each event carries its
// number as the SSE id, so a client that reconnects with Last-Event-ID (its own restart, the
// API's) gets what followed and nothing twice. The stream ends after the run's `done` event (or
// when the run has ended and its log is read out); a comment line every few seconds keeps proxies
// from closing an idle stream. A client going away changes nothing in the run.
import type { Request, Response } from 'express';
import type { EventsTable } from '../activities/store';

export interface EventStreamOptions {
  events: Pick<EventsTable, 'after'>;
  /** Whether the run has ended (Temporal says so), for runs whose log has no `done` event. */
  ended: () => Promise<boolean>;
  pollMs?: number;
  heartbeatMs?: number;
}

const PAGE = 200;

export async function streamEvents(req: Request, res: Response, id: string, after: number, o: EventStreamOptions): Promise<void> {
  const pollMs = o.pollMs ?? 500;
  const heartbeatMs = o.heartbeatMs ?? 15_000;
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  res.write('retry: 2000\n\n');
  let open = true;
  req.on('close', () => (open = false));
  let last = after;
  let lastWrite = Date.now();
  let idleSince = Date.now();
  while (open) {
    const batch = await o.events.after(id, last, PAGE);
    for (const e of batch) {
      res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ ...e.data, at: e.at })}\n\n`);
      last = e.seq;
      if (e.type === 'done') {
        res.end();
        return;
      }
    }
    if (batch.length) {
      lastWrite = idleSince = Date.now();
      if (batch.length === PAGE) continue;
    }
    // A run that ended without a `done` event (it predates them) ends the stream once read out.
    if (Date.now() - idleSince > 5_000) {
      if (await o.ended()) break;
      idleSince = Date.now();
    }
    if (Date.now() - lastWrite >= heartbeatMs) {
      res.write(': keep-alive\n\n');
      lastWrite = Date.now();
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  res.end();
}
