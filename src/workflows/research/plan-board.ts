// The plan on the run's board: its current version and each step's status, attempts, summary and
// notes, as the status view shows them. Only these methods change it; the phases call them.
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { PlanView, StepView } from '../../shared/messages';
import { summarize } from '../../shared/plain';
import type { Plan, PlanBrief, ResearchResult } from '../../shared/schemas';
import { ResearchStepCountKey } from '../search-attributes';

/** How a step that started ended. */
export type StepEnd = 'completed' | 'failed' | 'cancelled';

const SETTLED_BADLY: ReadonlySet<string> = new Set(['failed', 'skipped', 'cancelled']);

export class PlanBoard {
  private current?: PlanView;
  /** The plan as it was put on the board (what a reviewer's edits change). */
  private shownPlan?: Plan;
  /** The background brief the plans are written from, shown with each version. */
  private shownBrief?: PlanBrief;
  /** A new plan's step count, for the run's next phase change to upsert with it (one upsert
   *  where there would be two). */
  private countForPhase?: number;

  /** The plan on the board, as the planner (or a reviewer's edits) made it. */
  plan(): Plan | undefined {
    return this.shownPlan;
  }

  /** A copy of the plan as it stands, or undefined before the first plan. */
  view(): PlanView | undefined {
    const plan = this.current;
    return plan ? { ...plan, steps: plan.steps.map((s) => ({ ...s, dependsOn: [...s.dependsOn], notes: [...s.notes] })) } : undefined;
  }

  get version(): number | undefined {
    return this.current?.version;
  }

  get title(): string | undefined {
    return this.current?.title;
  }

  get brief(): PlanBrief | undefined {
    return this.shownBrief;
  }

  /** The brief the background phase wrote: every plan version shows it. */
  showBrief(brief: PlanBrief): void {
    this.shownBrief = brief;
  }

  /** Revisions the plan on the board went through. */
  get revisions(): number {
    return this.current?.revisions ?? 0;
  }

  /** The steps as they stand (read them; change them through the methods below). */
  get steps(): readonly Readonly<StepView>[] {
    return this.current?.steps ?? [];
  }

  has(id: string): boolean {
    return this.steps.some((s) => s.id === id);
  }

  /** Steps the team may still start. */
  pendingCount(): number {
    return this.steps.filter((s) => s.status === 'pending').length;
  }

  /** Puts a new version of the plan on the board, every step pending. Its step count is upserted
   *  with the next phase change (every path from a new plan changes phase in the same activation:
   *  review, queue, research or report). */
  show(plan: Plan, revisions: number, maxRevisions: number): void {
    this.shownPlan = plan;
    this.current = {
      version: (this.current?.version ?? 0) + 1,
      title: plan.title,
      thought: summarize(plan.thought, 400),
      ...(this.shownBrief ? { brief: this.shownBrief } : {}),
      hasEnoughContext: plan.hasEnoughContext,
      revisions,
      revisionsLeft: maxRevisions - revisions,
      steps: plan.steps.map(pendingStep),
    };
    this.countForPhase = plan.steps.length;
  }

  /** The plan as an earlier execution of the run left it on the board (see CarriedRun). */
  restore(plan: Plan, version: number, revisions: number, maxRevisions: number): void {
    this.show(plan, revisions, maxRevisions);
    this.current = { ...this.current!, version };
  }

  /** The step count the next phase change upserts, once. */
  takeCountForPhase(): number | undefined {
    const n = this.countForPhase;
    this.countForPhase = undefined;
    return n;
  }

  /** A new plan version: the steps so far as they stand, and follow-up steps, pending. */
  extend(steps: Plan['steps']): void {
    if (!this.current) return;
    this.current = { ...this.current, version: this.current.version + 1, steps: [...this.current.steps, ...steps.map(pendingStep)] };
    upsertSearchAttributes([{ key: ResearchStepCountKey, value: this.current.steps.length }]);
  }

  start(id: string, at: number): void {
    Object.assign(this.step(id), { status: 'running', startedAt: at });
  }

  /** The step's child is gone, however it ended. */
  stopped(id: string, at: number): void {
    this.step(id).endedAt = at;
  }

  attempt(id: string, attempt: number): void {
    this.step(id).attempts = attempt;
  }

  noteOn(id: string, text: string): void {
    this.step(id).notes.push(text);
  }

  end(id: string, status: StepEnd, summary: string): void {
    Object.assign(this.step(id), { status, summary });
  }

  /** A step not yet started will not run. */
  skip(id: string, summary: string): void {
    Object.assign(this.step(id), { status: 'skipped', summary });
  }

  /** Every pending step will not run. */
  skipPending(summary: string): void {
    for (const s of this.steps) if (s.status === 'pending') this.skip(s.id, summary);
  }

  /** A pending step whose dependency failed or was skipped cannot run. */
  skipBlocked(): void {
    const settledBadly = (id: string) => SETTLED_BADLY.has(this.steps.find((x) => x.id === id)?.status ?? '');
    for (const s of this.steps) {
      if (s.status !== 'pending') continue;
      const blocked = s.dependsOn.find(settledBadly);
      if (blocked) this.skip(s.id, `skipped: step ${blocked} it depends on did not complete`);
    }
  }

  /** The plan's part of the workflow's result. */
  result(): Pick<ResearchResult, 'planVersion' | 'steps'> {
    const plan = this.current;
    return plan ? { planVersion: plan.version, steps: plan.steps.map((s) => ({ id: s.id, status: s.status, attempts: s.attempts })) } : {};
  }

  /** The lines of the Temporal UI's current details. */
  lines(): string[] {
    const plan = this.current;
    if (!plan) return [];
    const brief = plan.brief;
    return [
      '',
      `**Plan v${plan.version}**: ${plan.title}`,
      ...(plan.thought ? ['', `Why: ${summarize(plan.thought, 300)}`] : []),
      '',
      ...plan.steps.map(
        (s) =>
          `- **${s.status}** · ${s.id} (${s.type}, attempts ${s.attempts}): ${s.title}` +
          (s.status === 'pending' && s.description ? ` — ${summarize(s.description, 200)}` : ''),
      ),
      ...(brief
        ? ['', `Brief: ${summarize(brief.text, 300)}`, ...brief.sources.slice(0, 5).map((x) => `- [${x.n}] ${summarize(x.title, 100)}`)]
        : []),
    ];
  }

  private step(id: string): StepView {
    const s = this.current?.steps.find((x) => x.id === id);
    if (!s) throw new Error(`no step ${id} on the board`);
    return s;
  }
}

/** Characters of a step's description the view keeps. */
const DESCRIPTION_CHARS = 600;

function pendingStep(s: Plan['steps'][number]): StepView {
  return {
    id: s.id,
    title: summarize(s.title, 160),
    description: summarize(s.description, DESCRIPTION_CHARS),
    type: s.type,
    dependsOn: s.dependsOn,
    status: 'pending',
    attempts: 0,
    notes: [],
  };
}
