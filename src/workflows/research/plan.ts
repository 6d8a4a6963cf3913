// Phase 4, the planner: a plan validated by zod and by code (step count, ids, dependencies),
// re-asked with the problems quoted, at most MAX_PLAN_ATTEMPTS times.
import { ApplicationFailure } from '@temporalio/workflow';
import { ErrorType } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import type { LlmActivities } from '../../activities';
import type { Plan } from '../../shared/schemas';
import type { RunState } from './run-state';

const MAX_PLAN_ATTEMPTS = 3;

/** planResearch's answer: a plan and what is wrong with it (nothing: it stands), and its usage. */
export type PlannerAnswer = Awaited<ReturnType<LlmActivities['planResearch']>>;

/** `first`: the first attempt's answer, when the background phase already asked for it. */
export async function makePlan(run: RunState, researchQuestion: string, reviewerFeedback: string, first?: PlannerAnswer): Promise<Plan> {
  let problems: string[] = [];
  for (let attempt = 1; attempt <= MAX_PLAN_ATTEMPTS; attempt++) {
    const r = attempt === 1 && first ? first : await ask(run, researchQuestion, reviewerFeedback, problems, attempt);
    run.addUsage(r.usage);
    if (r.problems.length === 0) return r.plan;
    problems = r.problems;
    run.note(`Planner attempt ${attempt} was invalid: ${summarize(problems.join('; '), 200)}`);
  }
  throw ApplicationFailure.nonRetryable(
    `the planner gave no valid plan in ${MAX_PLAN_ATTEMPTS} attempts: ${problems.join('; ')}`,
    ErrorType.InvalidPlan,
  );
}

function ask(
  run: RunState,
  researchQuestion: string,
  reviewerFeedback: string,
  problems: string[],
  attempt: number,
): Promise<PlannerAnswer> {
  return run.calls.llm.planResearch.executeWithOptions(
    { summary: `planner: attempt ${attempt}${reviewerFeedback ? ' with review feedback' : ''}` },
    [
      {
        researchId: run.id,
        question: researchQuestion,
        locale: run.locale,
        maxSteps: run.options.maxSteps,
        feedback: reviewerFeedback,
        problems,
        ...(run.memoryOf ? { memoryOf: run.memoryOf } : {}),
      },
    ],
  );
}
