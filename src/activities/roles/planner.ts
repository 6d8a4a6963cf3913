// The planner's activities: rewrite the question and expand it into search queries, write the
// background brief from what the searches found, and make a plan that code then validates.
import type { QueryExpansion } from '../../shared/llm-outputs';
import { planProblems, type Plan, type StepOutput, type Usage } from '../../shared/schemas';
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

  return { expandQueries, writeBackground, planResearch };
}
