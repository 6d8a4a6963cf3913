// A run's budget: tokens, cost and wall time. When one is spent the team starts no more steps and
// retries none, and the report is written from what exists.
import { addUsage, durationToMs, ZERO_USAGE } from '../../shared/plain';
import type { ResearchOptions, Usage } from '../../shared/schemas';
import type { StepBudget } from '../../shared/step-budget';

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

/**
 * What the run has spent (its usage) and what its running steps hold of what is left. Only these
 * methods change it.
 */
export class RunBudget {
  private spentSoFar: Usage = ZERO_USAGE;
  private deadlineAt: number | undefined;
  /** The budget shares of the steps running now (see reserve). */
  private readonly reserved = new Map<string, StepBudget>();

  constructor(private readonly opts: Pick<ResearchOptions, 'maxTokens' | 'maxCostUsd' | 'deadline'>) {}

  get usage(): Usage {
    return this.spentSoFar;
  }

  add(u: Usage): void {
    this.spentSoFar = addUsage(this.spentSoFar, u);
  }

  /** The run's usage as the request log has it at the end (it saw calls the workflow did not). */
  settle(u: Usage): void {
    this.spentSoFar = u;
  }

  /** `deadline` counts from here: the research itself, not the time the plan waited for review. */
  startClock(): void {
    const { deadline } = this.opts;
    if (deadline) this.deadlineAt = Date.now() + durationToMs(deadline);
  }

  /**
   * The share of the run's budget a step attempt may spend; undefined when the run has none. What
   * is left, less what the other running steps hold, is split between this step and the `pending`
   * steps, so steps in parallel cannot together spend more than the run has. The deadline is the
   * run's, for every step.
   */
  reserve(stepId: string, pending: number): StepBudget | undefined {
    const { maxTokens, maxCostUsd } = this.opts;
    if (maxTokens === undefined && maxCostUsd === undefined && this.deadlineAt === undefined) return undefined;
    this.reserved.delete(stepId);
    const held = [...this.reserved.values()];
    const ways = 1 + pending;
    const share = (limit: number | undefined, spent: number, heldBy: (b: StepBudget) => number | undefined) =>
      limit === undefined ? undefined : Math.max(0, limit - spent - held.reduce((n, b) => n + (heldBy(b) ?? 0), 0)) / ways;
    const tokens = share(maxTokens, this.usage.promptTokens + this.usage.completionTokens, (b) => b.tokens);
    const costUsd = share(maxCostUsd, this.usage.costUsd, (b) => b.costUsd);
    const budget: StepBudget = {
      ...(tokens !== undefined ? { tokens: Math.floor(tokens) } : {}),
      ...(costUsd !== undefined ? { costUsd } : {}),
      ...(this.deadlineAt !== undefined ? { deadlineAt: this.deadlineAt } : {}),
    };
    this.reserved.set(stepId, budget);
    return budget;
  }

  /** A step's share ends with it. */
  release(stepId: string): void {
    this.reserved.delete(stepId);
  }

  /** Why the research must stop (tokens, cost or time spent), or undefined. */
  spent(): string | undefined {
    return budgetSpent(this.opts, this.usage, this.deadlineAt, Date.now());
  }
}
