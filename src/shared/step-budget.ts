// What a step may spend: what was left of the run's budget when the step started. The step's
// workflow checks it before each round, and a researcher turn that goes on with rounds by itself
// (src/activities/phases/researcher-turn.ts) checks it the same way.
import type { Usage } from './schemas';

export interface StepBudget {
  tokens?: number | undefined;
  costUsd?: number | undefined;
  deadlineAt?: number | undefined;
}

/** True when a step has spent what was left of the run's budget when it started. */
export function stepBudgetSpent(budget: StepBudget | undefined, usage: Usage, now: number): boolean {
  if (!budget) return false;
  if (budget.tokens !== undefined && usage.promptTokens + usage.completionTokens >= budget.tokens) return true;
  if (budget.costUsd !== undefined && usage.costUsd >= budget.costUsd) return true;
  return budget.deadlineAt !== undefined && now >= budget.deadlineAt;
}
