// Phase 5, the review loop: each plan version goes to review (unless autoAcceptPlan or the plan
// needs no research) and waits for approvePlan or revisePlan; a revision re-plans with the
// feedback. reviewTimeout ends the wait with onReviewTimeout. Waiting holds no worker; a run
// that moved to a newer build while it waited (new-build.ts) goes on waiting on the same plan.
import { durationToMs } from '../../shared/plain';
import type { Plan } from '../../shared/schemas';
import { waitOrMove } from './new-build';
import { notify } from './notify';
import { makePlan, type PlannerAnswer } from './plan';
import type { ReviewDecision } from './review-inbox';
import type { RunState } from './run-state';

export type Reviewed = { kind: 'approved'; plan: Plan } | { kind: 'cancelled'; reason: string };
type Revise = { kind: 'revise'; feedback: string };

/** `firstPlan`: the planner's answer the background phase asked for. */
export async function planAndReview(run: RunState, researchQuestion: string, firstPlan?: PlannerAnswer): Promise<Reviewed> {
  const wait = run.carried?.wait;
  if (wait?.at === 'queue') return { kind: 'approved', plan: wait.plan };
  if (wait?.at !== 'review') return reviewLoop(run, researchQuestion, '', 0, firstPlan);
  // A decision that came as the run moved is acted on, not asked for again.
  const outcome = wait.decision ? outcomeOf(run, wait.plan, wait.decision) : await reviewOf(run, researchQuestion, wait.plan, wait.endsAt);
  return outcome.kind === 'revise' ? reviewLoop(run, researchQuestion, outcome.feedback, run.board.revisions + 1) : outcome;
}

async function reviewLoop(
  run: RunState,
  researchQuestion: string,
  feedback: string,
  revisions: number,
  firstPlan?: PlannerAnswer,
): Promise<Reviewed> {
  const opts = run.options;
  for (;;) {
    const plan = await makePlan(run, researchQuestion, feedback, revisions === 0 ? firstPlan : undefined);
    run.board.show(plan, revisions, opts.maxPlanRevisions);
    // The row's sync loop stores the new plan (startRowSync): a write of its own here would hold
    // the workflow task, and the steps it starts, for one more local activity.
    if (plan.hasEnoughContext || opts.autoAcceptPlan) return { kind: 'approved', plan };
    const outcome = await reviewOf(run, researchQuestion, plan);
    if (outcome.kind !== 'revise') return outcome;
    feedback = outcome.feedback;
    revisions++;
    run.moveTo('planning');
  }
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
  run.said.heard('feedback', decision.feedback);
  return decision;
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
