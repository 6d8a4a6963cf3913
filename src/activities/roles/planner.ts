// The planner: a plan for the research question, which code repairs (src/activities/role-kit/
// plan-repair.ts) and then validates. A plan never skips research silently: `hasEnoughContext`
// stands only on a background brief that is enough. A model that gives no usable plan: one
// research step for the question as asked (src/activities/role-kit/fallbacks.ts notes it).
import { z } from 'zod';
import { cappedList, cappedText, LIMITS, PlanStepDraft } from '../../shared/llm-outputs';
import { planProblems } from '../../shared/plan-edits';
import type { Plan, Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import { count, flag, jsonPrompt, promptPart, text } from '../llm/prompt-def';
import { renderPart } from '../llm/render';
import { exampleStepTitles } from '../role-kit/prompt-copies';
import type { StoredDocument } from '../store';
import { DOC_CHARS } from '../role-kit/cited';
import { activityKey, BACKGROUND_FALLBACK_NOTE, modelGaveUp, noteCorrection, noteFallback } from '../role-kit/fallbacks';
import type { MemoryOwner } from '../../shared/memory';
import { codeRuns, OFF_TOPIC, offTopicPlan, repairPlan, type PlannerDeps } from '../role-kit/plan-repair';
import { readUserMemory } from '../role-kit/memory-block';
import { defineRole } from '../role-kit/role';
import { plural, wasWere } from '../../shared/plural';

/** The answer, which code repairs into a Plan (src/shared/schemas.ts). */
export const PlanDraft = z.object({
  title: cappedText(LIMITS.titleChars),
  thought: cappedText(LIMITS.descriptionChars).describe('Why this plan answers the question'),
  locale: cappedText(35),
  hasEnoughContext: z.boolean().describe('True only if the background already answers the question fully'),
  steps: cappedList(PlanStepDraft, LIMITS.steps),
});
export type PlanDraft = z.infer<typeof PlanDraft>;

export const PLANNER_PROMPT = jsonPrompt(
  {
    file: 'planner',
    role: 'planner',
    vars: {
      question: text,
      locale: text,
      maxSteps: count,
      processing: flag,
      background: text,
      feedback: text,
      problems: text,
      userMemory: text,
    },
    settings: ['locale', 'maxSteps', 'processing', 'userMemory'],
    untrusted: { question: 'user_message', background: 'background', feedback: 'feedback', userMemory: 'user_memory' },
  },
  // A draft that code repairs into a Plan; still named Plan.
  'Plan',
  PlanDraft,
);

/** The step titles of the prompt's example plan: a plan that repeats one may be a copy (offTopicPlan). */
const EXAMPLE_STEPS = exampleStepTitles(PLANNER_PROMPT.file, 'steps');

/** The session's memory after the background, in the planner's prompt. */
export const EARLIER_SESSION = promptPart('planner', 'earlier-session', { memory: text });

/** A background the planner may call enough: it cites this many retrieved sources and has this many characters. */
const ENOUGH_BACKGROUND = { sources: 2, chars: 300 };

export function createPlannerActivities(deps: PlannerDeps) {
  const { llm, store } = deps;
  const canRunCode = () => codeRuns(deps);

  async function planResearch(input: {
    researchId: string;
    question: string;
    locale: string;
    maxSteps: number;
    feedback: string;
    problems: string[];
    /** Whose memory the prompt holds (absent: none). */
    memoryOf?: MemoryOwner;
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
        PLANNER_PROMPT,
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
          userMemory: await readUserMemory(store, input.memoryOf),
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
    // A plan about something else (a small model's copy of the prompt's example) is never
    // researched: asked for again once with the reason, then the question is researched as asked.
    const offTopic = offTopicPlan(plan, {
      question: input.question,
      // Not the background brief: a model that copies one example may copy the brief's too.
      context: [input.feedback],
      exampleSteps: EXAMPLE_STEPS,
    });
    if (offTopic && !input.problems.some((p) => p.startsWith(OFF_TOPIC)))
      return { plan, problems: [offTopic, ...planProblems(plan, input.maxSteps)], usage };
    if (offTopic) {
      const fallback = oneStepPlan(input.question, input.locale);
      const what = 'a one-step research plan was built from the question';
      await noteFallback(store, input.researchId, 'planner', activityKey(), what, 'twice wrote a plan that is not about the question');
      return { plan: fallback, problems: planProblems(fallback, input.maxSteps), usage };
    }
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

  return { planResearch };
}

export const planner = defineRole({
  does: 'Plans the research steps; code repairs the plan (ids, dependencies, step types, count) and notes what it changed.',
  prompts: { planner: PLANNER_PROMPT },
  parts: [EARLIER_SESSION],
  activities: createPlannerActivities,
});

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
      const dropped = plan.steps.length
        ? `, and its ${plural(plan.steps.length, 'planned step')} ${wasWere(plan.steps.length)} dropped`
        : '';
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
