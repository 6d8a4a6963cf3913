// Phase 5, the review loop: each plan version goes to review (unless autoAcceptPlan or the plan
// needs no research) and waits for approvePlan or revisePlan; a revision applies the reviewer's
// edits of the steps, and re-plans with the feedback when there is some. reviewTimeout ends the
// wait with onReviewTimeout. Waiting holds no worker; a run that moved to a newer build while it
// waited (new-build.ts) goes on waiting on the same plan.
import { ApplicationFailure } from '@temporalio/workflow';
import { ErrorType } from '../../shared/errors';
import { applyPlanEdits, describeEdits } from '../../shared/plan-edits';
import { durationToMs, summarize } from '../../shared/plain';
import type { PlanEdit } from '../../shared/updates';
import type { Plan } from '../../shared/schemas';
import { waitOrMove } from './new-build';
import { notify } from './notify';
import { makePlan, type PlannerAnswer } from './plan';
import type { ReviewDecision } from './review-inbox';
import type { RunState } from './run-state';

export type Reviewed = { kind: 'approved'; plan: Plan } | { kind: 'cancelled'; reason: string };
/** A plan sent back: the planner's feedback, and the reviewer's own edits of the plan it was sent back from. */
type Revise = { kind: 'revise'; feedback: string; edits?: PlanEdit[]; plan: Plan };

/** `firstPlan`: the planner's answer the background phase asked for. */
export async function planAndReview(run: RunState, researchQuestion: string, firstPlan?: PlannerAnswer): Promise<Reviewed> {
  const wait = run.carried?.wait;
  if (wait?.at === 'queue') return { kind: 'approved', plan: wait.plan };
  if (wait?.at !== 'review') return reviewLoop(run, researchQuestion, undefined, 0, firstPlan);
  // A decision that came as the run moved is acted on, not asked for again.
  const outcome = wait.decision ? outcomeOf(run, wait.plan, wait.decision) : await reviewOf(run, researchQuestion, wait.plan, wait.endsAt);
  return outcome.kind === 'revise' ? reviewLoop(run, researchQuestion, outcome, run.board.revisions + 1) : outcome;
}

async function reviewLoop(
  run: RunState,
  researchQuestion: string,
  revise: Revise | undefined,
  revisions: number,
  firstPlan?: PlannerAnswer,
): Promise<Reviewed> {
  const opts = run.options;
  for (;;) {
    const plan = await nextPlan(run, researchQuestion, revise, revisions === 0 ? firstPlan : undefined);
    run.board.show(plan, revisions, opts.maxPlanRevisions);
    // The row's sync loop stores the new plan (startRowSync): a write of its own here would hold
    // the workflow task, and the steps it starts, for one more local activity.
    if (plan.hasEnoughContext || opts.autoAcceptPlan) return { kind: 'approved', plan };
    const outcome = await reviewOf(run, researchQuestion, plan);
    if (outcome.kind !== 'revise') return outcome;
    revise = outcome;
    revisions++;
    run.moveTo('planning');
  }
}

/**
 * The plan a revision makes: the reviewer's edits applied as given (no model call) when that is
 * all the revision says; with feedback, the planner plans again from it, told of the edits to keep.
 */
async function nextPlan(run: RunState, researchQuestion: string, revise: Revise | undefined, first?: PlannerAnswer): Promise<Plan> {
  const edits = revise?.edits ?? [];
  if (!edits.length) return makePlan(run, researchQuestion, revise?.feedback ?? '', first);
  const applied = applyPlanEdits(revise!.plan, edits, run.options.maxSteps);
  // The validator took these edits against this plan: a problem here is a bug, not the reviewer's.
  if ('problem' in applied)
    throw ApplicationFailure.nonRetryable(`the reviewer's edits no longer apply: ${applied.problem}`, ErrorType.InvalidPlan);
  run.note(`The reviewer edited the plan: ${summarize(describeEdits(edits).join('; '), 400)}.`);
  if (!revise!.feedback) return applied.plan;
  const kept = applied.plan.steps.map((s) => `- ${s.id}: ${s.title} (${s.type}): ${s.description}`).join('\n');
  return makePlan(run, researchQuestion, `${revise!.feedback}\n\nThe reviewer edited the steps to these; keep them:\n${kept}`);
}

/** The review of the plan on the board. `until`: the wait's end an earlier execution set (the
 *  reviewer was notified then). */
async function reviewOf(run: RunState, researchQuestion: string, plan: Plan, until?: number): Promise<Reviewed | Revise> {
  const opts = run.options;
  const decision = await awaitReview(run, researchQuestion, plan, until);
  if (!decision) {
    run.note(
      `No review within ${opts.reviewTimeout}: the plan was ${opts.onReviewTimeout === 'approve' ? 'approved' : 'cancelled'} automatically.`,
    );
    if (opts.onReviewTimeout === 'cancel')
      return { kind: 'cancelled', reason: `Cancelled: the plan was not reviewed within ${opts.reviewTimeout}.` };
    return { kind: 'approved', plan };
  }
  return outcomeOf(run, plan, decision);
}

function outcomeOf(run: RunState, plan: Plan, decision: ReviewDecision): Reviewed | Revise {
  if (decision.kind === 'approve') return { kind: 'approved', plan };
  if (decision.feedback) run.said.heard('feedback', decision.feedback);
  return { ...decision, plan };
}

/** The reviewer's decision on the plan on the board, or undefined when reviewTimeout passed. */
async function awaitReview(run: RunState, researchQuestion: string, plan: Plan, until?: number): Promise<ReviewDecision | undefined> {
  run.inbox.openReview();
  run.moveTo('reviewing', 'awaiting_review');
  if (until === undefined) {
    const view = run.board.view()!;
    await notify(
      run,
      'review_needed',
      { planVersion: view.version, title: view.title, steps: view.steps.map((s) => ({ id: s.id, title: s.title })) },
      view.version,
    );
  }
  const ends = until ?? Date.now() + durationToMs(run.options.reviewTimeout);
  const decided = await waitOrMove(
    run,
    () => run.inbox.reviewDecision !== undefined,
    ends,
    () => ({
      at: 'review',
      researchQuestion,
      plan,
      endsAt: ends,
      ...(run.inbox.reviewDecision ? { decision: run.inbox.reviewDecision } : {}),
    }),
  );
  return decided ? run.inbox.reviewDecision : undefined;
}
