// Activities only the legacy step workflows call (src/workflows/legacy.ts): the search-and-
// summarise researcher and the LLM-only analyst. They go when those workflows go.
import type { StepOutput, StepTask } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { PROMPTS } from '../llm/prompts';
import type { Store } from '../store';
import { dependencyBlock, sourcesBlock, stepVars, writeCitedDocument } from './cited';

type LegacyStepInput = StepTask & { feedback: string };

export function createLegacyStepActivities(deps: { llm: Llm; store: Store }) {
  async function summarizeStep(input: LegacyStepInput & { sourceIds: string[]; searchErrors: string[] }): Promise<StepOutput> {
    const own = await deps.store.getSources(input.researchId, input.sourceIds);
    const dependencies = await dependencyBlock(deps.store, input.researchId, input.dependencyKeys);
    return writeCitedDocument(deps, {
      researchId: input.researchId,
      key: input.key,
      kind: 'step',
      prompt: PROMPTS.legacyResearcher,
      vars: {
        ...stepVars(input),
        dependencies: dependencies.text,
        feedback: input.feedback || '(none)',
        sources: sourcesBlock(own),
        searchErrors: input.searchErrors.join('\n') || '(none)',
      },
      sources: [...own, ...dependencies.sources],
      meta: { stepId: input.step.id },
    });
  }

  async function analyzeStep(input: LegacyStepInput): Promise<StepOutput> {
    const dependencies = await dependencyBlock(deps.store, input.researchId, input.dependencyKeys);
    return writeCitedDocument(deps, {
      researchId: input.researchId,
      key: input.key,
      kind: 'step',
      prompt: PROMPTS.legacyAnalyst,
      vars: { ...stepVars(input), dependencies: dependencies.text, feedback: input.feedback || '(none)' },
      sources: dependencies.sources,
      meta: { stepId: input.step.id },
    });
  }

  return { summarizeStep, analyzeStep };
}
