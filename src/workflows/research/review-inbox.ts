// The run's inbox for people: the reviewer's decision on the plan under review and the answer to
// the coordinator's clarifying question. Each message is a signal (an operator's, or an older
// caller's: what cannot be taken is ignored and recorded) and an update (a validator refuses it,
// and the caller hears why at once). Only these methods change the inbox.
import { ApplicationFailure } from '@temporalio/workflow';
import type {
  AnswerClarification,
  ApprovePlan,
  IgnoredSignal,
  Refusal,
  RefusalCode,
  ReviewAnswer,
  RevisePlan,
} from '../../shared/messages';
import { ErrorType } from '../../shared/errors';
import { checkAnswerClarification, checkApprovePlan, checkRevisePlan, type Checked, MESSAGE_TEXT_MAX } from '../../shared/updates';
import type { Phase, Plan } from '../../shared/schemas';
import { applyPlanEdits } from '../../shared/plan-edits';
import type { PlanEdit } from '../../shared/updates';

const MAX_IGNORED_SIGNALS = 20;

export type Refused = { code: RefusalCode; reason: string };
export type ReviewDecision = { kind: 'approve' } | { kind: 'revise'; feedback: string; edits?: PlanEdit[] };

/** What the inbox needs to know of the run to decide whether a message can be taken now. */
export interface InboxContext {
  phase(): Phase;
  planVersion(): number | undefined;
  planRevisions(): number;
  readonly maxPlanRevisions: number;
  /** The plan under review, which a reviewer's edits change, and how many steps a plan may have. */
  plan(): Plan | undefined;
  readonly maxSteps: number;
  /** A signal was ignored (the status view lists it). */
  ignoredSignal(): void;
}

/** An update sent by hand (the Temporal UI, the CLI) may not match its schema. */
export function malformed(checked: Checked<unknown>): Refused | undefined {
  return checked.ok ? undefined : { code: 'invalid_message', reason: checked.error };
}

/** A validator's refusal: a failure whose details say why and which plan version is current. */
export function refuse(refused: Refused | undefined, currentVersion: number | undefined): void {
  if (!refused) return;
  const details: Refusal = { code: refused.code, ...(currentVersion !== undefined ? { currentVersion } : {}) };
  throw ApplicationFailure.create({ message: refused.reason, type: ErrorType.MessageRefused, nonRetryable: true, details: [details] });
}

export class ReviewInbox {
  /** The reviewer's decision on the plan under review; cleared when a version goes to review. */
  private decision?: ReviewDecision;
  private question?: string;
  private answer?: string;
  private readonly ignoredSignals: IgnoredSignal[] = [];

  constructor(private readonly run: InboxContext) {}

  // ---- what the phases see and do -----------------------------------------------------------

  get reviewDecision(): ReviewDecision | undefined {
    return this.decision;
  }

  /** A new plan version goes to review: no decision on it yet. */
  openReview(): void {
    this.decision = undefined;
  }

  get clarificationQuestion(): string | undefined {
    return this.question;
  }

  get clarificationAnswer(): string | undefined {
    return this.answer;
  }

  ask(question: string): void {
    this.question = question;
    this.answer = undefined;
  }

  /** The question is no longer waiting (answered or not). */
  closeQuestion(): void {
    this.question = undefined;
  }

  ignored(): IgnoredSignal[] {
    return [...this.ignoredSignals];
  }

  // ---- signals --------------------------------------------------------------------------------

  approvePlan(m: ApprovePlan): void {
    const refused = this.reviewRefusal(m.planVersion);
    if (refused) return this.ignore({ signal: 'approvePlan', planVersion: m.planVersion, reason: refused.reason });
    this.decision = { kind: 'approve' };
  }

  revisePlan(m: RevisePlan): void {
    const refused = this.revisionRefusal(m);
    if (refused) return this.ignore({ signal: 'revisePlan', planVersion: m.planVersion, reason: refused.reason });
    const edits = m.edits ?? [];
    this.decision = { kind: 'revise', feedback: String(m.feedback ?? '').slice(0, MESSAGE_TEXT_MAX), ...(edits.length ? { edits } : {}) };
  }

  answerClarification({ answer }: AnswerClarification): void {
    const refused = this.clarificationRefusal();
    if (refused) return this.ignore({ signal: 'answerClarification', reason: refused.reason });
    this.answer = String(answer ?? '').slice(0, MESSAGE_TEXT_MAX);
  }

  // ---- updates: validator, then handler -------------------------------------------------------

  validateApproval(m: ApprovePlan): void {
    refuse(malformed(checkApprovePlan(m)) ?? this.reviewRefusal(m.planVersion), this.run.planVersion());
  }

  validateRevision(m: RevisePlan): void {
    refuse(malformed(checkRevisePlan(m)) ?? this.revisionRefusal(m), this.run.planVersion());
  }

  validateClarification(m: AnswerClarification): void {
    refuse(malformed(checkAnswerClarification(m)) ?? this.clarificationRefusal(), this.run.planVersion());
  }

  approvePlanNow(m: ApprovePlan): ReviewAnswer {
    this.approvePlan(m);
    return { planVersion: m.planVersion, decision: 'approved' };
  }

  revisePlanNow(m: RevisePlan): ReviewAnswer {
    this.revisePlan(m);
    return { planVersion: m.planVersion, decision: 'revising', nextPlanVersion: m.planVersion + 1 };
  }

  answerClarificationNow(m: AnswerClarification): { accepted: true } {
    this.answerClarification(m);
    return { accepted: true };
  }

  // ---- why a message cannot be taken now ------------------------------------------------------

  private revisionRefusal({ planVersion, edits }: RevisePlan): Refused | undefined {
    const limit = this.run.maxPlanRevisions;
    return (
      this.reviewRefusal(planVersion) ??
      (this.run.planRevisions() >= limit
        ? { code: 'revision_limit', reason: `the plan was already revised ${limit} times (maxPlanRevisions); approve it or cancel the run` }
        : undefined) ??
      this.editRefusal(edits ?? [])
    );
  }

  /** Edits that would not make a plan the run can follow (an unknown step, a cycle, none left). */
  private editRefusal(edits: PlanEdit[]): Refused | undefined {
    const plan = this.run.plan();
    if (!edits.length || !plan) return undefined;
    const applied = applyPlanEdits(plan, edits, this.run.maxSteps);
    return 'problem' in applied ? { code: 'invalid_edit', reason: applied.problem } : undefined;
  }

  private clarificationRefusal(): Refused | undefined {
    if (this.run.phase() === 'done') return { code: 'run_ended', reason: 'the run has ended' };
    if (this.question === undefined || this.answer !== undefined)
      return { code: 'no_question', reason: 'no question is waiting for an answer' };
    return undefined;
  }

  private reviewRefusal(planVersion: number): Refused | undefined {
    const phase = this.run.phase();
    const current = this.run.planVersion();
    if (phase === 'done') return { code: 'run_ended', reason: 'the run has ended' };
    if (phase === 'reviewing' && this.decision) {
      const what = this.decision.kind === 'approve' ? 'approved' : 'sent back for revision';
      return { code: 'already_decided', reason: `plan version ${current} was already ${what}` };
    }
    if (phase !== 'reviewing') return { code: 'not_reviewing', reason: `no plan is waiting for review (phase ${phase})` };
    if (planVersion !== current) return { code: 'stale_plan_version', reason: `stale: the plan under review is version ${current}` };
    return undefined;
  }

  private ignore(entry: Omit<IgnoredSignal, 'at'>): void {
    this.ignoredSignals.push({ ...entry, at: Date.now() });
    if (this.ignoredSignals.length > MAX_IGNORED_SIGNALS) this.ignoredSignals.shift();
    this.run.ignoredSignal();
  }
}
