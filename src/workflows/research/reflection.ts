// The reflection loop of one step: run the step's child workflow, whose last activity has the
// judge check the result, and run it again with the judge's feedback, at most
// maxReflectionAttempts more times. A step that fails is recorded and the team goes on.
import {
  CancellationScope,
  CancelledFailure,
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  TerminatedFailure,
} from '@temporalio/workflow';
import { summarize } from '../../shared/plain';
import type { PlanStep, StepInput, StepOutput } from '../../shared/schemas';
import { coderWorkflow } from '../coder';
import { describeFailure, rethrowUnknown } from '../failures';
import { researcherWorkflow } from '../researcher';
import type { RunState } from './run-state';

export async function runStepWithReflection(
  run: RunState,
  step: PlanStep,
  researchQuestion: string,
  accepted: Map<string, StepOutput>,
): Promise<void> {
  let feedback = '';
  let last: StepOutput | undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1 && notRetried(run, step.id)) break;
      run.stepAttempt(step.id, attempt);
      last = await runAttempt(run, step, researchQuestion, attempt, feedback, accepted);
      const next = feedbackForNext(run, step.id, attempt, last);
      if (next === undefined) break;
      feedback = next;
    }
    accept(run, step.id, last!, accepted);
  } catch (err) {
    endUnaccepted(run, step.id, err);
  } finally {
    run.stepEnded(step.id);
  }
}

/** The run's budget is spent: the step is not tried again. */
function notRetried(run: RunState, stepId: string): boolean {
  const spent = run.budgetSpent();
  if (spent) run.board.noteOn(stepId, `not retried: ${spent}`);
  return !!spent;
}

/** An attempt's result taken in: the judge's feedback for another attempt, or undefined when the step is done. */
function feedbackForNext(run: RunState, stepId: string, attempt: number, last: StepOutput): string | undefined {
  const board = run.board;
  run.addUsage(last.usage);
  for (const n of last.notes ?? []) {
    board.noteOn(stepId, n);
    run.note(`Step ${stepId}: ${n}`);
  }
  // The step's last activity judged its findings (a researcher's last turn, a coder's findings
  // activity), unless the user asked the run to wrap up: then it asked no judge.
  const verdict = last.verdict;
  if (run.steering.wrappingUp || !verdict) {
    board.noteOn(stepId, 'accepted without the judge: the user asked to wrap up');
    return undefined;
  }
  if (verdict.passed) return undefined;
  if (attempt > run.options.maxReflectionAttempts) {
    board.noteOn(stepId, `passed after ${attempt} attempts without the judge's approval: ${summarize(verdict.feedback, 200)}`);
    return undefined;
  }
  return verdict.feedback;
}

/** The step's last result is its accepted one. */
function accept(run: RunState, stepId: string, last: StepOutput, accepted: Map<string, StepOutput>): void {
  accepted.set(stepId, last);
  run.board.end(stepId, 'completed', last.summary);
  if (last.cutShort) {
    run.board.noteOn(stepId, `cut short: ${last.cutShort}`);
    run.note(`Step ${stepId} was cut short (${last.cutShort}): its findings are what it had gathered by then.`);
  }
}

/** A step stopped by an operator, or failed: the run goes on without it. The run's own cancellation
 *  and unknown faults are thrown again. */
function endUnaccepted(run: RunState, stepId: string, err: unknown): void {
  if (stoppedByOperator(err)) {
    run.board.end(stepId, 'cancelled', 'cancelled by an operator');
    run.note(`Step ${stepId} was cancelled by an operator; the report is written without it.`);
    return;
  }
  if (isCancellation(err)) throw err;
  rethrowUnknown(err);
  const reason = describeFailure(err, run.options.maxOutage);
  run.board.end(stepId, 'failed', `failed: ${summarize(reason, 200)}`);
  run.note(`Step ${stepId} failed: ${summarize(reason, 160)}`);
}

/**
 * The step's child was cancelled or terminated from outside (the Temporal UI, the CLI) while this
 * run itself goes on: the step ends, the run does not.
 */
function stoppedByOperator(err: unknown): boolean {
  if (!(err instanceof ChildWorkflowFailure) || CancellationScope.current().consideredCancelled) return false;
  return err.cause instanceof CancelledFailure || err.cause instanceof TerminatedFailure;
}

/** One attempt of a step as a child workflow `<run id>/step/<step id>`. */
function runAttempt(
  run: RunState,
  step: PlanStep,
  researchQuestion: string,
  attempt: number,
  feedback: string,
  accepted: Map<string, StepOutput>,
): Promise<StepOutput> {
  const budget = run.reserveBudget(step.id);
  const input: StepInput = {
    researchId: run.id,
    question: researchQuestion,
    locale: run.locale,
    step,
    attempt,
    feedback,
    dependencyKeys: step.dependsOn.map((d) => accepted.get(d)!.key),
    maxToolRounds: run.options.maxToolRounds,
    maxCodeAttempts: run.options.maxCodeAttempts,
    maxOutage: run.options.maxOutage,
    ...(budget ? { budget } : {}),
    ...(run.retry ? { retry: run.retry } : {}),
    ...(run.knowledge ? { knowledge: run.knowledge } : {}),
    ...(run.steering.pagesFor(step.id) ? { mustRead: run.steering.pagesFor(step.id)! } : {}),
  };
  const role = step.type === 'research' ? 'researcher' : 'coder';
  return executeChild(step.type === 'research' ? researcherWorkflow : coderWorkflow, {
    workflowId: `${run.id}/step/${step.id}`,
    args: [input],
    staticSummary: `${role} · step ${step.id} · attempt ${attempt}: ${summarize(step.title, 80)}`,
  });
}
