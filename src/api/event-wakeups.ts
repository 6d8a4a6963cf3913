// The event streams' wake-ups come from the store (activities/store/event-wakeups.ts), which
// listens for PostgreSQL's notifications: the API holds no SQL of its own.
import type pg from 'pg';
import type { EventWakeups, WakeupOptions } from '../activities/store';
import { eventsTable } from '../activities/store/events';
import type { Logger } from '../infra/logger';

export { NO_WAKEUPS, type EventWakeups } from '../activities/store/event-wakeups';

/** The store's wake-ups on `pool`, for a caller without a store (`store.events.wakeups` is the same). */
export function listenForEvents(pool: pg.Pool, log: Logger, opts?: WakeupOptions): EventWakeups {
  return eventsTable(pool).wakeups(log, opts);
}
