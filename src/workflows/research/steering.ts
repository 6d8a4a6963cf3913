// Steering a running research (the `steer` update): guidance that every later model call of the
// run receives, a wrap-up (running steps answer with what they have, pending ones are skipped, the
// report is written), and changes to the steps not yet started (add, drop, edit). The validator
// refuses what cannot be done now, with the reason; the handler applies the change, stores the
// guidance before it answers (so the next call reads it), and tells the running steps to wrap up.
import { getExternalWorkflowHandle, isCancellation } from '@temporalio/workflow';
import type { Refusal, Steer, SteerAnswer } from '../../shared/messages';
import { checkSteer } from '../../shared/updates';
import { summarize } from '../../shared/plain';
import type { Plan, PlanStep } from '../../shared/schemas';
import { knowledgeSignal, wrapUpSignal } from '../messages';
import type { RunState } from './run-state';

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
export function steerRefusal(run: RunState, m: Steer): Refused | undefined {
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

/** Applies a validated steering message. */
export async function steer(run: RunState, message: Steer): Promise<SteerAnswer> {
  const checked = checkSteer(message); // the validator passed it; this fills the defaults
  if (!checked.ok) throw new Error(`a steering message the validator refused: ${checked.error}`);
  const m = checked.value;
  const steering = run.steering;
  steering.changed();
  if (m.kind === 'wrapUp') await wrapUp(run);
  else if (m.kind === 'mustRead') await mustRead(run, m.urls, m.collections);
  else change(run, m);
  // Stored before the answer: the next model call reads the guidance and the bans.
  await run.calls.localStore.recordSteering.executeWithOptions({ summary: `store: steer ${m.kind}` }, [
    {
      researchId: run.id,
      seq: steering.version,
      kind: m.kind,
      summary: run.notes.at(-1) ?? m.kind,
      ...(m.kind === 'guidance' ? { guidance: m.text } : {}),
      ...(m.kind === 'banDomains' ? { bannedDomains: [...steering.bannedDomains] } : {}),
    },
  ]);
  run.publish();
  return { kind: m.kind, accepted: true, ...(run.board.version !== undefined ? { planVersion: run.board.version } : {}) };
}

/** The changes made at once, with nothing to wait for. */
function change(run: RunState, m: Exclude<Steer, { kind: 'wrapUp' | 'mustRead' }>): void {
  const steering = run.steering;
  switch (m.kind) {
    case 'guidance':
      steering.addGuidance(m.text);
      run.said.heard('steering', m.text);
      run.note(`Guidance from the user: "${summarize(m.text, 300)}"`);
      break;
    case 'banDomains': {
      steering.ban(m.domains);
      run.note(`The user banned ${m.domains.join(', ')}: no search result, page or source from there is used.`);
      break;
    }
    case 'addStep': {
      const step: PlanStep = m.step;
      steering.addStep(step);
      run.board.extend([step]);
      run.note(`The user added step ${step.id}: ${summarize(step.title, 160)}`);
      break;
    }
    case 'dropStep':
      run.board.skip(m.stepId, 'skipped: dropped by the user');
      run.note(`The user dropped step ${m.stepId}.`);
      break;
    case 'editStep':
      steering.edit(m.stepId, m.description);
      run.note(`The user changed step ${m.stepId}: "${summarize(m.description, 200)}"`);
      break;
  }
}

/**
 * Pending steps are skipped and the running ones told to answer with what they have. Not async:
 * steer awaits the signals' promise itself, so the steering record follows them with no extra turn
 * of the event loop, as when steer sent them itself.
 */
function wrapUp(run: RunState): Promise<void[]> {
  run.steering.wrapUp();
  run.note('The user asked to wrap up: the report is written from what was found so far.');
  run.board.skipPending('skipped: the user asked to wrap up');
  return Promise.all(run.board.steps.filter((s) => s.status === 'running').map((s) => tellToWrapUp(`${run.id}/step/${s.id}`)));
}

/**
 * Pages to read become a step of their own, which reads them before its first turn (so they are
 * read whatever the running steps are doing); collections join the run's knowledge base, and the
 * running researchers search them from their next round.
 */
async function mustRead(run: RunState, urls: string[], collections: string[]): Promise<void> {
  const steering = run.steering;
  const fresh = steering.freshPages(urls);
  const said: string[] = [];
  if (fresh.length) {
    const step: PlanStep = {
      id: `pages-${steering.version}`,
      title: 'Pages the user asked to read',
      description: `Read the pages the user named and report what they say about the question: ${fresh.join(' ')}`,
      type: 'research',
      needSearch: true,
      dependsOn: [],
    };
    steering.addPagesStep(step, fresh);
    run.board.extend([step]);
    said.push(`to read ${fresh.length} page(s) (step ${step.id})`);
  }
  if (collections.length) {
    const known = run.knowledge?.collectionIds ?? [];
    const sessionId = run.knowledge?.sessionId;
    const knowledge = { tenant: run.tenant, collectionIds: [...new Set([...known, ...collections])], ...(sessionId ? { sessionId } : {}) };
    run.useKnowledge(knowledge);
    const running = run.board.steps.filter((s) => s.status === 'running' && s.type === 'research');
    await Promise.all(running.map((s) => tell(`${run.id}/step/${s.id}`, (h) => h.signal(knowledgeSignal, { knowledge }))));
    said.push(`to search collection(s) ${collections.join(', ')}`);
  }
  run.note(`The user asked the run ${said.join(' and ')}.`);
}

/** A step that ended meanwhile has nothing to wrap up. */
async function tellToWrapUp(workflowId: string): Promise<void> {
  await tell(workflowId, (h) => h.signal(wrapUpSignal));
}

/** Signals a step's child; one that ended meanwhile needs nothing. */
async function tell(workflowId: string, send: (h: ReturnType<typeof getExternalWorkflowHandle>) => Promise<void>): Promise<void> {
  try {
    await send(getExternalWorkflowHandle(workflowId));
  } catch (err) {
    if (isCancellation(err)) throw err;
  }
}
