// The research workflow: coordinate → knowledge → investigate (one activity for most runs) → plan
// and review → research team (child workflows, each with reflection) → gap reflection, or in
// supervisor mode the supervisor's waves → report. Deterministic code only: every outside call is
// an activity or a child workflow, and every loop is bounded by an option. The phases live in
// research/, one file per phase or loop; the run's state in research/run-state.ts.
import { allHandlersFinished, CancellationScope, condition, setHandler } from '@temporalio/workflow';
import type { ResearchInput, ResearchResult, StepOutput } from '../shared/schemas';
import {
  answerClarificationSignal,
  answerClarificationUpdate,
  approvePlanSignal,
  approvePlanUpdate,
  getStatusQuery,
  revisePlanSignal,
  revisePlanUpdate,
  steerUpdate,
} from './messages';
import { giveSlotBack, takeSlot } from './research/admission';
import { compareWithPrevious } from './research/changes';
import { closeGaps } from './research/gaps';
import { rememberReport } from './research/knowledge';
import { open } from './research/opening';
import { endOnError, finish, startRowSync } from './research/persist';
import { writeReport, type WrittenReport } from './research/report';
import { planAndReview } from './research/review';
import { RunState } from './research/run-state';
import { steer } from './research/steering';
import { supervise } from './research/supervisor';
import { runTeam } from './research/team';
import { learnAboutUser } from './research/user-memory';
import { callWaitSignal } from './waits';

export async function researchWorkflow(input: ResearchInput): Promise<ResearchResult> {
  const run = new RunState(input);
  answerMessages(run);
  run.begin();
  startRowSync(run);
  try {
    const opening = await open(run);
    if (opening.kind === 'answer') {
      return await finish(run, 'answered_directly', opening.answer, { outcome: 'answered_directly', answer: opening.answer });
    }
    const { researchQuestion, firstPlan } = opening;
    const reviewed = await planAndReview(run, researchQuestion, firstPlan);
    if (reviewed.kind === 'cancelled') {
      return await finish(run, 'cancelled_at_review', reviewed.reason, { outcome: 'review_timeout' }, 'cancelled');
    }
    let { plan } = reviewed;
    let accepted = new Map<string, StepOutput>();
    // Written by the last gap reflection when it found nothing missing (a one-call report).
    let written: WrittenReport | undefined;
    if (!plan.hasEnoughContext) {
      await takeSlot(run, researchQuestion, plan);
      run.moveTo('researching');
      run.budget.startClock();
      accepted = await runTeam(run, plan, researchQuestion);
      const followUp = run.options.researchMode === 'supervisor' ? supervise : closeGaps;
      ({ plan, accepted, report: written } = await followUp(run, run.steering.apply(plan), researchQuestion, accepted));
      plan = run.steering.apply(plan);
    }
    const report = written ?? (await writeReport(run, plan, researchQuestion, accepted));
    await compareWithPrevious(run, plan, researchQuestion, accepted);
    await rememberReport(run);
    await learnAboutUser(run, report.learned);
    return await finish(run, 'report', report.summary, { outcome: 'report', answer: report.title });
  } catch (err) {
    return await endOnError(run, err);
  } finally {
    await giveSlotBack(run);
    // A steering update still at work (it waits on activities) ends before the run does.
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  }
}

/** The run's queries, signals and updates, each answered by the part of the run it is for. */
function answerMessages(run: RunState): void {
  setHandler(getStatusQuery, () => run.view());
  setHandler(approvePlanSignal, (m) => run.inbox.approvePlan(m));
  setHandler(revisePlanSignal, (m) => run.inbox.revisePlan(m));
  setHandler(answerClarificationSignal, (m) => run.inbox.answerClarification(m));
  setHandler(approvePlanUpdate, (m) => run.inbox.approvePlanNow(m), { validator: (m) => run.inbox.validateApproval(m) });
  setHandler(revisePlanUpdate, (m) => run.inbox.revisePlanNow(m), { validator: (m) => run.inbox.validateRevision(m) });
  setHandler(answerClarificationUpdate, (m) => run.inbox.answerClarificationNow(m), {
    validator: (m) => run.inbox.validateClarification(m),
  });
  setHandler(steerUpdate, (m) => steer(run, m), { validator: (m) => run.validateSteer(m) });
  setHandler(callWaitSignal, (m) => run.callWait(m));
}
