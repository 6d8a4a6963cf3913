// A run's steering (the `steer` update's state, steering.ts applies it): the guidance given, the
// domains banned, whether it is wrapping up, the steps added or edited and the pages to read; and
// the validator's reasons to refuse a message now.
import type { Refusal, Steer } from '../../shared/messages';
import type { Plan, PlanStep } from '../../shared/schemas';

/** What the validator reads of the run (run-state.ts's RunState). */
interface SteerableRun {
  status: string;
  phase: string;
  steering: Steering;
  board: { steps: readonly { id: string; status: string }[]; has(id: string): boolean };
}

/** Guidance messages a run keeps; steps a plan may grow to. */
const MAX_GUIDANCE = 10;
const MAX_BANNED = 50;
const MAX_STEPS = 12;
const MAX_PAGES = 30;
const STEERABLE_PHASES: ReadonlySet<string> = new Set(['coordinating', 'planning', 'reviewing', 'queued', 'researching']);

export class Steering {
  private readonly guidanceGiven: string[] = [];
  private readonly banned: string[] = [];
  private wrapping = false;
  /** Steps the user added, by id: the team takes them from here. */
  private readonly addedSteps = new Map<string, PlanStep>();
  /** New descriptions of steps not yet started. */
  private readonly edits = new Map<string, string>();
  /** Pages the user asked the run to read, and the step added to read each batch. */
  private readonly pages: string[] = [];
  private readonly pagesForStep = new Map<string, string[]>();
  /** Bumped at every change, so the team's wait wakes up. */
  private changes = 0;

  get version(): number {
    return this.changes;
  }

  get guidance(): readonly string[] {
    return this.guidanceGiven;
  }

  get bannedDomains(): readonly string[] {
    return this.banned;
  }

  get wrappingUp(): boolean {
    return this.wrapping;
  }

  get pageCount(): number {
    return this.pages.length;
  }

  /** A step the user added, by id. */
  added(id: string): PlanStep | undefined {
    return this.addedSteps.get(id);
  }

  /** The pages a step added to read them must read before its first turn. */
  pagesFor(stepId: string): string[] | undefined {
    return this.pagesForStep.get(stepId);
  }

  /** The plan as steered: the user's steps added, the edited descriptions in place. */
  apply(plan: Plan): Plan {
    if (!this.addedSteps.size && !this.edits.size) return plan;
    const steps = [...plan.steps, ...[...this.addedSteps.values()].filter((a) => !plan.steps.some((s) => s.id === a.id))];
    return { ...plan, steps: steps.map((s) => this.step(s)) };
  }

  /** A step with the user's new description, if it has one. */
  step(s: PlanStep): PlanStep {
    const description = this.edits.get(s.id);
    return description ? { ...s, description } : s;
  }

  view(): { guidance: string[]; bannedDomains: string[]; wrappingUp: boolean } {
    return { guidance: [...this.guidanceGiven], bannedDomains: [...this.banned], wrappingUp: this.wrapping };
  }

  /** What an earlier execution of the run was given before research began (see CarriedRun). */
  restore(guidance: readonly string[], banned: readonly string[]): void {
    this.guidanceGiven.push(...guidance);
    this.banned.push(...banned);
    if (guidance.length || banned.length) this.changes++;
  }

  // ---- changes (each one bumps the version first) ----------------------------------------------

  /** A steering message arrived: the team's wait wakes up. */
  changed(): void {
    this.changes++;
  }

  addGuidance(text: string): void {
    this.guidanceGiven.push(text);
  }

  ban(domains: string[]): void {
    this.banned.push(...[...new Set(domains)].filter((d) => !this.banned.includes(d)));
  }

  wrapUp(): void {
    this.wrapping = true;
  }

  addStep(step: PlanStep): void {
    this.addedSteps.set(step.id, step);
  }

  edit(stepId: string, description: string): void {
    this.edits.set(stepId, description);
  }

  /** Pages not asked for before, from `urls`. */
  freshPages(urls: string[]): string[] {
    return [...new Set(urls)].filter((u) => !this.pages.includes(u));
  }

  /** A step added to read pages the user named. */
  addPagesStep(step: PlanStep, urls: string[]): void {
    this.pages.push(...urls);
    this.addStep(step);
    this.pagesForStep.set(step.id, urls);
  }
}

type Refused = { code: Refusal['code']; reason: string };

/** Why this steering message cannot be taken now, or undefined. */
export function steerRefusal(run: SteerableRun, m: Steer): Refused | undefined {
  if (run.status !== 'running' && run.status !== 'awaiting_review')
    return { code: 'run_ended', reason: `the run has ended (${run.status})` };
  if (!STEERABLE_PHASES.has(run.phase))
    return { code: 'not_researching', reason: `the run is ${run.phase}: there is nothing left to steer` };
  const steering = run.steering;
  if (m.kind === 'guidance') {
    return steering.guidance.length >= MAX_GUIDANCE
      ? { code: 'too_much_guidance', reason: `a run takes at most ${MAX_GUIDANCE} guidance messages` }
      : undefined;
  }
  if (m.kind === 'banDomains') {
    return steering.bannedDomains.length + m.domains.length > MAX_BANNED
      ? { code: 'too_many_bans', reason: `a run bans at most ${MAX_BANNED} domains` }
      : undefined;
  }
  if (run.phase !== 'researching')
    return { code: 'not_researching', reason: `${m.kind} needs the research under way; the run is ${run.phase}` };
  if (steering.wrappingUp) return { code: 'already_wrapping_up', reason: 'the run is already wrapping up' };
  if (m.kind === 'wrapUp') return undefined;
  if (m.kind === 'mustRead') {
    if (steering.pageCount + m.urls.length > MAX_PAGES)
      return { code: 'too_many_pages', reason: `a run reads at most ${MAX_PAGES} pages the user names` };
    if (m.urls.length && run.board.steps.length >= MAX_STEPS)
      return { code: 'too_many_steps', reason: `a plan has at most ${MAX_STEPS} steps` };
    return undefined;
  }
  if (m.kind === 'addStep') {
    if (run.board.has(m.step.id)) return { code: 'duplicate_step', reason: `the plan already has a step ${m.step.id}` };
    if (run.board.steps.length >= MAX_STEPS) return { code: 'too_many_steps', reason: `a plan has at most ${MAX_STEPS} steps` };
    const unknown = (m.step.dependsOn ?? []).find((d) => !run.board.has(d));
    return unknown ? { code: 'unknown_step', reason: `step ${m.step.id} depends on ${unknown}, which the plan does not have` } : undefined;
  }
  const step = run.board.steps.find((s) => s.id === m.stepId);
  if (!step) return { code: 'unknown_step', reason: `the plan has no step ${m.stepId}` };
  if (step.status !== 'pending')
    return { code: 'step_not_pending', reason: `step ${m.stepId} is ${step.status}: only a step not yet started can change` };
  return undefined;
}
