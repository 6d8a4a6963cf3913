// The activity that writes the run's own row (status, phase, plan, usage): the workflow calls it at
// each milestone, so PostgreSQL holds the run even when Temporal's visibility is not at hand.
import type { Usage } from '../shared/schemas';
import type { RunRecord, Store } from './store';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export function createPersistActivities(deps: { store: Store }) {
  /**
   * Writes the run's row. The last write (a terminal status) takes its usage from the request log,
   * which holds what the workflow never saw: repair rounds, answers that could not be used, the
   * calls of a step that failed. It returns that usage for the workflow's result.
   */
  async function recordRun(run: RunRecord): Promise<{ usage: Usage } | undefined> {
    if (!TERMINAL.has(run.status)) {
      await deps.store.runs.record(run);
      return undefined;
    }
    const logged = await deps.store.llmCalls.spent(run.id);
    const usage: Usage = {
      promptTokens: Math.max(run.usage.promptTokens, logged.promptTokens),
      completionTokens: Math.max(run.usage.completionTokens, logged.completionTokens),
      costUsd: Math.max(run.usage.costUsd, logged.costUsd),
    };
    await deps.store.runs.record({ ...run, usage });
    return { usage };
  }
  return { recordRun };
}
