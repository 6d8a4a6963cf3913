// One researcher step run on its own (the researcher child workflow, started by the test), as the
// workflow tests that look at a step's tool use run it.
import { randomUUID } from 'node:crypto';
import type { PlanStep, StepInput, StepOutput } from '../../src/shared/schemas';
import type { Harness } from './harness';

/** Runs the step to its end; `question` and the step are the test's, the rest defaults. */
export async function runResearcherStep(
  h: Harness,
  input: { question: string; step: PlanStep } & Partial<Omit<StepInput, 'researchId'>>,
  prefix = 'researcher',
): Promise<{ id: string; out: StepOutput }> {
  const id = `${prefix}-${randomUUID()}`;
  const full: StepInput = {
    researchId: id,
    locale: 'en-US',
    attempt: 1,
    feedback: '',
    dependencyKeys: [],
    maxToolRounds: 8,
    ...input,
  };
  const out = (await h.client.workflow.execute('researcherWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: id,
    args: [full],
  })) as StepOutput;
  return { id, out };
}
