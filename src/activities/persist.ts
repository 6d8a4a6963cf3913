// The activity that writes the run's own row (status, phase, plan, usage): the workflow calls it at
// each milestone, so PostgreSQL holds the run even when Temporal's visibility is not at hand.
import type { Usage } from '../shared/schemas';
import { maxUsage } from '../shared/plain';
import { metrics } from '../infra/metrics';
import { runEvents } from './run-events';
import type { RunRecord, Store } from './store';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export function createPersistActivities(deps: { store: Store }) {
  /**
   * Writes the run's row. The last write (a terminal status) takes its usage from the request log,
   * which holds what the workflow never saw: repair rounds, answers that could not be used, the
   * calls of a step that failed. It returns that usage for the workflow's result, and keeps it in
   * the run's final status view. Every write keeps the status view it carries, from which the API
   * answers GET /v1/research/:id without a worker. What changed
   * since the row's last write goes to the run's event log.
   */
  async function recordRun(run: RunRecord): Promise<{ usage: Usage } | undefined> {
    const terminal = TERMINAL.has(run.status);
    let written = run;
    if (terminal) {
      const logged = await deps.store.llmCalls.spent(run.id);
      const usage = maxUsage(run.usage, logged);
      // The view keeps what the workflow's own view will say once it takes this usage.
      written = { ...run, usage, ...(run.view ? { view: { ...run.view, usage } } : {}) };
    }
    // What changed since the row's last write goes to the run's event log (GET …/events), before
    // the row itself: a retry after a lost answer sees the same change again (appends are keyed).
    // A write the row will refuse (older, or after the end) stands for no change.
    const before = await deps.store.runs.get(run.id, { view: false });
    const refused = before && (TERMINAL.has(before.status) || before.writeSeq > (run.seq ?? 0));
    if (!refused) await deps.store.events.append(run.id, runEvents(before, written));
    const taken = await deps.store.runs.record(written);
    if (taken && terminal) metrics.runsFinished.inc({ status: run.status, outcome: run.outcome ?? 'none' });
    return terminal ? { usage: written.usage } : undefined;
  }
  /**
   * Records a steering message before the update answers: guidance and banned domains where every
   * later call of the run reads them, and a `steer` event in the run's log (the timeline's line).
   */
  async function recordSteering(input: {
    researchId: string;
    /** The run's steering number: makes a retried write a no-op. */
    seq: number;
    kind: string;
    summary: string;
    guidance?: string;
    bannedDomains?: string[];
  }): Promise<void> {
    if (input.guidance !== undefined) await deps.store.guidance.add(input.researchId, input.seq, input.guidance);
    if (input.bannedDomains?.length) await deps.store.bans.add(input.researchId, input.bannedDomains);
    await deps.store.events.append(input.researchId, [
      { key: `steer:${input.seq}`, type: 'steer', data: { kind: input.kind, summary: input.summary } },
    ]);
  }

  return { recordRun, recordSteering };
}
