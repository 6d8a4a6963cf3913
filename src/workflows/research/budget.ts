// A run's budget: tokens, cost and wall time. When one is spent the team starts no more steps and
// retries none, and the report is written from what exists.
import type { ResearchOptions, Usage } from '../../shared/schemas';

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
