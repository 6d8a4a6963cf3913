// A processing step's end in one activity: its findings written up from what the program printed
// (the coder-results role) and, asked to, the judge's verdict on them (the judge role): one
// activity task and one workflow task of the research workflow fewer per processing step.
import { type StepOutput } from '../../shared/schemas';
import { addUsage } from '../../shared/plain';
import type { Llm } from '../llm/call';
import type { Store } from '../store';
import { writeCoderFindings, type FinishCoderInput } from '../roles/coder-results';
import { judgeStep } from '../roles/judge';

export function createCoderStepActivities(deps: { llm: Llm; store: Store }) {
  return { finishCoderStep: (input: FinishCoderInput) => finishCoderStep(deps, input) };
}

/** The findings, then the verdict unless the user asked the run to wrap up (the run accepts the step unjudged then). */
async function finishCoderStep(deps: { llm: Llm; store: Store }, input: FinishCoderInput): Promise<StepOutput> {
  const out = await writeCoderFindings(deps, input);
  if (!input.judge || (await deps.store.events.steered(input.researchId, 'wrapUp'))) return out;
  const { researchId, key, step, question } = input;
  const judged = await judgeStep(deps, { researchId, key, step, question }, 'judge');
  return { ...out, usage: addUsage(out.usage, judged.usage), verdict: judged.verdict };
}
