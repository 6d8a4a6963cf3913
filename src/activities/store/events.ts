// The run's event log: appended by the activities that see things happen, read by the API's
// event stream. Each event has a key that makes a retried append a no-op, and a per-run number.
import type pg from 'pg';

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
  async function appendOne(researchId: string, e: NewEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await pool.query(
          `INSERT INTO run_events (research_id, seq, event_key, type, data)
           SELECT $1, coalesce((SELECT max(seq) FROM run_events WHERE research_id = $1), 0) + 1, $2, $3, $4
           ON CONFLICT (research_id, event_key) DO NOTHING`,
          [researchId, e.key, e.type, JSON.stringify(e.data)],
        );
        return;
      } catch (err) {
        // Another append took this number first (its commit is visible now): take the next.
        const raced = (err as { code?: string; constraint?: string }).code === '23505';
        if (!raced || attempt >= RACE_ATTEMPTS) throw err;
      }
    }
  }
  return {
    /** Appends in order; events already in the log (same key) are skipped. */
    async append(researchId: string, events: NewEvent[]): Promise<void> {
      for (const e of events) await appendOne(researchId, e);
    },
    async after(researchId: string, seq: number, limit: number): Promise<StoredEvent[]> {
      const { rows } = await pool.query(
        'SELECT seq, type, data, created_at FROM run_events WHERE research_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
        [researchId, seq, limit],
      );
      return rows.map((r) => ({ seq: Number(r.seq), type: r.type, data: r.data, at: new Date(r.created_at).toISOString() }));
    },
  };
}
export type EventsTable = ReturnType<typeof eventsTable>;
