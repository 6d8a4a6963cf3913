// Every signal, query and update of the research workflow, defined once and imported by the
// workflow, the API, the CLI and the tests. Payloads and the status view are zod schemas in
// src/shared/messages.ts.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  AnswerClarification,
  ApprovePlan,
  ResearchStatusView,
  ReviewAnswer,
  RevisePlan,
  Steer,
  SteerAnswer,
} from '../shared/messages';
import type { KnowledgeScope } from '../shared/schemas';

// Review and clarification as updates (what the API sends): a validator refuses a stale version, a
// decided review, the revision limit or an ended run, and the caller hears the outcome at once.
// The signals below do the same for operators and older callers, recording what they ignore.

/** Approve plan `planVersion`. */
export const approvePlanUpdate = defineUpdate<ReviewAnswer, [ApprovePlan]>('approvePlan');
/** Send plan `planVersion` back to the planner with the reviewer's feedback. */
export const revisePlanUpdate = defineUpdate<ReviewAnswer, [RevisePlan]>('revisePlan');
/** Answer the coordinator's clarifying question. */
export const answerClarificationUpdate = defineUpdate<{ accepted: true }, [AnswerClarification]>('answerClarification');

/** Approve plan `planVersion`; a signal for any other version is ignored and recorded. */
export const approvePlanSignal = defineSignal<[ApprovePlan]>('approvePlan');
/** Re-plan with the reviewer's feedback (at most maxPlanRevisions times). */
export const revisePlanSignal = defineSignal<[RevisePlan]>('revisePlan');
/** The user's answer to the coordinator's clarifying question. */
export const answerClarificationSignal = defineSignal<[AnswerClarification]>('answerClarification');

/** Steer the running research: guidance, wrap-up, or a change to the steps not yet started. */
export const steerUpdate = defineUpdate<SteerAnswer, [Steer]>('steer');
/** Sent by the run to its running step children when the user asks to wrap up. */
export const wrapUpSignal = defineSignal('wrapUp');
/** Sent by the run to a running researcher: the run's knowledge base grew (collections the user added). */
export const knowledgeSignal = defineSignal<[{ knowledge: KnowledgeScope }]>('knowledge');

export const getStatusQuery = defineQuery<ResearchStatusView>('getStatus');

// The tenant's admission queue (admission.ts): a run asks for a slot, is told when it has one, and
// gives it back when it ends.

/** The workflow id of a tenant's admission queue on a task queue. */
export const admissionId = (taskQueue: string, tenant: string) => `admission/${taskQueue}/${tenant}`;
/** A run asks its tenant's queue for a slot, with the limit it was started under (the latest counts). */
export const requestSlotSignal = defineSignal<[{ runId: string; low?: boolean; maxRuns?: number }]>('requestSlot');
/** A run that ended (or was cancelled while waiting) gives its slot or its place back. */
export const releaseSlotSignal = defineSignal<[{ runId: string }]>('releaseSlot');
/** The queue to the run: it may research now (sent again, harmlessly, as a check that it lives). */
export const slotGrantedSignal = defineSignal('slotGranted');
/** The queue's runs: researching, and waiting in order. */
export const admissionQueueQuery = defineQuery<{ maxRuns: number; running: string[]; waiting: string[] }>('admissionQueue');
