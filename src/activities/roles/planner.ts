// The planner's activities: rewrite the question and expand it into search queries, write the
// background brief from what the searches found, and make a plan that code then validates.
import type { QueryExpansion } from '../../shared/llm-outputs';
import { planProblems, summarize, type Plan, type PlanStep, type StepOutput, type Usage } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { PROMPTS } from '../llm/prompts';
import type { Store } from '../store';
import { DOC_CHARS, sourcesBlock, writeCitedDocument } from './cited';

export function createPlannerActivities(deps: { llm: Llm; store: Store }) {
  const { llm, store } = deps;

  async function expandQueries(input: {
    researchId: string;
    question: string;
    locale: string;
    count: number;
  }): Promise<{ expansion: QueryExpansion; usage: Usage }> {
    const [memory] = await store.getDocuments(input.researchId, ['memory']);
    const r = await llm.structured(
      PROMPTS.rewrite,
      { question: input.question, locale: input.locale, count: input.count, memory: memory?.content ?? '(no earlier questions)' },
      { researchId: input.researchId },
    );
    return { expansion: { ...r.output, queries: r.output.queries.slice(0, input.count) }, usage: r.usage };
  }

  async function writeBackground(input: {
    researchId: string;
    question: string;
    locale: string;
    sourceIds: string[];
    searchErrors: string[];
  }): Promise<StepOutput> {
    const sources = await store.getSources(input.researchId, input.sourceIds);
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
    const [background, memory] = await store.getDocuments(input.researchId, ['background', 'memory']);
    const r = await llm.structured(
      PROMPTS.planner,
      {
        question: input.question,
        locale: input.locale,
        maxSteps: input.maxSteps,
        background:
          (background ? `${background.content.slice(0, DOC_CHARS)}` : '(no background could be gathered)') +
          (memory ? `\n\nEarlier in this session (the question may build on it):\n${memory.content.slice(0, DOC_CHARS)}` : ''),
        feedback: input.feedback || '(none)',
        problems: input.problems.length ? `Your previous plan was invalid: ${input.problems.join('; ')}. Fix these problems.` : '',
      },
      { researchId: input.researchId },
    );
    return { plan: r.output, problems: planProblems(r.output, input.maxSteps), usage: r.usage };
  }

  /**
   * Gap reflection: do the findings answer the question? If not, follow-up steps, checked by code
   * (new ids, known dependencies, at most `maxSteps`); a step that fails the checks is dropped.
   */
  async function reflectOnGaps(input: {
    researchId: string;
    question: string;
    stepKeys: string[];
    existingIds: string[];
    maxSteps: number;
  }): Promise<{ answered: boolean; gaps: string[]; steps: PlanStep[]; usage: Usage }> {
    const findings = await store.getDocuments(input.researchId, ['background', ...input.stepKeys]);
    const r = await llm.structured(
      PROMPTS.gapReflection,
      {
        question: input.question,
        findings:
          findings.map((f) => `<finding key="${f.key}">\n${f.content.slice(0, DOC_CHARS)}\n</finding>`).join('\n') || '(no findings)',
        maxSteps: input.maxSteps,
        existingIds: input.existingIds.join(', ') || '(none)',
      },
      { researchId: input.researchId },
    );
    const known = new Set(input.existingIds);
    const steps: PlanStep[] = [];
    for (const s of r.output.followUpSteps) {
      if (steps.length >= input.maxSteps || known.has(s.id) || !s.dependsOn.every((d) => known.has(d))) continue;
      steps.push(s);
      known.add(s.id);
    }
    const answered = r.output.answered || steps.length === 0;
    return { answered, gaps: r.output.gaps.slice(0, 10).map((g) => summarize(g, 300)), steps: answered ? [] : steps, usage: r.usage };
  }

  return { expandQueries, writeBackground, planResearch, reflectOnGaps };
}
