// The run's event log: appended by the activities that see things happen, read by the API's
// event stream, which a notification wakes when the log grows (event-wakeups.ts). Each event has a
// key that makes a retried append a no-op, and a per-run number.
import type pg from 'pg';
import type { Logger } from '../../infra/logger';
import { listenForRunEvents, type EventWakeups, type WakeupOptions } from './event-wakeups';

export interface NewEvent {
  /** Unique within the run: the same key appended twice is one event. */
  key: string;
  type: string;
  data: Record<string, unknown>;
}

export interface StoredEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
  at: string;
}

/** Attempts at taking the next number when concurrent appends race for it. */
const RACE_ATTEMPTS = 20;

export function eventsTable(pool: pg.Pool) {
  /** Events in one statement (one notification): numbered in order after the log's end. */
  async function appendAll(researchId: string, events: NewEvent[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await pool.query(
          `WITH input AS (
             SELECT k, t, d::jsonb AS d, o FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS x(k, t, d, o)),
           fresh AS (
             SELECT * FROM input WHERE NOT EXISTS (SELECT 1 FROM run_events e WHERE e.research_id = $1 AND e.event_key = input.k))
           INSERT INTO run_events (research_id, seq, event_key, type, data)
           SELECT $1, coalesce((SELECT max(seq) FROM run_events WHERE research_id = $1), 0) + row_number() OVER (ORDER BY o), k, t, d
             FROM fresh`,
          [researchId, events.map((e) => e.key), events.map((e) => e.type), events.map((e) => JSON.stringify(e.data))],
        );
        return;
      } catch (err) {
        // Another append took a number or a key first (its commit is visible now): try again,
        // skipping what is in the log by then.
        const raced = (err as { code?: string }).code === '23505';
        if (!raced || attempt >= RACE_ATTEMPTS) throw err;
      }
    }
  }
  return {
    /** Appends in order; events already in the log (same key) are skipped. */
    async append(researchId: string, events: NewEvent[]): Promise<void> {
      const byKey = new Map<string, NewEvent>();
      for (const e of events) if (!byKey.has(e.key)) byKey.set(e.key, e);
      const unique = [...byKey.values()];
      if (unique.length) await appendAll(researchId, unique);
    },
    async after(researchId: string, seq: number, limit: number): Promise<StoredEvent[]> {
      const { rows } = await pool.query(
        'SELECT seq, type, data, created_at FROM run_events WHERE research_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
        [researchId, seq, limit],
      );
      return rows.map((r) => ({ seq: Number(r.seq), type: r.type, data: r.data, at: new Date(r.created_at).toISOString() }));
    },
    /** Whether the user's steering of the run included `kind` (a `steer` event recordSteering wrote). */
    async steered(researchId: string, kind: string): Promise<boolean> {
      const { rowCount } = await pool.query(
        "SELECT 1 FROM run_events WHERE research_id = $1 AND type = 'steer' AND data->>'kind' = $2 LIMIT 1",
        [researchId, kind],
      );
      return (rowCount ?? 0) > 0;
    },
    /** Wake-ups when a run's log grows, from one listening connection; close it when done. */
    wakeups(log: Logger, opts?: WakeupOptions): EventWakeups {
      return listenForRunEvents(pool, log, opts);
    },
  };
}
export type EventsTable = ReturnType<typeof eventsTable>;
