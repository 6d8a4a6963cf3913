// Every signal, query and update of the research workflow, defined once and imported by the
// workflow, the API, the CLI and the tests. Payloads and the status view are zod schemas in
// src/shared/messages.ts.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { AnswerClarification, ApprovePlan, ResearchStatusView, RevisePlan } from '../shared/messages';

/** Approve plan `planVersion`; a signal for any other version is ignored and recorded. */
export const approvePlanSignal = defineSignal<[ApprovePlan]>('approvePlan');
/** Re-plan with the reviewer's feedback (at most maxPlanRevisions times). */
export const revisePlanSignal = defineSignal<[RevisePlan]>('revisePlan');
/** The user's answer to the coordinator's clarifying question. */
export const answerClarificationSignal = defineSignal<[AnswerClarification]>('answerClarification');

export const getStatusQuery = defineQuery<ResearchStatusView>('getStatus');
