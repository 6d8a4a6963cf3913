// A run's budget: tokens, cost and wall time. When one is spent the team starts no more steps and
// retries none, and the report is written from what exists.
import type { ResearchOptions, Usage } from '../../shared/schemas';

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

/** Why the research must stop, or undefined while every budget holds. */
export function budgetSpent(
  opts: Pick<ResearchOptions, 'maxTokens' | 'maxCostUsd' | 'deadline'>,
  usage: Usage,
  deadlineAt: number | undefined,
  now: number,
): string | undefined {
  const tokens = usage.promptTokens + usage.completionTokens;
  if (opts.maxTokens !== undefined && tokens >= opts.maxTokens) return `the token budget (${opts.maxTokens}) was spent`;
  if (opts.maxCostUsd !== undefined && usage.costUsd >= opts.maxCostUsd) return `the cost budget ($${opts.maxCostUsd}) was spent`;
  if (deadlineAt !== undefined && now >= deadlineAt) return `the time budget (${opts.deadline}) ran out`;
  return undefined;
}
