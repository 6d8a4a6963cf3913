// Phase 5, the review loop: each plan version goes to review (unless autoAcceptPlan or the plan
// needs no research) and waits for approvePlan or revisePlan; a revision re-plans with the
// feedback. reviewTimeout ends the wait with onReviewTimeout. Waiting holds no worker.
import { condition } from '@temporalio/workflow';
import { durationToMs } from '../../shared/plain';
import type { Plan } from '../../shared/schemas';
import { notify } from './notify';
import { makePlan, type PlannerAnswer } from './plan';
import type { ReviewDecision } from './review-inbox';
import type { RunState } from './run-state';

export type Reviewed = { kind: 'approved'; plan: Plan } | { kind: 'cancelled'; reason: string };

/** `firstPlan`: the planner's answer the background phase asked for. */
export async function planAndReview(run: RunState, researchQuestion: string, firstPlan?: PlannerAnswer): Promise<Reviewed> {
  const opts = run.options;
  let feedback = '';
  let revisions = 0;
  for (;;) {
    const plan = await makePlan(run, researchQuestion, feedback, revisions === 0 ? firstPlan : undefined);
    run.board.show(plan, revisions, opts.maxPlanRevisions);
    // The row's sync loop stores the new plan (startRowSync): a write of its own here would hold
    // the workflow task, and the steps it starts, for one more local activity.
    if (plan.hasEnoughContext || opts.autoAcceptPlan) return { kind: 'approved', plan };
    const decision = await awaitReview(run);
    if (!decision) {
      run.note(
        `No review within ${opts.reviewTimeout}: the plan was ${opts.onReviewTimeout === 'approve' ? 'approved' : 'cancelled'} automatically.`,
      );
      if (opts.onReviewTimeout === 'cancel')
        return { kind: 'cancelled', reason: `Cancelled: the plan was not reviewed within ${opts.reviewTimeout}.` };
      return { kind: 'approved', plan };
    }
    if (decision.kind === 'approve') return { kind: 'approved', plan };
    feedback = decision.feedback;
    run.said.heard('feedback', feedback);
    revisions++;
    run.moveTo('planning');
  }
}

/** The reviewer's decision on the plan on the board, or undefined when reviewTimeout passed. */
async function awaitReview(run: RunState): Promise<ReviewDecision | undefined> {
  run.inbox.openReview();
  run.moveTo('reviewing', 'awaiting_review');
  const plan = run.board.view()!;
  await notify(
    run,
    'review_needed',
    { planVersion: plan.version, title: plan.title, steps: plan.steps.map((s) => ({ id: s.id, title: s.title })) },
    plan.version,
  );
  const decided = await condition(() => run.inbox.reviewDecision !== undefined, durationToMs(run.options.reviewTimeout));
  return decided ? run.inbox.reviewDecision : undefined;
}
