// Wakes the event streams of a run when its log grows: one connection per API process listens on
// PostgreSQL's `run_events` channel (migration 017 notifies from a trigger), and each stream waits
// for its run's notification instead of reading the log every half second. At 100 runs followed
// at once, that polling was about 200 queries a second.
//
// Notifications are a wake-up, never the data: a stream always reads the log itself. Where they
// cannot be relied on, streams fall back to reading every `pollMs`:
// - until the listener has heard its own test notification (a database or proxy that does not
//   deliver another connection's notifications never gets there; the embedded server,
//   src/infra/pglite-server.ts, does deliver them);
// - while the listening connection is down (it reconnects with backoff, and wakes every stream
//   when it is back, since notifications sent in between are lost).
import type pg from 'pg';
import type { Logger } from '../../infra/logger';

export const RUN_EVENTS_CHANNEL = 'run_events';

export interface EventWakeups {
  /** Calls `wake` whenever run `id` may have new events; returns the unsubscribe. */
  subscribe(id: string, wake: () => void): () => void;
  /** True while notifications arrive: streams may then wait long between reads. */
  readonly live: boolean;
  close(): Promise<void>;
}

export interface WakeupOptions {
  /** Between attempts at a listening connection. */
  retryMs?: number;
  /** How long the test notification may take before the listener says streams poll. */
  probeMs?: number;
}

/** No notifications (tests, or no listener): every stream polls. */
export const NO_WAKEUPS: EventWakeups = { subscribe: () => () => undefined, live: false, close: async () => undefined };

/** The streams waiting for each run's notifications. */
function waiterSet() {
  const waiters = new Map<string, Set<() => void>>();
  return {
    add(id: string, wake: () => void): () => void {
      let set = waiters.get(id);
      if (!set) waiters.set(id, (set = new Set()));
      set.add(wake);
      return () => {
        set.delete(wake);
        if (!set.size && waiters.get(id) === set) waiters.delete(id);
      };
    },
    wake(id: string): void {
      for (const w of waiters.get(id) ?? []) w();
    },
    wakeAll(): void {
      for (const set of waiters.values()) for (const w of set) w();
    },
  };
}

export function listenForRunEvents(pool: pg.Pool, log: Logger, opts: WakeupOptions = {}): EventWakeups {
  const retryMs = opts.retryMs ?? 2_000;
  const probeMs = opts.probeMs ?? 2_000;
  const waiters = waiterSet();
  const probeId = `probe:${process.pid}-${Math.random().toString(36).slice(2)}`;
  let client: pg.PoolClient | undefined;
  let live = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const retry = () => {
    if (!closed) timer = setTimeout(() => void connect(), retryMs);
  };
  const onNotification = (n: pg.Notification) => {
    if (n.channel !== RUN_EVENTS_CHANNEL || n.payload === undefined) return;
    if (n.payload !== probeId) return waiters.wake(n.payload);
    if (!live) log.debug('event streams are woken by PostgreSQL notifications');
    live = true;
  };
  const drop = (c: pg.PoolClient, err?: Error) => {
    if (client !== c) return;
    client = undefined;
    live = false;
    c.removeListener('notification', onNotification);
    c.release(err ?? true); // never back into the pool: it is listening
    waiters.wakeAll();
    retry();
  };
  async function connect(): Promise<void> {
    timer = undefined;
    const c = await pool.connect().catch((err: unknown) => {
      log.debug('event stream listener: no connection, streams poll', { error: (err as Error).message });
      retry();
    });
    if (!c) return;
    if (closed) return c.release(true);
    client = c;
    c.on('notification', onNotification);
    c.on('error', (err) => drop(c, err));
    c.on('end', () => drop(c));
    try {
      await c.query(`LISTEN ${RUN_EVENTS_CHANNEL}`);
      // Proves that notifications reach this connection (not every server or proxy passes them on).
      await pool.query('SELECT pg_notify($1, $2)', [RUN_EVENTS_CHANNEL, probeId]);
    } catch (err) {
      return drop(c, err as Error);
    }
    // Notifications sent before LISTEN took effect are lost: every stream reads once more.
    waiters.wakeAll();
    setTimeout(() => {
      if (client === c && !live) log.debug('PostgreSQL notifications do not arrive here: event streams poll');
    }, probeMs).unref();
  }
  void connect();

  return {
    subscribe: waiters.add,
    get live() {
      return live;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = undefined;
      live = false;
      if (!c) return;
      c.removeListener('notification', onNotification);
      await c.query(`UNLISTEN ${RUN_EVENTS_CHANNEL}`).catch(() => undefined);
      c.release(true);
    },
  };
}
