// The planner's activities: rewrite the question and expand it into search queries, write the
// background brief from what the searches found, make a plan that code repairs and then validates,
// and reflect on the gaps the findings leave. Each falls back (src/activities/roles/fallbacks.ts)
// when the model cannot give a usable answer, so a weak model degrades a run instead of failing it.
import { Context } from '@temporalio/activity';
import { LIMITS, type PlanDraft, type PlanStepDraft, type QueryExpansion } from '../../shared/llm-outputs';
import { planProblems, summarize, ZERO_USAGE, type Plan, type PlanStep, type StepOutput, type Usage } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { promptPart, text } from '../llm/prompt-def';
import { PROMPTS } from '../llm/prompts';
import { renderPart } from '../llm/render';
import type { Store, StoredDocument } from '../store';
import { DOC_CHARS, sourcesBlock, writeCitedDocument } from './cited';
import { modelGaveUp, noteCorrection, noteFallback } from './fallbacks';

export interface PlannerDeps {
  llm: Llm;
  store: Store;
  /**
   * Whether processing (coder) steps can run: whether a sandbox is there for them. Absent: yes.
   * See src/activities/index.ts for how the worker answers it.
   */
  canRunCode?: () => Promise<boolean>;
}

/** A background the planner may call enough: it cites this many retrieved sources and has this many characters. */
const ENOUGH_BACKGROUND = { sources: 2, chars: 300 };
/** The note writeCitedDocument leaves when it listed the sources because the model wrote no brief. */
const BACKGROUND_FALLBACK_NOTE = 'fallback/background/background';
/** The part of the rewrite's input the workflow appends after the user's question. */
const COORDINATOR_READING = "\n(Coordinator's reading:";

/** The session's memory after the background, in the planner's prompt. */
const EARLIER_SESSION = promptPart('planner', 'earlier-session', { memory: text });

export function createPlannerActivities(deps: PlannerDeps) {
  const { llm, store } = deps;
  const canRunCode = async () => (deps.canRunCode ? deps.canRunCode().catch(() => false) : true);

  async function expandQueries(input: {
    researchId: string;
    question: string;
    locale: string;
    count: number;
  }): Promise<{ expansion: QueryExpansion; usage: Usage }> {
    const [memory] = await store.getDocuments(input.researchId, ['memory']);
    try {
      const r = await llm.structured(
        PROMPTS.rewrite,
        { question: input.question, locale: input.locale, count: input.count, memory: memory?.content ?? '(no earlier questions)' },
        { researchId: input.researchId },
      );
      const queries = distinct(r.output.queries).slice(0, input.count);
      const researchQuestion = r.output.researchQuestion.trim() || userQuestion(input.question);
      return {
        expansion: { researchQuestion, queries: queries.length ? queries : fallbackQueries(researchQuestion, input.count) },
        usage: r.usage,
      };
    } catch (err) {
      if (!modelGaveUp(err)) throw err;
      const question = userQuestion(input.question);
      await noteFallback(
        store,
        input.researchId,
        'rewrite',
        activityKey(),
        'the question itself was researched, and searched for as written',
        err,
      );
      return { expansion: { researchQuestion: question, queries: fallbackQueries(question, input.count) }, usage: ZERO_USAGE };
    }
  }

  async function writeBackground(input: {
    researchId: string;
    question: string;
    locale: string;
    sourceIds: string[];
    searchErrors: string[];
  }): Promise<StepOutput> {
    const sources = await store.getSources(input.researchId, input.sourceIds);
    // A model that gives no usable brief: writeCitedDocument lists the sources instead, with a note.
    return writeCitedDocument(deps, {
      researchId: input.researchId,
      key: 'background',
      kind: 'background',
      prompt: PROMPTS.background,
      vars: {
        question: input.question,
        locale: input.locale,
        sources: sourcesBlock(sources),
        searchErrors: input.searchErrors.join('\n') || '(none)',
      },
      sources,
    });
  }

  async function planResearch(input: {
    researchId: string;
    question: string;
    locale: string;
    maxSteps: number;
    feedback: string;
    problems: string[];
  }): Promise<{ plan: Plan; problems: string[]; usage: Usage }> {
    const docs = await store.getDocuments(input.researchId, ['background', 'memory', BACKGROUND_FALLBACK_NOTE]);
    const byKey = (key: string) => docs.find((d) => d.key === key);
    const [background, memory] = [byKey('background'), byKey('memory')];
    // A brief that code listed from the sources (the model gave none) never stands in for research.
    const briefWritten = background !== undefined && byKey(BACKGROUND_FALLBACK_NOTE) === undefined;
    const processing = await canRunCode();
    let draft: PlanDraft;
    let usage: Usage;
    try {
      const r = await llm.structured(
        PROMPTS.planner,
        {
          question: input.question,
          locale: input.locale,
          maxSteps: input.maxSteps,
          processing,
          background:
            (background ? `${background.content.slice(0, DOC_CHARS)}` : '(no background could be gathered)') +
            (memory ? `\n\n${renderPart(EARLIER_SESSION, { memory: memory.content.slice(0, DOC_CHARS) })}` : ''),
          feedback: input.feedback || '(none)',
          problems: input.problems.join('; '),
        },
        { researchId: input.researchId },
      );
      draft = r.output;
      usage = r.usage;
    } catch (err) {
      if (!modelGaveUp(err)) throw err;
      const plan = oneStepPlan(input.question, input.locale);
      await noteFallback(store, input.researchId, 'planner', activityKey(), 'a one-step research plan was built from the question', err);
      return { plan, problems: planProblems(plan, input.maxSteps), usage: ZERO_USAGE };
    }
    const repaired = repairPlan(draft, { question: input.question, locale: input.locale, maxSteps: input.maxSteps, processing });
    const plan = settleContext(repaired.plan, briefWritten ? background : undefined, input.question, repaired.repairs);
    if (repaired.repairs.length) {
      await noteCorrection(
        store,
        input.researchId,
        'planner',
        activityKey(),
        `code adjusted the planner's plan: ${repaired.repairs.join('; ')}`,
      );
    }
    return { plan, problems: planProblems(plan, input.maxSteps), usage };
  }

  /**
   * Gap reflection: do the findings answer the question? If not, follow-up steps, repaired by code
   * like a plan's (new ids, known dependencies, at most `maxSteps`, research only without a sandbox).
   */
  async function reflectOnGaps(input: {
    researchId: string;
    question: string;
    stepKeys: string[];
    existingIds: string[];
    maxSteps: number;
  }): Promise<{ answered: boolean; gaps: string[]; steps: PlanStep[]; usage: Usage }> {
    const findings = await store.getDocuments(input.researchId, ['background', ...input.stepKeys]);
    const processing = await canRunCode();
    try {
      const r = await llm.structured(
        PROMPTS.gapReflection,
        {
          question: input.question,
          findings:
            findings.map((f) => `<finding key="${f.key}">\n${f.content.slice(0, DOC_CHARS)}\n</finding>`).join('\n') || '(no findings)',
          maxSteps: input.maxSteps,
          existingIds: input.existingIds.join(', ') || '(none)',
          processing,
        },
        { researchId: input.researchId },
      );
      // A follow-up under the id of a step that ran is that step again: dropped, not renamed.
      const taken = new Set(input.existingIds);
      const fresh = r.output.followUpSteps.filter((s) => !taken.has(stepId(s.id)));
      const steps = repairSteps(fresh, {
        question: input.question,
        maxSteps: input.maxSteps,
        processing,
        taken: input.existingIds,
        repairs: [],
      });
      const answered = r.output.answered || steps.length === 0;
      return { answered, gaps: r.output.gaps.map((g) => summarize(g, LIMITS.gapChars)), steps: answered ? [] : steps, usage: r.usage };
    } catch (err) {
      if (!modelGaveUp(err)) throw err;
      await noteFallback(store, input.researchId, 'gap-reflection', activityKey(), 'no follow-up research was added', err);
      return { answered: true, gaps: [], steps: [], usage: ZERO_USAGE };
    }
  }

  return { expandQueries, writeBackground, planResearch, reflectOnGaps };
}

/** Stable across the retries of one activity, distinct between activities of a run. */
function activityKey(): string {
  return Context.current().info.activityId;
}

/** The user's question out of the rewrite's input (the workflow appends the coordinator's reading). */
function userQuestion(input: string): string {
  const at = input.indexOf(COORDINATOR_READING);
  return (at >= 0 ? input.slice(0, at) : input).trim();
}

function distinct(items: string[]): string[] {
  const seen = new Set<string>();
  return items.map((q) => q.trim()).filter((q) => q && !seen.has(q.toLowerCase()) && seen.add(q.toLowerCase()));
}

const FILLER = new Set(
  'a an the of and or to in on for with by from is are was were be how what why which who when does do did has have much many'.split(' '),
);

/** Search queries made by code from a question: the question, then its content words. */
export function fallbackQueries(question: string, count: number): string[] {
  const asked = summarize(question.replace(/\s+/g, ' '), LIMITS.queryChars);
  const words = asked
    .replace(/[?!.,;:"()]/g, ' ')
    .split(/\s+/)
    .filter((w) => w && !FILLER.has(w.toLowerCase()));
  const variants = [asked, words.join(' '), words.slice(0, 4).join(' ')];
  return distinct(variants).slice(0, Math.max(1, count));
}

/** The plan code builds when the planner gave nothing usable: research the question as asked. */
export function oneStepPlan(question: string, locale: string): Plan {
  return {
    title: summarize(question, 120),
    thought: 'Fallback plan: research the question as asked.',
    locale,
    hasEnoughContext: false,
    steps: [
      {
        id: 'research',
        title: summarize(question, 120),
        description: summarize(`Find sources that answer: ${question}`, LIMITS.descriptionChars),
        type: 'research',
        needSearch: true,
        dependsOn: [],
      },
    ],
  };
}

/**
 * A draft plan made valid by code where it can be: steps cut to maxSteps, ids made valid and
 * unique, empty texts filled, processing steps turned into research without a sandbox,
 * dependencies on unknown ids (source ids, invented step ids) or on the step itself dropped, and
 * cycles broken. `repairs` says what was changed, for a note.
 */
export function repairPlan(
  draft: PlanDraft,
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
  if (drafts.length > opts.maxSteps) repairs.push(`${drafts.length - opts.maxSteps} step(s) beyond the ${opts.maxSteps} allowed were cut`);
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
function stepId(raw: string): string {
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

/** Whether the background can stand in for research: a brief that cites enough retrieved sources. */
export function backgroundIsEnough(background: StoredDocument | undefined): boolean {
  return (
    background !== undefined &&
    background.meta.listedByCode !== true &&
    new Set(background.sourceIds).size >= ENOUGH_BACKGROUND.sources &&
    background.content.trim().length >= ENOUGH_BACKGROUND.chars
  );
}

/**
 * A plan never skips research silently: `hasEnoughContext` stands only on a background that is
 * enough (then the steps it would never run are dropped), and a plan that researches has a step.
 * What was decided goes into `repairs`.
 */
function settleContext(plan: Plan, background: StoredDocument | undefined, question: string, repairs: string[]): Plan {
  if (plan.hasEnoughContext) {
    if (backgroundIsEnough(background)) {
      const dropped = plan.steps.length ? `, and its ${plan.steps.length} planned step(s) were dropped` : '';
      repairs.push(`the planner found that the background brief answers the question, so no research steps ran${dropped}`);
      return { ...plan, steps: [] };
    }
    repairs.push('the planner found the background enough, but it is missing or thin, so the question is researched');
    plan = { ...plan, hasEnoughContext: false };
  }
  if (plan.steps.length === 0) {
    repairs.push('the plan had no steps, so a research step for the question was added');
    return { ...plan, steps: oneStepPlan(question, plan.locale).steps };
  }
  return plan;
}
