// Follows a run's event log for a chat completion, as the events stream does (events.ts): woken by
// notifications or polling, asking Temporal whether the run ended when the log is quiet. It stops
// at the `done` event, at a status that waits for a person (a plan review, a clarification), when
// the run has ended, at a deadline, or when the client left (the run goes on either way).
import type { EventsTable, StoredEvent } from '../../activities/store/events';
import { NO_WAKEUPS, type EventWakeups } from '../../activities/store/event-wakeups';
import { END_CHECK_MS, EndCheck, IDLE_READ_MS } from '../events';

export interface FollowSettings {
  events: Pick<EventsTable, 'after'>;
  wakeups?: EventWakeups;
  pollMs?: number;
  idleReadMs?: number;
  endCheckMs?: number;
}

export type FollowEnd = 'done' | 'awaiting_review' | 'ended' | 'timeout' | 'left';

export interface FollowCalls {
  ended: () => Promise<boolean>;
  onEvent: (e: StoredEvent) => void;
  /** Called at least every `tickMs` while nothing happens (keep-alives). */
  onTick?: () => void;
  tickMs?: number;
  deadline?: number;
  signal: AbortSignal;
}

const PAGE = 200;

export async function followRun(id: string, s: FollowSettings, c: FollowCalls): Promise<FollowEnd> {
  const wakeups = s.wakeups ?? NO_WAKEUPS;
  const pollMs = s.pollMs ?? 500;
  const idleReadMs = s.idleReadMs ?? IDLE_READ_MS;
  const endCheckMs = s.endCheckMs ?? END_CHECK_MS;
  const tickMs = c.tickMs ?? 15_000;
  let wake = () => undefined as void;
  let woken = false;
  const unsubscribe = wakeups.subscribe(id, () => {
    woken = true;
    wake();
  });
  const onAbort = () => wake();
  c.signal.addEventListener('abort', onAbort);
  let last = 0;
  const endCheck = new EndCheck(endCheckMs);
  let tickedAt = Date.now();
  try {
    for (;;) {
      if (c.signal.aborted) return 'left';
      woken = false;
      const batch = await s.events.after(id, last, PAGE);
      for (const e of batch) {
        last = e.seq;
        c.onEvent(e);
        if (e.type === 'done') return 'done';
        if (e.type === 'status' && e.data.status === 'awaiting_review') return 'awaiting_review';
      }
      if (batch.length) {
        endCheck.heard();
        if (batch.length === PAGE) continue;
      }
      if (endCheck.due()) {
        if (await c.ended()) return 'ended';
        endCheck.stillRunning();
      }
      if (c.deadline !== undefined && Date.now() >= c.deadline) return 'timeout';
      // Until a notification, the client leaving, the deadline or the next read; ticks in between
      // read nothing (as events.ts does).
      const readAt = Date.now() + (wakeups.live ? idleReadMs : pollMs);
      while (!woken && !c.signal.aborted && Date.now() < readAt && (c.deadline === undefined || Date.now() < c.deadline)) {
        if (Date.now() - tickedAt >= tickMs) {
          c.onTick?.();
          tickedAt = Date.now();
        }
        await new Promise<void>((resolve) => {
          const waits = [readAt - Date.now(), tickedAt + tickMs - Date.now()];
          if (c.deadline !== undefined) waits.push(c.deadline - Date.now());
          const timer = setTimeout(resolve, Math.max(0, Math.min(...waits)));
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
    c.signal.removeEventListener('abort', onAbort);
  }
}
