// Child workflows for plan steps. Until the ReAct researcher and the sandboxed coder land, a
// researcher searches and summarises, and a coder analyses the results it depends on.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { StepOutput } from '../activities/research';
import { failureMessage } from '../shared/errors';
import type { PlanStep } from '../shared/schemas';

const { webSearch } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});
const { summarizeStep, analyzeStep } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  // LLM activities heartbeat every few seconds: a dead worker's call is retried after this.
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

export interface StepInput {
  researchId: string;
  question: string;
  locale: string;
  step: PlanStep;
  attempt: number;
  /** Reflection feedback on the previous attempt; empty on the first. */
  feedback: string;
  /** Document keys of the accepted results of the steps this one depends on. */
  dependencyKeys: string[];
}

export function stepKey(stepId: string, attempt: number): string {
  return `step/${stepId}/${attempt}`;
}

export async function researcherWorkflow(input: StepInput): Promise<StepOutput> {
  const queries = input.step.needSearch ? [input.step.title, input.step.description.slice(0, 120)] : [];
  const settled = await Promise.allSettled(
    queries.map((query) => webSearch.executeWithOptions({ summary: `search: ${query.slice(0, 80)}` }, [{ researchId: input.researchId, query }])),
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
  return summarizeStep.executeWithOptions({ summary: `researcher: findings for ${input.step.id} (attempt ${input.attempt})` }, [
    {
      researchId: input.researchId,
      key: stepKey(input.step.id, input.attempt),
      question: input.question,
      locale: input.locale,
      step: input.step,
      sourceIds,
      dependencyKeys: input.dependencyKeys,
      feedback: input.feedback,
      searchErrors,
    },
  ]);
}

export async function coderWorkflow(input: StepInput): Promise<StepOutput> {
  return analyzeStep.executeWithOptions({ summary: `coder: analysis for ${input.step.id} (attempt ${input.attempt})` }, [
    {
      researchId: input.researchId,
      key: stepKey(input.step.id, input.attempt),
      question: input.question,
      locale: input.locale,
      step: input.step,
      dependencyKeys: input.dependencyKeys,
      feedback: input.feedback,
    },
  ]);
}
