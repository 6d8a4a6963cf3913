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
  const board = run.board;
  let feedback = '';
  let last: StepOutput | undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) {
        const spent = run.budgetSpent();
        if (spent) {
          board.noteOn(step.id, `not retried: ${spent}`);
          break;
        }
      }
      run.stepAttempt(step.id, attempt);
      last = await runAttempt(run, step, researchQuestion, attempt, feedback, accepted);
      run.addUsage(last.usage);
      for (const n of last.notes ?? []) {
        board.noteOn(step.id, n);
        run.note(`Step ${step.id}: ${n}`);
      }
      // The step's last activity judged its findings (a researcher's last turn, a coder's findings
      // activity), unless the user asked the run to wrap up: then it asked no judge.
      const verdict = last.verdict;
      if (run.steering.wrappingUp || !verdict) {
        board.noteOn(step.id, 'accepted without the judge: the user asked to wrap up');
        break;
      }
      feedback = verdict.feedback;
      if (verdict.passed) break;
      if (attempt > run.options.maxReflectionAttempts) {
        board.noteOn(step.id, `passed after ${attempt} attempts without the judge's approval: ${summarize(feedback, 200)}`);
        break;
      }
    }
    accepted.set(step.id, last!);
    board.end(step.id, 'completed', last!.summary);
    if (last!.cutShort) {
      board.noteOn(step.id, `cut short: ${last!.cutShort}`);
      run.note(`Step ${step.id} was cut short (${last!.cutShort}): its findings are what it had gathered by then.`);
    }
  } catch (err) {
    if (stoppedByOperator(err)) {
      board.end(step.id, 'cancelled', 'cancelled by an operator');
      run.note(`Step ${step.id} was cancelled by an operator; the report is written without it.`);
      return;
    }
    if (isCancellation(err)) throw err;
    rethrowUnknown(err);
    const reason = describeFailure(err, run.options.maxOutage);
    board.end(step.id, 'failed', `failed: ${summarize(reason, 200)}`);
    run.note(`Step ${step.id} failed: ${summarize(reason, 160)}`);
  } finally {
    run.stepEnded(step.id);
  }
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
