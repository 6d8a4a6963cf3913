// Plain values and functions, with no zod: the workflow bundle stays small (its modules are
// evaluated once per worker thread and shared by every workflow, src/worker.ts), and its values
// are frozen, since a workflow that changed one would change it for all. Everyone imports
// these from here (schemas.ts holds the zod schemas and their types, nothing of this file).
import { SUMMARY_MAX_CHARS } from './constants';
import type { Duration, PlanStep, RetrySettings, StepInput, Usage } from './schemas';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export function durationToMs(d: Duration): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(d.trim());
  if (!m) throw new Error(`not a duration: ${d}`);
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

export const DEFAULT_RETRY: Readonly<RetrySettings> = Object.freeze({ initialInterval: '2s', maximumInterval: '1m' });

export const ZERO_USAGE: Readonly<Usage> = Object.freeze({ promptTokens: 0, completionTokens: 0, costUsd: 0 });
export function addUsage(a: Usage, b: Usage): Usage {
  const unpriced = (a.unpricedTokens ?? 0) + (b.unpricedTokens ?? 0);
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    costUsd: Math.round((a.costUsd + b.costUsd) * 1e6) / 1e6,
    ...(unpriced ? { unpricedTokens: unpriced } : {}),
  };
}

/** Each count at its larger: the usage a workflow summed, and what the request log has (a request
 *  whose activity did not live to report it is still counted). */
export function maxUsage(a: Usage, b: Usage): Usage {
  const unpriced = Math.max(a.unpricedTokens ?? 0, b.unpricedTokens ?? 0);
  return {
    promptTokens: Math.max(a.promptTokens, b.promptTokens),
    completionTokens: Math.max(a.completionTokens, b.completionTokens),
    costUsd: Math.max(a.costUsd, b.costUsd),
    ...(unpriced ? { unpricedTokens: unpriced } : {}),
  };
}

export function stepKey(stepId: string, attempt: number): string {
  return `step/${stepId}/${attempt}`;
}

/** What an activity that writes a step's result needs to know about the step. */
export interface StepTask {
  researchId: string;
  /** Where the result is stored: stepKey(step id, attempt). */
  key: string;
  question: string;
  locale: string;
  step: PlanStep;
  dependencyKeys: string[];
}

export function stepTask(input: StepInput): StepTask {
  return {
    researchId: input.researchId,
    key: stepKey(input.step.id, input.attempt),
    question: input.question,
    locale: input.locale,
    step: input.step,
    dependencyKeys: input.dependencyKeys,
  };
}

export function summarize(text: string, max = SUMMARY_MAX_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** Python calls of one researcher step attempt are numbered by their place in the conversation,
 *  far below this (at most 30 rounds of a few calls each). */
export const PYTHON_RUNS_PER_ATTEMPT = 100_000;

/** The fewest tool rounds (maxToolRounds) a step needs to be offered the researcher's `think`: a
 *  quick run's 4 go to searching and reading. */
export const THINK_MIN_TOOL_ROUNDS = 5;
/** The sandbox run number (SandboxInput.attempt) of the python call at conversation position `seq`:
 *  unique in the step across its attempts, and so are its artifacts' ids. */
export function pythonRunNumber(attempt: number, seq: number): number {
  return attempt * PYTHON_RUNS_PER_ATTEMPT + seq;
}

/** Why a research step answered early when its own turn had to (its conversation outgrew the
 *  context budget): the turn's reason, told in the past. */
export function forcedAnswerCut(forcedAnswer: string): string {
  return forcedAnswer.replace(/ is reached$/, ' was reached');
}
