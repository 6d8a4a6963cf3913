// The step workflows' earlier forms, kept only so that executions started before their
// replacements (and closed ones still inside the namespace's retention, whose queries replay)
// replay unchanged: the search-and-summarise researcher (before patch 'react-researcher') and the
// LLM-only analyst (before patch 'sandbox-coder'). test/histories/*-v1.json replay them.
//
// Removal, in two deploys (Temporal's patching steps):
// 1. When no execution started before the patch is open or retained, i.e. retention has passed
//    since the last such run closed (`temporal workflow list --query 'StartTime < "<deploy time>"'`
//    finds none): replace `patched(id)` with `deprecatePatch(id)` in researcher.ts and coder.ts,
//    delete this file, the activities in src/activities/roles/legacy.ts, the prompts researcher.md
//    and analyst.md, and the -v1 histories.
// 2. When no execution started before deploy 1 is open or retained: delete the deprecatePatch calls.
import { failureMessage } from '../shared/errors';
import { stepTask } from '../shared/plain';
import type { StepInput, StepOutput } from '../shared/schemas';
import { activitiesFor } from './proxies';

/** The search-and-summarise researcher. */
export async function legacyResearcher(input: StepInput): Promise<StepOutput> {
  const { llm, webSearch } = activitiesFor(input);
  const queries = input.step.needSearch ? [input.step.title, input.step.description.slice(0, 120)] : [];
  const settled = await Promise.allSettled(
    queries.map((query) => webSearch(`search: ${query.slice(0, 80)}`, { researchId: input.researchId, query })),
  );
  const sourceIds: string[] = [];
  const searchErrors: string[] = [];
  for (const r of settled) {
    if (r.status === 'fulfilled') {
      for (const s of r.value.results) if (!sourceIds.includes(s.sourceId)) sourceIds.push(s.sourceId);
    } else {
      searchErrors.push(failureMessage(r.reason));
    }
  }
  return llm.summarizeStep.executeWithOptions({ summary: `researcher: findings for ${input.step.id} (attempt ${input.attempt})` }, [
    { ...legacyStepInput(input), sourceIds, searchErrors },
  ]);
}

/** The LLM-only analyst. */
export async function legacyAnalyst(input: StepInput): Promise<StepOutput> {
  const { llm } = activitiesFor(input);
  return llm.analyzeStep.executeWithOptions({ summary: `coder: analysis for ${input.step.id} (attempt ${input.attempt})` }, [
    legacyStepInput(input),
  ]);
}

function legacyStepInput(input: StepInput) {
  return {
    ...stepTask(input),
    feedback: input.feedback,
  };
}
