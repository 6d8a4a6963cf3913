// Every signal, query and update of the research workflow, defined once and imported by the
// workflow, the API, the CLI and the tests.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { Phase, RunStatus, Usage } from '../shared/schemas';

export interface ApprovePlan {
  planVersion: number;
}
export interface RevisePlan {
  planVersion: number;
  feedback: string;
}
export interface AnswerClarification {
  answer: string;
}

/** Approve plan `planVersion`; a signal for any other version is ignored and recorded. */
export const approvePlanSignal = defineSignal<[ApprovePlan]>('approvePlan');
/** Re-plan with the reviewer's feedback (at most maxPlanRevisions times). */
export const revisePlanSignal = defineSignal<[RevisePlan]>('revisePlan');
/** The user's answer to the coordinator's clarifying question. */
export const answerClarificationSignal = defineSignal<[AnswerClarification]>('answerClarification');

export type StepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped';

export interface StepView {
  id: string;
  title: string;
  type: 'research' | 'processing';
  dependsOn: string[];
  status: StepStatus;
  attempts: number;
  /** Short summary of the accepted result, or why the step failed or was skipped. */
  summary?: string;
  /** Reflection notes: forced pass, judge errors. */
  notes: string[];
  startedAt?: number;
  endedAt?: number;
}

export interface IgnoredSignal {
  signal: 'approvePlan' | 'revisePlan' | 'answerClarification';
  planVersion?: number;
  reason: string;
  at: number;
}

export interface ResearchStatusView {
  status: RunStatus;
  phase: Phase;
  question: string;
  locale?: string;
  clarificationQuestion?: string;
  plan?: { version: number; title: string; thought: string; hasEnoughContext: boolean; revisions: number; revisionsLeft: number; steps: StepView[] };
  usage: Usage;
  /** Things a reader of the report should know: budget stops, review timeouts, judge errors. */
  notes: string[];
  ignoredSignals: IgnoredSignal[];
  report?: { title: string; references: number; removedCitations: number[] };
  error?: string;
}

export const getStatusQuery = defineQuery<ResearchStatusView>('getStatus');
