// The research run's state: the plan and its step board, usage, notes, the review and the
// clarification being waited for. The status view the query returns is derived from it, and the
// message handlers are its methods.
import { ApplicationFailure, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Slot } from './admission';
import type {
  AnswerClarification,
  CallWait,
  Refusal,
  RefusalCode,
  ReviewAnswer,
  ApprovePlan,
  IgnoredSignal,
  PlanView,
  Grounding,
  ReportView,
  ResearchStatusView,
  RevisePlan,
  Steer,
  StepView,
} from '../../shared/messages';
import {
  checkAnswerClarification,
  checkApprovePlan,
  checkRevisePlan,
  checkSteer,
  type Checked,
  MESSAGE_TEXT_MAX,
} from '../../shared/updates';
import { ErrorType } from '../../shared/errors';
import { addUsage, durationToMs, summarize, ZERO_USAGE } from '../../shared/plain';
import type { Phase, KnowledgeScope, Plan, ResearchInput, ResearchOptions, ResearchResult, RunStatus, Usage } from '../../shared/schemas';
import { activitiesFor, type Calls } from '../proxies';
import { ResearchPhaseKey, ResearchStatusKey, ResearchStepCountKey, ResearchTenantKey } from '../search-attributes';
import { budgetSpent, type StepBudget } from './budget';
import { Waits } from '../waits';
import { Steering, steerRefusal } from './steering';

const MAX_IGNORED_SIGNALS = 20;

type Refused = { code: RefusalCode; reason: string };

/** An update sent by hand (the Temporal UI, the CLI) may not match its schema. */
function malformed(checked: Checked<unknown>): Refused | undefined {
  return checked.ok ? undefined : { code: 'invalid_message', reason: checked.error };
}

export type ReviewDecision = { kind: 'approve' } | { kind: 'revise'; feedback: string };

export class RunState {
  readonly id = workflowInfo().workflowId;
  /** The question in the user's words (the research question is the rewritten one). */
  readonly userQuestion: string;
  readonly options: ResearchOptions;
  status: RunStatus = 'running';
  phase: Phase = 'coordinating';
  usage: Usage = ZERO_USAGE;
  readonly notes: string[] = [];
  /** What the user changed while the run ran (the `steer` update). */
  readonly steering = new Steering();
  plan?: PlanView;
  report?: ReportView;
  outcome?: ResearchResult['outcome'];
  /** The coordinator's direct answer. */
  answer?: string;
  error?: string;
  /** The reviewer's decision on the plan under review; cleared when a version goes to review. */
  review?: ReviewDecision;
  clarificationQuestion?: string;
  clarificationAnswer?: string;
  /** Where knowledge_search looks (collections, session memory); undefined: no knowledge base. */
  knowledge?: KnowledgeScope;
  /** The run's place in its tenant's admission queue (TENANT_MAX_RUNS), once it asked for one. */
  slot?: Slot;
  /** The locale the coordinator settled on; until then the option's, or en-US. */
  private detectedLocale?: string;
  private readonly ignoredSignals: IgnoredSignal[] = [];
  /** Calls a worker is retrying right now, the run's and its steps'. */
  private readonly waits = new Waits();
  private deadlineAt: number | undefined;
  /** The budget shares of the steps running now (see reserveBudget). */
  private readonly reserved = new Map<string, StepBudget>();

  /** The activities, with this run's outage limit and retry settings. */
  readonly calls: Calls;
  private writeSeq = 0;
  /** The state changed since the row's last write (see startRowSync). */
  rowBehind = false;
  rowSyncStopped = false;
  rowSync?: Promise<void>;

  constructor(private readonly input: ResearchInput) {
    this.userQuestion = input.question;
    this.options = input.options;
    this.calls = activitiesFor({ maxOutage: input.options.maxOutage, retry: input.retry });
  }

  get locale(): string {
    return this.detectedLocale ?? this.options.locale ?? 'en-US';
  }

  get tenant(): string {
    return this.input.tenant;
  }

  /** Numbers the writes of the run's row, so a late one never replaces a newer one. */
  nextWriteSeq(): number {
    return ++this.writeSeq;
  }

  get sessionId(): string | undefined {
    return this.input.sessionId;
  }

  /** The tenant's limit of runs researching at once, when the API set one. */
  get admission(): ResearchInput['admission'] {
    return this.input.admission;
  }

  /** The schedule that started this run, if one did. */
  get scheduleId(): string | undefined {
    return this.input.scheduleId;
  }

  get retry(): ResearchInput['retry'] {
    return this.input.retry;
  }

  // ---- messages ----------------------------------------------------------------------------
  // Each message is a signal (an operator's, or an older caller's: what cannot be taken is ignored
  // and recorded) and an update (a validator refuses it, and the caller hears why at once).

  approvePlan(m: ApprovePlan): void {
    const refused = this.approvalRefusal(m);
    if (refused) return this.ignore({ signal: 'approvePlan', planVersion: m.planVersion, reason: refused.reason });
    this.review = { kind: 'approve' };
  }

  revisePlan(m: RevisePlan): void {
    const refused = this.revisionRefusal(m);
    if (refused) return this.ignore({ signal: 'revisePlan', planVersion: m.planVersion, reason: refused.reason });
    this.review = { kind: 'revise', feedback: String(m.feedback ?? '').slice(0, MESSAGE_TEXT_MAX) };
  }

  answerClarification({ answer }: AnswerClarification): void {
    const refused = this.clarificationRefusal();
    if (refused) return this.ignore({ signal: 'answerClarification', reason: refused.reason });
    this.clarificationAnswer = String(answer ?? '').slice(0, MESSAGE_TEXT_MAX);
  }

  validateApproval(m: ApprovePlan): void {
    this.refuse(malformed(checkApprovePlan(m)) ?? this.approvalRefusal(m));
  }

  validateRevision(m: RevisePlan): void {
    this.refuse(malformed(checkRevisePlan(m)) ?? this.revisionRefusal(m));
  }

  validateClarification(m: AnswerClarification): void {
    this.refuse(malformed(checkAnswerClarification(m)) ?? this.clarificationRefusal());
  }

  validateSteer(m: Steer): void {
    this.refuse(malformed(checkSteer(m)) ?? steerRefusal(this, m));
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

  /** A worker reports a call it retries (or that one ended): the run's page says so. */
  callWait(m: CallWait): void {
    this.waits.record(m);
    this.publish();
  }

  /** A step's calls and its budget share end with it. */
  stepEnded(step: string): void {
    this.reserved.delete(step);
    this.waits.clearStep(step);
    this.publish();
  }

  private approvalRefusal({ planVersion }: ApprovePlan): Refused | undefined {
    return this.reviewRefusal(planVersion);
  }

  private revisionRefusal({ planVersion }: RevisePlan): Refused | undefined {
    const limit = this.options.maxPlanRevisions;
    return (
      this.reviewRefusal(planVersion) ??
      ((this.plan?.revisions ?? 0) >= limit
        ? this.refusal('revision_limit', `the plan was already revised ${limit} times (maxPlanRevisions); approve it or cancel the run`)
        : undefined)
    );
  }

  private clarificationRefusal(): Refused | undefined {
    if (this.phase === 'done') return this.refusal('run_ended', 'the run has ended');
    if (this.clarificationQuestion === undefined || this.clarificationAnswer !== undefined) {
      return this.refusal('no_question', 'no question is waiting for an answer');
    }
    return undefined;
  }

  private reviewRefusal(planVersion: number): Refused | undefined {
    if (this.phase === 'done') return this.refusal('run_ended', 'the run has ended');
    if (this.phase === 'reviewing' && this.review) {
      const what = this.review.kind === 'approve' ? 'approved' : 'sent back for revision';
      return this.refusal('already_decided', `plan version ${this.plan?.version} was already ${what}`);
    }
    if (this.phase !== 'reviewing') return this.refusal('not_reviewing', `no plan is waiting for review (phase ${this.phase})`);
    if (planVersion !== this.plan?.version) {
      return this.refusal('stale_plan_version', `stale: the plan under review is version ${this.plan?.version}`);
    }
    return undefined;
  }

  private refusal(code: RefusalCode, reason: string): Refused {
    return { code, reason };
  }

  /** A validator's refusal: a failure whose details say why and which version is current. */
  private refuse(refused: Refused | undefined): void {
    if (!refused) return;
    const details: Refusal = { code: refused.code, ...(this.plan ? { currentVersion: this.plan.version } : {}) };
    throw ApplicationFailure.create({ message: refused.reason, type: ErrorType.MessageRefused, nonRetryable: true, details: [details] });
  }

  private ignore(entry: Omit<IgnoredSignal, 'at'>): void {
    this.ignoredSignals.push({ ...entry, at: Date.now() });
    if (this.ignoredSignals.length > MAX_IGNORED_SIGNALS) this.ignoredSignals.shift();
  }

  /** What the `getStatus` query returns: a copy, so no caller can change the run through it. */
  view(): ResearchStatusView {
    return {
      status: this.status,
      phase: this.phase,
      question: this.userQuestion,
      ...(this.detectedLocale ? { locale: this.detectedLocale } : {}),
      ...(this.clarificationQuestion !== undefined ? { clarificationQuestion: this.clarificationQuestion } : {}),
      ...(this.plan
        ? { plan: { ...this.plan, steps: this.plan.steps.map((s) => ({ ...s, dependsOn: [...s.dependsOn], notes: [...s.notes] })) } }
        : {}),
      usage: this.usage,
      notes: [...this.notes],
      ignoredSignals: [...this.ignoredSignals],
      ...(this.steering.version
        ? {
            steering: {
              guidance: [...this.steering.guidance],
              bannedDomains: [...this.steering.bannedDomains],
              wrappingUp: this.steering.wrappingUp,
            },
          }
        : {}),
      ...(this.report ? { report: this.report } : {}),
      ...(this.outcome ? { outcome: this.outcome } : {}),
      ...(this.answer !== undefined ? { answer: this.answer } : {}),
      ...(this.error ? { error: this.error } : {}),
    };
  }

  // ---- progress ----------------------------------------------------------------------------

  /** The run's tenant for the Temporal UI's filters, and the first phase. A run the API started
   *  carries both from its start: it upserts nothing. */
  begin(): void {
    if (this.startedWithAttributes()) return this.publish();
    upsertSearchAttributes([{ key: ResearchTenantKey, value: this.input.tenant }]);
    this.moveTo('coordinating');
  }

  private startedWithAttributes(): boolean {
    const given = workflowInfo().typedSearchAttributes;
    return (
      given.get(ResearchTenantKey) === this.input.tenant &&
      given.get(ResearchPhaseKey) === this.phase &&
      given.get(ResearchStatusKey) === this.status
    );
  }

  /** Enters a phase: search attributes for the Temporal UI's filters, details for its run page. */
  moveTo(phase: Phase, status: RunStatus = 'running'): void {
    this.phase = phase;
    this.status = status;
    upsertSearchAttributes([
      { key: ResearchPhaseKey, value: phase },
      { key: ResearchStatusKey, value: status },
    ]);
    this.publish();
  }

  /** The run page's "current details" in the Temporal UI. */
  publish(): void {
    const u = this.usage;
    const lines = [
      `**${this.status}** · phase **${this.phase}** · tokens ${u.promptTokens + u.completionTokens} · $${u.costUsd.toFixed(4)}`,
      '',
      `Question: ${summarize(this.userQuestion, 200)}`,
    ];
    const waiting = this.waits.lines();
    if (waiting.length) lines.push('', ...waiting);
    if (this.plan) {
      lines.push('', `**Plan v${this.plan.version}**: ${this.plan.title}`, '');
      for (const s of this.plan.steps) lines.push(`- **${s.status}** · ${s.id} (${s.type}, attempts ${s.attempts}): ${s.title}`);
    }
    if (this.notes.length) lines.push('', ...this.notes.map((n) => `> ${n}`));
    setCurrentDetails(lines.join('\n'));
    this.rowBehind = true;
  }

  addUsage(u: Usage): void {
    this.usage = addUsage(this.usage, u);
  }

  /** The run's usage as the request log has it at the end (it saw calls the workflow did not). */
  settleUsage(u: Usage): void {
    this.usage = u;
    this.publish();
  }

  note(text: string): void {
    this.notes.push(text);
  }

  setLocale(locale: string): void {
    this.detectedLocale = locale;
  }

  /** `deadline` counts from here: the research itself, not the time the plan waited for review. */
  startResearchClock(): void {
    const { deadline } = this.options;
    if (deadline) this.deadlineAt = Date.now() + durationToMs(deadline);
  }

  /**
   * The share of the run's budget a step attempt may spend; undefined when the run has none. What
   * is left, less what the other running steps hold, is split between this step and the steps
   * still pending, so steps in parallel cannot together spend more than the run has. The
   * deadline is the run's, for every step.
   */
  reserveBudget(stepId: string): StepBudget | undefined {
    const { maxTokens, maxCostUsd } = this.options;
    if (maxTokens === undefined && maxCostUsd === undefined && this.deadlineAt === undefined) return undefined;
    this.reserved.delete(stepId);
    const held = [...this.reserved.values()];
    const ways = 1 + this.steps.filter((s) => s.status === 'pending').length;
    const share = (limit: number | undefined, spent: number, heldBy: (b: StepBudget) => number | undefined) =>
      limit === undefined ? undefined : Math.max(0, limit - spent - held.reduce((n, b) => n + (heldBy(b) ?? 0), 0)) / ways;
    const tokens = share(maxTokens, this.usage.promptTokens + this.usage.completionTokens, (b) => b.tokens);
    const costUsd = share(maxCostUsd, this.usage.costUsd, (b) => b.costUsd);
    const budget: StepBudget = {
      ...(tokens !== undefined ? { tokens: Math.floor(tokens) } : {}),
      ...(costUsd !== undefined ? { costUsd } : {}),
      ...(this.deadlineAt !== undefined ? { deadlineAt: this.deadlineAt } : {}),
    };
    this.reserved.set(stepId, budget);
    return budget;
  }

  /** Why the research must stop (tokens, cost or time spent), or undefined. */
  budgetSpent(): string | undefined {
    return budgetSpent(this.options, this.usage, this.deadlineAt, Date.now());
  }

  /** Puts a new version of the plan on the board, every step pending. */
  showPlan(plan: Plan, revisions: number): void {
    this.plan = {
      version: (this.plan?.version ?? 0) + 1,
      title: plan.title,
      thought: summarize(plan.thought, 400),
      hasEnoughContext: plan.hasEnoughContext,
      revisions,
      revisionsLeft: this.options.maxPlanRevisions - revisions,
      steps: plan.steps.map((s) => ({
        id: s.id,
        title: summarize(s.title, 160),
        type: s.type,
        dependsOn: s.dependsOn,
        status: 'pending',
        attempts: 0,
        notes: [],
      })),
    };
    upsertSearchAttributes([{ key: ResearchStepCountKey, value: plan.steps.length }]);
  }

  /** A new plan version: the steps so far as they stand, and follow-up steps, pending. */
  extendPlan(steps: Plan['steps']): void {
    if (!this.plan) return;
    this.plan = {
      ...this.plan,
      version: this.plan.version + 1,
      steps: [
        ...this.plan.steps,
        ...steps.map((s) => ({
          id: s.id,
          title: summarize(s.title, 160),
          type: s.type,
          dependsOn: s.dependsOn,
          status: 'pending' as const,
          attempts: 0,
          notes: [],
        })),
      ],
    };
    upsertSearchAttributes([{ key: ResearchStepCountKey, value: this.plan.steps.length }]);
  }

  setReport(report: ReportView): void {
    this.report = report;
  }

  /** What the claim check found, on the report already set. */
  setGrounding(grounding: Grounding): void {
    if (this.report) this.report = { ...this.report, grounding };
  }

  /** The step board of the plan being worked on. */
  get steps(): StepView[] {
    return this.plan?.steps ?? [];
  }

  step(id: string): StepView {
    const s = this.steps.find((x) => x.id === id);
    if (!s) throw new Error(`no step ${id} on the board`);
    return s;
  }

  /** The workflow's result: ids, counts and short summaries only. */
  result(outcome: ResearchResult['outcome'], summary: string, status: ResearchResult['status'] = 'completed'): ResearchResult {
    return {
      id: this.id,
      status,
      outcome,
      locale: this.locale,
      summary: summarize(summary),
      usage: this.usage,
      ...(this.plan
        ? { planVersion: this.plan.version, steps: this.plan.steps.map((s) => ({ id: s.id, status: s.status, attempts: s.attempts })) }
        : {}),
      ...(this.report ? { references: this.report.references, removedCitations: this.report.removedCitations } : {}),
      notes: this.notes.slice(0, 10),
    };
  }
}
