// Payloads of the research workflow's signals and the status view its query returns. The workflow,
// the HTTP routes, the CLI and the tests all use these schemas: there is no second copy of a view.
import { z } from 'zod';
import { RunChanges } from './changes';
import { Outcome, Phase, PlanBrief, RunStatus, StepType, Usage } from './schemas';

// The review, clarification and steering messages live in update-schemas.ts (the workflow checks
// the same rules without zod, in updates.ts).
export { AnswerClarification, ApprovePlan, MESSAGE_TEXT_MAX, RevisePlan, Steer, type SteerAnswer, type SteerInput } from './update-schemas';

/** What a failed attempt of a retried call says: which outside system, how long, the last error. */
export const CallWaitDetails = z.object({
  activity: z.string(),
  /** The outside system the call needs, e.g. "the LLM", "PostgreSQL". */
  dependency: z.string(),
  /** The attempt that failed; the next one is scheduled with backoff. */
  attempt: z.number().int().positive(),
  /** When the call was first scheduled (epoch ms). */
  since: z.number(),
  error: z.string(),
});
export type CallWaitDetails = z.infer<typeof CallWaitDetails>;

/**
 * Sent by the worker to the workflow whose call it is retrying (`wait` set), and again when that
 * call ended (`wait` absent); a step's workflow forwards it to its run with the step's id.
 */
export const CallWait = z.object({
  /** The activity id in the workflow that scheduled it. */
  key: z.string(),
  step: z.string().optional(),
  wait: CallWaitDetails.optional(),
});
export type CallWait = z.infer<typeof CallWait>;

/** What the review updates answer at once: the decision taken on that plan version. */
export const ReviewAnswer = z.object({
  planVersion: z.number().int(),
  decision: z.enum(['approved', 'revising']),
  /** For a revision: the version the revised plan will have. */
  nextPlanVersion: z.number().int().optional(),
});
export type ReviewAnswer = z.infer<typeof ReviewAnswer>;

/** Why the workflow refused a review or clarification update (the details of its failure). */
export const RefusalCode = z.enum([
  'stale_plan_version',
  'already_decided',
  'not_reviewing',
  'revision_limit',
  'invalid_edit',
  'run_ended',
  'no_question',
  'invalid_message',
  'not_researching',
  'unknown_step',
  'step_not_pending',
  'duplicate_step',
  'too_many_steps',
  'already_wrapping_up',
  'too_much_guidance',
  'too_many_bans',
  'too_many_pages',
]);
export type RefusalCode = z.infer<typeof RefusalCode>;
export const Refusal = z.object({ code: RefusalCode, currentVersion: z.number().int().optional() });
export type Refusal = z.infer<typeof Refusal>;

/** `cancelled`: an operator cancelled or terminated the step's child workflow; the run went on. */
export const StepStatus = z.enum(['pending', 'running', 'completed', 'failed', 'skipped', 'cancelled']);
export type StepStatus = z.infer<typeof StepStatus>;

/** One step of the plan as the status view shows it. */
export const StepView = z.object({
  id: z.string(),
  title: z.string(),
  /** What the step will do, as the planner wrote it (absent in plans shown before it was kept). */
  description: z.string().optional(),
  type: StepType,
  dependsOn: z.array(z.string()),
  status: StepStatus,
  attempts: z.number().int(),
  /** Short summary of the accepted result, or why the step failed or was skipped. */
  summary: z.string().optional(),
  /** Reflection notes (forced pass, judge errors) and failures the step worked around. */
  notes: z.array(z.string()),
  startedAt: z.number().optional(),
  endedAt: z.number().optional(),
});
export type StepView = z.infer<typeof StepView>;

/** A signal the workflow did not act on, and why (stale version, no review pending, ...). */
export const IgnoredSignal = z.object({
  signal: z.enum(['approvePlan', 'revisePlan', 'answerClarification']),
  planVersion: z.number().optional(),
  reason: z.string(),
  at: z.number(),
});
export type IgnoredSignal = z.infer<typeof IgnoredSignal>;

export const PlanView = z.object({
  version: z.number().int(),
  title: z.string(),
  /** The planner's reasoning: why these steps answer the question. */
  thought: z.string(),
  /** The brief the plan rests on (absent when the run wrote none, or before it was kept). */
  brief: PlanBrief.optional(),
  hasEnoughContext: z.boolean(),
  revisions: z.number().int(),
  revisionsLeft: z.number().int(),
  steps: z.array(StepView),
});
export type PlanView = z.infer<typeof PlanView>;

/** What code found when it checked a report's citations and links (report JSON, status, eval). */
export const Grounding = z.object({
  /** [n] markers the draft had, valid or not, but those of snippets (`snippetCitations`). */
  citations: z.number().int(),
  /** Citations of sources the run has only a search engine's snippet of (their pages were not
   *  read): removed, as a report cites only what the run read. */
  snippetCitations: z.number().int().optional(),
  /** Markers whose number named no retrieved source: removed. */
  unresolved: z.number().int(),
  /** Sentence–source pairs the verifier compared with the source's stored evidence. */
  checked: z.number().int(),
  supported: z.number().int(),
  /** Partly supported: kept and listed. */
  flagged: z.number().int(),
  /** Not supported by the evidence: the citation removed from the sentence. */
  removed: z.number().int(),
  /** Pairs left unchecked: over the cap, no stored evidence, or no verdict given. */
  unchecked: z.number().int(),
  linksRemoved: z.number().int(),
});
export type Grounding = z.infer<typeof Grounding>;

export const ReportView = z.object({
  title: z.string(),
  references: z.number().int(),
  removedCitations: z.array(z.number().int()),
  grounding: Grounding.optional(),
});
export type ReportView = z.infer<typeof ReportView>;

/** An outside call being retried (an outage, a rate limit): what, where, how often, and why. */
export const WaitingCall = z.object({
  /** The plan step whose child workflow makes the call; absent for the run's own calls. */
  step: z.string().optional(),
  activity: z.string(),
  attempt: z.number().int(),
  lastError: z.string().optional(),
  lastAttemptAt: z.string().optional(),
  nextAttemptAt: z.string().optional(),
});
export type WaitingCall = z.infer<typeof WaitingCall>;

/** What the `getStatus` query returns. */
export const ResearchStatusView = z.object({
  status: RunStatus,
  phase: Phase,
  question: z.string(),
  locale: z.string().optional(),
  clarificationQuestion: z.string().optional(),
  plan: PlanView.optional(),
  usage: Usage,
  /** Things a reader of the report should know: budget stops, review timeouts, failed searches. */
  notes: z.array(z.string()),
  ignoredSignals: z.array(IgnoredSignal),
  /** What the user changed while the run ran: its guidance, and whether it is wrapping up. */
  steering: z.object({ guidance: z.array(z.string()), bannedDomains: z.array(z.string()), wrappingUp: z.boolean() }).optional(),
  report: ReportView.optional(),
  /** A scheduled run: what changed since the schedule's previous report. */
  changes: RunChanges.optional(),
  /** Set when the run ended with a result. */
  outcome: Outcome.optional(),
  /** The coordinator's answer of a run it answered directly (outcome "answered_directly"). */
  answer: z.string().optional(),
  error: z.string().optional(),
  /**
   * Calls the run and its running steps are retrying right now. In the workflow's view: what the
   * workers reported (activity, attempt, last error); the API gives Temporal's own word on them,
   * with the times of the last and next attempt.
   */
  waiting: z.array(WaitingCall).optional(),
});
export type ResearchStatusView = z.infer<typeof ResearchStatusView>;

/** The limits of a run's budget: its request's, or where it set none the operator's RUN_MAX_TOKENS. */
export const BudgetView = z.object({
  maxTokens: z.number().int().optional(),
  maxCostUsd: z.number().optional(),
  deadline: z.string().optional(),
});
export type BudgetView = z.infer<typeof BudgetView>;

/**
 * `GET /v1/research/:id`: the status view with the run's id. A closed run whose history no worker
 * can replay any more answers from its result or failure, without usage, notes or signals.
 */
export const ResearchView = ResearchStatusView.partial({ usage: true, notes: true, ignoredSignals: true }).extend({
  id: z.string(),
  /** What the run may spend (absent in runs started before budgets were shown); `usage` is what it spent. */
  budget: BudgetView.optional(),
  /** Set when no worker answered: the view is what Temporal visibility and PostgreSQL last recorded. */
  stale: z.string().optional(),
  /** In phase `queued`: the run's place in its tenant's queue (1: next), and how many research now. */
  queue: z
    .object({ position: z.number().int(), waiting: z.number().int(), running: z.number().int(), maxRuns: z.number().int() })
    .optional(),
});
export type ResearchView = z.infer<typeof ResearchView>;
