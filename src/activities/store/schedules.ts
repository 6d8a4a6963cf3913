// The reports of scheduled runs, in the order their runs started: each run of a schedule finds the
// one before it here and says what changed since.
import type pg from 'pg';
import { RunChanges } from '../../shared/changes';

export interface ScheduledReport {
  scheduleId: string;
  researchId: string;
  startedAt: Date;
  stepKeys: string[];
}

export function scheduledReportsTable(pool: pg.Pool) {
  return {
    /** Records a run's report; a retried write leaves the first row. */
    async record(r: ScheduledReport): Promise<void> {
      await pool.query(
        `INSERT INTO scheduled_reports (schedule_id, research_id, started_at, step_keys) VALUES ($1, $2, $3, $4)
         ON CONFLICT (schedule_id, research_id) DO NOTHING`,
        [r.scheduleId, r.researchId, r.startedAt, r.stepKeys],
      );
    },
    /** The latest report of the schedule whose run started before `startedAt`. */
    async before(scheduleId: string, startedAt: Date): Promise<ScheduledReport | undefined> {
      const { rows } = await pool.query<{ research_id: string; started_at: Date; step_keys: string[] }>(
        `SELECT research_id, started_at, step_keys FROM scheduled_reports
          WHERE schedule_id = $1 AND started_at < $2 ORDER BY started_at DESC LIMIT 1`,
        [scheduleId, startedAt],
      );
      const r = rows[0];
      return r ? { scheduleId, researchId: r.research_id, startedAt: r.started_at, stepKeys: r.step_keys } : undefined;
    },
    /** What the run's comparison with the schedule's previous report found (a retry writes the same). */
    async saveChanges(scheduleId: string, researchId: string, changes: RunChanges): Promise<void> {
      await pool.query('UPDATE scheduled_reports SET changes = $3 WHERE schedule_id = $1 AND research_id = $2', [
        scheduleId,
        researchId,
        JSON.stringify(changes),
      ]);
    },
    /** The comparisons of the given runs of one schedule, by run id; a run without one is absent. */
    async changesOf(scheduleId: string, researchIds: string[]): Promise<Map<string, RunChanges>> {
      if (!researchIds.length) return new Map();
      const { rows } = await pool.query<{ research_id: string; changes: unknown }>(
        `SELECT research_id, changes FROM scheduled_reports
          WHERE schedule_id = $1 AND research_id = ANY($2::text[]) AND changes IS NOT NULL`,
        [scheduleId, researchIds],
      );
      const out = new Map<string, RunChanges>();
      for (const r of rows) {
        const parsed = RunChanges.safeParse(r.changes);
        if (parsed.success) out.set(r.research_id, parsed.data);
      }
      return out;
    },
  };
}
export type ScheduledReportsTable = ReturnType<typeof scheduledReportsTable>;
