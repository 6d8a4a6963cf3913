// Plans made valid by code where it can: what the planner and gap reflection write is a draft
// (src/shared/llm-outputs.ts PlanStepDraft) whose ids, texts, types and dependencies are repaired
// here, each repair said in words for the run's notes.
import { LIMITS, type PlanStepDraft } from '../../shared/llm-outputs';
import { type Plan, type PlanStep } from '../../shared/schemas';
import { summarize } from '../../shared/plain';
import { comparable, isExample, sharesTopic, swappedExample } from './prompt-copies';
import type { Llm } from '../llm/call';
import type { Store } from '../store';
import { plural, wasWere } from '../../shared/plural';

/** What repairPlan needs of a plan the model wrote (the planner's answer, PlanDraft). */
export interface DraftPlan {
  title: string;
  thought: string;
  hasEnoughContext: boolean;
  steps: PlanStepDraft[];
}

/** What the roles that plan steps are given: the model, the store, and whether code can run. */
export interface PlannerDeps {
  llm: Llm;
  store: Store;
  /**
   * Whether processing (coder) steps can run: whether a sandbox is there for them. Absent: yes.
   * See src/activities/index.ts for how the worker answers it.
   */
  canRunCode?: () => Promise<boolean>;
}

/** Whether the plan may have processing steps: a sandbox is there (an error in asking counts as no). */
export function codeRuns(deps: Pick<PlannerDeps, 'canRunCode'>): Promise<boolean> {
  return deps.canRunCode ? deps.canRunCode().catch(() => false) : Promise.resolve(true);
}

/**
 * A draft plan made valid by code where it can be: steps cut to maxSteps, ids made valid and
 * unique, empty texts filled, processing steps turned into research without a sandbox,
 * dependencies on unknown ids (source ids, invented step ids) or on the step itself dropped, and
 * cycles broken. `repairs` says what was changed, for a note.
 */
export function repairPlan(
  draft: DraftPlan,
  opts: { question: string; locale: string; maxSteps: number; processing: boolean },
): { plan: Plan; repairs: string[] } {
  const repairs: string[] = [];
  const steps = repairSteps(draft.steps, { ...opts, taken: [], repairs });
  const title = draft.title.trim() || summarize(opts.question, 120);
  if (!draft.title.trim()) repairs.push('the empty title was filled');
  return {
    plan: { title, thought: draft.thought.trim(), locale: opts.locale, hasEnoughContext: draft.hasEnoughContext, steps },
    repairs,
  };
}

/** Draft steps made valid (see repairPlan); `taken` are ids of steps that exist already, which they may depend on. */
export function repairSteps(
  drafts: PlanStepDraft[],
  opts: { question: string; maxSteps: number; processing: boolean; taken: string[]; repairs: string[] },
): PlanStep[] {
  const { repairs } = opts;
  if (drafts.length > opts.maxSteps)
    repairs.push(
      `${plural(drafts.length - opts.maxSteps, 'step')} beyond the ${opts.maxSteps} allowed ${wasWere(drafts.length - opts.maxSteps)} cut`,
    );
  const kept = drafts.slice(0, Math.max(0, opts.maxSteps));
  const used = new Set(opts.taken);
  /** First new id of each id the model wrote, for its dependencies. */
  const renamed = new Map<string, string>();
  const steps: PlanStep[] = kept.map((d, i) => {
    const wanted = stepId(d.id) || `step-${i + 1}`;
    let id = wanted;
    for (let n = 2; used.has(id); n++) id = `${wanted.slice(0, LIMITS.stepIdChars - String(n).length - 1)}-${n}`;
    if (id !== d.id)
      repairs.push(d.id && stepId(d.id) === d.id ? `duplicate id "${d.id}" renamed "${id}"` : `id "${summarize(d.id, 40)}" became "${id}"`);
    used.add(id);
    // A dependency on a taken id means the step that has it, not this renamed one.
    if (!renamed.has(d.id) && !opts.taken.includes(d.id)) renamed.set(d.id, id);
    const title = d.title.trim() || summarize(d.description.trim() || `Step ${i + 1} of: ${opts.question}`, 120);
    const description = d.description.trim() || d.title.trim() || summarize(opts.question, LIMITS.descriptionChars);
    if (!d.title.trim() || !d.description.trim()) repairs.push(`step "${id}": an empty title or description was filled`);
    let type = d.type;
    if (type === 'processing' && !opts.processing) {
      type = 'research';
      repairs.push(`step "${id}" became a research step (no code sandbox is available)`);
    }
    return { id, title, description, type, needSearch: type === 'research' ? true : d.needSearch, dependsOn: d.dependsOn };
  });
  const known = new Set([...opts.taken, ...steps.map((s) => s.id)]);
  for (const s of steps) {
    const wanted = s.dependsOn;
    const deps = [...new Set(wanted.map((d) => renamed.get(d) ?? stepId(d)))].filter((d) => d !== s.id && known.has(d));
    const dropped = wanted.filter((d) => !deps.includes(renamed.get(d) ?? stepId(d)));
    if (dropped.length) repairs.push(`step "${s.id}": unknown dependencies dropped (${dropped.map((d) => summarize(d, 40)).join(', ')})`);
    s.dependsOn = deps;
  }
  breakCycles(steps, repairs);
  return steps;
}

/** An id as PlanStep accepts it: lowercase letters, digits and "-", at most 32, starting with a letter or digit. */
export function stepId(raw: string): string {
  return raw
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, LIMITS.stepIdChars)
    .replace(/-+$/, '');
}

/** Drops the dependencies that close a cycle: a depth-first walk in plan order, each back edge removed. */
function breakCycles(steps: PlanStep[], repairs: string[]): void {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const state = new Map<string, 'open' | 'done'>();
  const visit = (s: PlanStep) => {
    state.set(s.id, 'open');
    for (const d of [...s.dependsOn]) {
      const next = byId.get(d);
      if (!next || state.get(d) === 'done') continue;
      if (state.get(d) === 'open') {
        s.dependsOn = s.dependsOn.filter((x) => x !== d);
        repairs.push(`step "${s.id}": dependency on "${d}" dropped to break a cycle`);
      } else visit(next);
    }
    state.set(s.id, 'done');
  };
  for (const s of steps) if (!state.has(s.id)) visit(s);
}

/** How offTopicPlan's reason begins (a planner asked again knows it by it). */
export const OFF_TOPIC = 'the plan is not about the question';

/**
 * Why a plan is not about the question, if it is not: a step's title is one of the prompt's
 * example steps (`exampleSteps`, their titles) with the question's subject swapped in
 * (swappedExample), or it repeats one as a small model copies it and not one of its steps (title
 * and description) shares a word with the question or the reviewer's feedback.
 * Unsaid for texts whose words cannot be told apart (scripts without spaces) or a question with too
 * few words to compare.
 */
export function offTopicPlan(plan: Plan, about: { question: string; context: string[]; exampleSteps: string[] }): string | undefined {
  const reference = [about.question, ...about.context].join('\n');
  for (const s of plan.steps) {
    const swapped = swappedExample(s.title, about.exampleSteps, reference);
    if (swapped)
      return `${OFF_TOPIC}: its step "${summarize(s.title, 60)}" is the example's "${swapped}" with another subject put in; plan steps that research what the question asks`;
  }
  if (!plan.steps.some((s) => isExample(s.title, about.exampleSteps))) return undefined;
  if (!comparable(reference)) return undefined;
  if (plan.steps.some((s) => sharesTopic(`${s.title} ${s.description}`, reference))) return undefined;
  return `${OFF_TOPIC}: none of its steps (${plan.steps.map((s) => `"${summarize(s.title, 60)}"`).join(', ')}) shares a word with it; plan steps that research the question itself`;
}
