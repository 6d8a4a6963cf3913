// The coder child workflow: the model writes a Python program for the step, the sandbox runs it
// (on its own queue), and a failed run goes back to the model with its error, at most
// maxCodeAttempts programs; then the output becomes the step's cited findings, judged by the
// same activity.
import type { SandboxResult } from '../activities/sandbox';
import { addUsage, stepTask, ZERO_USAGE } from '../shared/plain';
import type { StepInput, StepOutput } from '../shared/schemas';
import { stepBudgetSpent } from '../shared/step-budget';
import { activitiesFor, type Calls } from './proxies';
import { watchStepWaits } from './waits';

type Program = { code: string; explanation: string };
type FailedRun = { code: string; status: SandboxResult['status']; message: string; stderr: string };

export async function coderWorkflow(input: StepInput): Promise<StepOutput> {
  watchStepWaits(input.step.id, input.step.title);
  const { llm, runCode } = activitiesFor(input);
  const maxAttempts = input.maxCodeAttempts ?? 3;
  let usage = ZERO_USAGE;
  let previous: FailedRun | undefined;
  let draft: Program = { code: '', explanation: '' };
  let run: SandboxResult | undefined;
  let programs = 0;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    // A fix is one more model call: not when the budget the run had left is spent.
    if (previous && stepBudgetSpent(input.budget, usage, Date.now())) break;
    const written = await writeProgram(llm, input, attempt, previous);
    usage = addUsage(usage, written.usage);
    // No usable program from the model (its fallback is noted): the findings say what ran, if anything.
    if (written.gaveUp) break;
    draft = written;
    // Sandbox run ids stay unique across reflection attempts of the step: attempt * 100 + program.
    run = await runCode(`sandbox ${input.step.id}: program ${attempt}`, {
      researchId: input.researchId,
      stepId: input.step.id,
      attempt: input.attempt * 100 + attempt,
      code: written.code,
      files: written.files,
    });
    programs++;
    if (run.status === 'ok') break;
    previous = { code: written.code, status: run.status, message: run.message, stderr: run.stderr };
  }
  const out = await writeFindings(llm, input, draft, run, programs);
  return { ...out, usage: addUsage(usage, out.usage) };
}

/** The step's program, or with `previous` a fix of the one that failed. */
function writeProgram(llm: Calls['llm'], input: StepInput, attempt: number, previous: FailedRun | undefined) {
  return llm.writeCode.executeWithOptions({ summary: `coder ${input.step.id}: program ${attempt}${previous ? ' (fix)' : ''}` }, [
    {
      researchId: input.researchId,
      question: input.question,
      locale: input.locale,
      step: input.step,
      dependencyKeys: input.dependencyKeys,
      feedback: input.feedback,
      ...(previous ? { previous } : {}),
    },
  ]);
}

/** The last program's output as the step's cited findings (or, when none ran, what could not be
 *  computed), judged in the same activity. */
function writeFindings(llm: Calls['llm'], input: StepInput, draft: Program, run: SandboxResult | undefined, programs: number) {
  return llm.finishCoderStep.executeWithOptions({ summary: `coder ${input.step.id}: findings (${run?.status ?? 'no program'})` }, [
    {
      ...stepTask(input),
      code: draft.code,
      explanation: draft.explanation,
      run,
      attempts: programs,
      // Judged here, the findings need no judge activity of the research workflow.
      judge: true,
    },
  ]);
}
