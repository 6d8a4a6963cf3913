// Gap reflection, after the research team: do the findings answer every part of the question? If
// not, follow-up steps, repaired by code like a plan's (new ids, known dependencies, at most
// `maxSteps`, research only without a sandbox). A model that gives no usable answer: no follow-up
// research is added, with a note.
import { z } from 'zod';
import { cappedList, cappedText, LIMITS, PlanStepDraft } from '../../shared/llm-outputs';
import { type PlanStep, type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import { count, flag, jsonPrompt, text } from '../llm/prompt-def';
import { DOC_CHARS } from '../role-kit/cited';
import { activityKey, modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { codeRuns, repairSteps, stepId, type PlannerDeps } from '../role-kit/plan-repair';
import { copiedOffTopic, exampleStepTitles, swappedExample } from '../role-kit/prompt-copies';
import { defineRole } from '../role-kit/role';

/** The answer: whether the findings answer the question, and if not, what next. */
export const GapReflection = z.object({
  answered: z.boolean().describe('True when the findings answer every part of the question'),
  gaps: cappedList(cappedText(LIMITS.gapChars), LIMITS.gaps).describe('What is still missing, one short sentence each'),
  followUpSteps: cappedList(PlanStepDraft, LIMITS.steps).describe('Research steps that close the gaps (empty when answered)'),
});
export type GapReflection = z.infer<typeof GapReflection>;

export const GAP_REFLECTION_PROMPT = jsonPrompt(
  {
    file: 'gap-reflection',
    role: 'planner',
    vars: { question: text, findings: text, maxSteps: count, existingIds: text, processing: flag },
    settings: ['maxSteps', 'processing'],
    untrusted: { question: 'user_message', findings: 'findings' },
  },
  'GapReflection',
  GapReflection,
);

/** The titles of the prompt's example follow-up steps. */
const EXAMPLE_TITLES = exampleStepTitles(GAP_REFLECTION_PROMPT.file, 'followUpSteps');

/** What the reflection reads: the question, the findings so far and the plan's step ids. */
export interface GapInput {
  researchId: string;
  question: string;
  stepKeys: string[];
  existingIds: string[];
  maxSteps: number;
}

/** Whether the findings answer the question; if not, the gaps and the follow-up steps. */
export interface GapAnswer {
  answered: boolean;
  gaps: string[];
  steps: PlanStep[];
  usage: Usage;
}

export function createGapReflectionActivities(deps: PlannerDeps) {
  const { llm, store } = deps;
  const canRunCode = () => codeRuns(deps);

  /** Do the findings of the steps that ran (and the background) answer the question? */
  async function reflectOnGaps(input: GapInput): Promise<GapAnswer> {
    const findings = await store.getDocuments(input.researchId, ['background', ...input.stepKeys]);
    const processing = await canRunCode();
    try {
      const r = await llm.structured(
        GAP_REFLECTION_PROMPT,
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
      // A follow-up that is the prompt's example with the question's subject put in is left out.
      const fresh = r.output.followUpSteps.filter(
        (s) =>
          !taken.has(stepId(s.id)) &&
          !swappedExample(s.title, EXAMPLE_TITLES, input.question) &&
          !copiedOffTopic(s.title, EXAMPLE_TITLES, input.question),
      );
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

  return { reflectOnGaps };
}

export const gapReflection = defineRole({
  does: 'After the research team: finds what the findings leave unanswered and adds follow-up steps.',
  prompts: { gapReflection: GAP_REFLECTION_PROMPT },
  parts: [],
  activities: createGapReflectionActivities,
});
