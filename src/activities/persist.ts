// The activity that writes the run's own row (status, phase, plan, usage): the workflow calls it at
// each milestone, so PostgreSQL holds the run even when Temporal's visibility is not at hand.
import type { RunRecord, Store } from './store';

export function createPersistActivities(deps: { store: Store }) {
  async function recordRun(run: RunRecord): Promise<void> {
    await deps.store.runs.record(run);
  }
  return { recordRun };
}
