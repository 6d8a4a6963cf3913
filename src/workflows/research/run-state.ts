// The research run's state, in small parts that each own theirs: the plan board (plan-board.ts),
// the inbox for the reviewer's and the user's messages (review-inbox.ts), the budget (budget.ts),
// the steering (steering.ts) and the row's sync (row-sync.ts). This class holds the run's own:
// status and phase, notes, report, outcome, knowledge scope and admission slot. Every part is
// changed only through its own methods; the status view is derived from all of them.
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Slot } from './slot';
import type { NotifyWhen, RunChanges } from '../../shared/changes';
import type { CallWait, Grounding, ReportView, ResearchStatusView, Steer } from '../../shared/messages';
import { checkSteer } from '../../shared/updates';
import { durationToMs, summarize } from '../../shared/plain';
import { costText } from '../../shared/cost-text';
import type { MemoryOwner } from '../../shared/memory';
import type {
  CarriedRun,
  CarriedWait,
  Phase,
  KnowledgeScope,
  ResearchInput,
  ResearchOptions,
  ResearchResult,
  RunStatus,
  Usage,
} from '../../shared/schemas';
import { activitiesFor, type Calls } from '../proxies';
import { ResearchPhaseKey, ResearchStatusKey, ResearchStepCountKey, ResearchTenantKey } from '../search-attributes';
import type { StepBudget } from '../../shared/step-budget';
import { RunBudget } from './budget';
import { PlanBoard } from './plan-board';
import { malformed, refuse, ReviewInbox } from './review-inbox';
import { RowSync } from './row-sync';
import { Waits } from '../waits';
import { Steering, steerRefusal } from './steering-state';
import { memoryOwner, UserSaid } from './user-said';

export class RunState {
  readonly id = workflowInfo().workflowId;
  /** The question in the user's words (the research question is the rewritten one). */
  readonly userQuestion: string;
  readonly options: ResearchOptions;
  /** The activities, with this run's outage limit and retry settings. */
  readonly calls: Calls;
  readonly board = new PlanBoard();
  readonly inbox: ReviewInbox;
  readonly budget: RunBudget;
  /** What the user changed while the run ran (the `steer` update). */
  readonly steering = new Steering();
  readonly row = new RowSync();
  /** What the user said in this run: what the user's memory may learn from. */
  readonly said: UserSaid;
  private currentStatus: RunStatus = 'running';
  private currentPhase: Phase = 'coordinating';
  private readonly noted: string[] = [];
  private reportView?: ReportView;
  /** A scheduled run: what changed since the schedule's previous report. */
  private comparison?: RunChanges;
  private ended: { outcome?: ResearchResult['outcome']; answer?: string; error?: string } = {};
  private scope?: KnowledgeScope;
  private heldSlot?: Slot;
  private leaving = false;
  /** The locale the coordinator settled on; until then the option's, or en-US. */
  private detectedLocale?: string;
  /** Calls a worker is retrying right now, the run's and its steps'. */
  private readonly waits = new Waits();

  constructor(private readonly input: ResearchInput) {
    this.userQuestion = input.question;
    // A chat's question carries its earlier turns as context: only the user's own message is theirs.
    this.said = new UserSaid(input.user?.said ?? input.question, input.carried?.said);
    this.options = input.options;
    this.calls = activitiesFor({ maxOutage: input.options.maxOutage, retry: input.retry });
    this.budget = new RunBudget(input.options);
    this.inbox = new ReviewInbox({
      phase: () => this.phase,
      planVersion: () => this.board.version,
      planRevisions: () => this.board.revisions,
      maxPlanRevisions: input.options.maxPlanRevisions,
      plan: () => this.board.plan(),
      maxSteps: input.options.maxSteps,
      ignoredSignal: () => this.row.viewChanged(),
    });
    if (input.carried) this.restore(input.carried);
  }

  /** The state an earlier execution of the run carried to this one, at a long wait (new-build.ts). */
  private restore(c: CarriedRun): void {
    if (c.brief) this.board.showBrief(c.brief);
    if (c.wait.at !== 'clarification') this.board.restore(c.wait.plan, c.planVersion ?? 1, c.revisions, this.options.maxPlanRevisions);
    this.budget.add(c.usage);
    this.noted.push(...c.notes);
    this.steering.restore(c.guidance, c.bannedDomains);
    this.row.continueAfter(c.rowWrites);
    if (c.locale) this.detectedLocale = c.locale;
    if (c.knowledge) this.scope = c.knowledge;
  }

  /** What the next execution of the run carries, at `wait` (new-build.ts). */
  carry(wait: CarriedWait): CarriedRun {
    return {
      wait,
      ...(this.board.version ? { planVersion: this.board.version } : {}),
      revisions: this.board.revisions,
      ...(this.board.brief ? { brief: this.board.brief } : {}),
      ...(this.detectedLocale ? { locale: this.detectedLocale } : {}),
      ...(this.scope ? { knowledge: this.scope } : {}),
      notes: [...this.noted],
      usage: this.usage,
      said: this.said.list(),
      guidance: [...this.steering.guidance],
      bannedDomains: [...this.steering.bannedDomains],
      moves: (this.input.carried?.moves ?? 0) + 1,
      rowWrites: this.row.writes,
    };
  }

  /** The run continues as new on a newer build: what it holds (its slot) goes with it. */
  leaveForNewBuild(): void {
    this.leaving = true;
  }

  /** True once the run is continuing as new on a newer build. */
  get leftForNewBuild(): boolean {
    return this.leaving;
  }

  /** How often the run, waiting on a versioned worker, looks for a newer target build. */
  get newBuildCheckMs(): number {
    return durationToMs(this.input.retry?.newBuildCheck ?? '5m');
  }

  /** The run's input as it was started, without what an earlier execution carried. */
  get startInput(): ResearchInput {
    const { carried: _carried, ...start } = this.input;
    return start;
  }

  /** What an earlier execution carried to this one, when the run moved to a newer build. */
  get carried(): CarriedRun | undefined {
    return this.input.carried;
  }

  // ---- what the run was started with ---------------------------------------------------------

  get tenant(): string {
    return this.input.tenant;
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

  /** When the run's report_ready webhook fires: always, or (a schedule's choice) on a change only. */
  get notifyWhen(): NotifyWhen {
    return this.input.notify ?? 'always';
  }

  get retry(): ResearchInput['retry'] {
    return this.input.retry;
  }

  /** Whose memory the run's prompts hold and its learning step teaches; undefined when off. */
  get memoryOf(): MemoryOwner | undefined {
    return memoryOwner(this.input.tenant, this.input.user);
  }

  // ---- the run's own state -------------------------------------------------------------------

  get status(): RunStatus {
    return this.currentStatus;
  }

  get phase(): Phase {
    return this.currentPhase;
  }

  get locale(): string {
    return this.detectedLocale ?? this.options.locale ?? 'en-US';
  }

  setLocale(locale: string): void {
    this.detectedLocale = locale;
  }

  get usage(): Usage {
    return this.budget.usage;
  }

  addUsage(u: Usage): void {
    this.budget.add(u);
  }

  /** The run's usage as the request log has it at the end (it saw calls the workflow did not). */
  settleUsage(u: Usage): void {
    this.budget.settle(u);
    this.publish();
  }

  get notes(): readonly string[] {
    return this.noted;
  }

  note(text: string): void {
    this.noted.push(text);
  }

  get report(): ReportView | undefined {
    return this.reportView;
  }

  setReport(report: ReportView): void {
    this.reportView = report;
  }

  /** What the claim check found, on the report already set. */
  setGrounding(grounding: Grounding): void {
    if (this.reportView) this.reportView = { ...this.reportView, grounding };
  }

  get changes(): RunChanges | undefined {
    return this.comparison;
  }

  setChanges(changes: RunChanges): void {
    this.comparison = changes;
  }

  /** Where knowledge_search looks (collections, session memory); undefined: no knowledge base. */
  get knowledge(): KnowledgeScope | undefined {
    return this.scope;
  }

  useKnowledge(scope: KnowledgeScope): void {
    this.scope = scope;
  }

  /** The run's place in its tenant's admission queue (TENANT_MAX_RUNS), once it asked for one. */
  get slot(): Slot | undefined {
    return this.heldSlot;
  }

  holdSlot(slot: Slot): void {
    this.heldSlot = slot;
  }

  /** How the run ended: its outcome (and the coordinator's direct answer), or its error. */
  recordEnd(end: { outcome: ResearchResult['outcome']; answer?: string | undefined } | { error: string }): void {
    this.ended =
      'error' in end ? { error: end.error } : { outcome: end.outcome, ...(end.answer !== undefined ? { answer: end.answer } : {}) };
  }

  get error(): string | undefined {
    return this.ended.error;
  }

  // ---- messages that are not the inbox's -----------------------------------------------------

  validateSteer(m: Steer): void {
    refuse(malformed(checkSteer(m)) ?? steerRefusal(this, m), this.board.version);
  }

  /** A worker reports a call it retries (or that one ended): the run's page says so. */
  callWait(m: CallWait): void {
    this.waits.record(m);
    this.publish();
  }

  /** A step's attempt starts. A first attempt is written with the step's start; another one
   *  (after the judge) is a change of its own, which the step's new attempt may wait on for long. */
  stepAttempt(step: string, attempt: number): void {
    this.board.attempt(step, attempt);
    if (attempt > 1) this.row.viewChanged();
  }

  /** A step's calls and its budget share end with it. */
  stepEnded(step: string): void {
    this.budget.release(step);
    this.waits.clearStep(step);
    this.publish();
  }

  /** The share of the run's budget a step attempt may spend (see RunBudget.reserve). */
  reserveBudget(stepId: string): StepBudget | undefined {
    return this.budget.reserve(stepId, this.board.pendingCount());
  }

  /** Why the research must stop (tokens, cost or time spent), or undefined. */
  budgetSpent(): string | undefined {
    return this.budget.spent();
  }

  // ---- what it shows -------------------------------------------------------------------------

  /** What the `getStatus` query returns: a copy, so no caller can change the run through it. */
  view(): ResearchStatusView {
    const plan = this.board.view();
    const { outcome, answer, error } = this.ended;
    const question = this.inbox.clarificationQuestion;
    const waiting = this.waits.view();
    return {
      status: this.status,
      phase: this.phase,
      question: this.userQuestion,
      ...(this.detectedLocale ? { locale: this.detectedLocale } : {}),
      ...(question !== undefined ? { clarificationQuestion: question } : {}),
      ...(plan ? { plan } : {}),
      usage: this.usage,
      notes: [...this.noted],
      ignoredSignals: this.inbox.ignored(),
      ...(this.steering.version ? { steering: this.steering.view() } : {}),
      ...(this.reportView ? { report: this.reportView } : {}),
      ...(this.comparison ? { changes: this.comparison } : {}),
      ...(outcome ? { outcome } : {}),
      ...(answer !== undefined ? { answer } : {}),
      ...(error ? { error } : {}),
      ...(waiting.length ? { waiting } : {}),
    };
  }

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
    this.currentPhase = phase;
    this.currentStatus = status;
    const steps = this.board.takeCountForPhase();
    upsertSearchAttributes([
      { key: ResearchPhaseKey, value: phase },
      { key: ResearchStatusKey, value: status },
      ...(steps !== undefined ? [{ key: ResearchStepCountKey, value: steps }] : []),
    ]);
    this.publish();
  }

  /** The run page's "current details" in the Temporal UI; the row's sync writes the change. */
  publish(): void {
    const u = this.usage;
    const lines = [
      `**${this.status}** · phase **${this.phase}** · tokens ${u.promptTokens + u.completionTokens} · ${costText(u)}`,
      '',
      `Question: ${summarize(this.userQuestion, 200)}`,
    ];
    const waiting = this.waits.lines();
    if (waiting.length) lines.push('', ...waiting);
    lines.push(...this.board.lines());
    if (this.noted.length) lines.push('', ...this.noted.map((n) => `> ${n}`));
    setCurrentDetails(lines.join('\n'));
    this.row.changed();
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
      ...this.board.result(),
      ...(this.reportView ? { references: this.reportView.references, removedCitations: this.reportView.removedCitations } : {}),
      notes: this.noted.slice(0, 10),
    };
  }
}
