// The judge: does a step's stored result do what the step asked, with claims backed by sources?
// A judge that cannot give a usable verdict passes the step with a note (the run never waits on it).
import { ApplicationFailure } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { z } from 'zod';
import { cappedText, LIMITS } from '../../shared/llm-outputs';
import { type PlanStep, type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { count, jsonPrompt, text } from '../llm/prompt-def';
import type { Store } from '../store';
import { DOC_CHARS } from '../role-kit/cited';
import { modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { echoedExample, exampleTexts } from '../role-kit/prompt-copies';
import { defineRole } from '../role-kit/role';

/** The answer: passed, or what a second attempt must fix. */
export const JudgeVerdict = z.object({
  passed: z.boolean(),
  feedback: cappedText(LIMITS.feedbackChars).describe('What is missing or wrong; empty when passed'),
});
export type JudgeVerdict = z.infer<typeof JudgeVerdict>;

export const JUDGE_PROMPT = jsonPrompt(
  {
    file: 'judge',
    role: 'judge',
    vars: { question: text, stepTitle: text, stepDescription: text, result: text, citedSources: count },
    untrusted: { question: 'user_message', result: 'result' },
  },
  'JudgeVerdict',
  JudgeVerdict,
);

/** The feedback of the prompt's example verdicts. */
const EXAMPLE_FEEDBACK = exampleTexts(JUDGE_PROMPT.file, 'feedback');

export interface JudgeInput {
  researchId: string;
  key: string;
  step: PlanStep;
  question: string;
}

/** The verdict on a step's stored result. `callKey`: the model call's key within its activity,
 *  when the activity makes other calls before this one (the researcher's last turn). */
export async function judgeStep(
  deps: { llm: Llm; store: Store },
  input: JudgeInput,
  callKey?: string,
): Promise<{ verdict: JudgeVerdict; usage: Usage }> {
  const [doc] = await deps.store.getDocuments(input.researchId, [input.key]);
  if (!doc) throw ApplicationFailure.nonRetryable(`no step result stored under ${input.key}`, ErrorType.NotFound);
  const attempt = Number(input.key.split('/').at(-1)) || 1;
  let r: { output: JudgeVerdict; usage: Usage };
  try {
    r = await deps.llm.structured(
      JUDGE_PROMPT,
      {
        question: input.question,
        stepTitle: input.step.title,
        stepDescription: input.step.description,
        result: doc.content.slice(0, DOC_CHARS),
        citedSources: doc.sourceIds.length,
      },
      { researchId: input.researchId, ...(callKey ? { key: callKey } : {}) },
    );
  } catch (err) {
    if (!modelGaveUp(err)) throw err;
    const what = `step ${input.step.id} (attempt ${attempt}) passed unchecked`;
    await noteFallback(deps.store, input.researchId, 'judge', input.key, what, err);
    r = { output: { passed: true, feedback: '' }, usage: ZERO_USAGE };
  }
  // Feedback that is the prompt's example (a missing 2024 price, a claim about China) asks a rerun
  // for what the step never had to give: the step passes unchecked, as for no verdict.
  const echo = r.output.passed ? undefined : echoedExample(r.output.feedback, EXAMPLE_FEEDBACK, `${input.question}\n${doc.content}`);
  if (echo) {
    const what = `step ${input.step.id} (attempt ${attempt}) passed unchecked`;
    await noteFallback(deps.store, input.researchId, 'judge', input.key, what, `repeated its prompt's example ("${summarize(echo, 80)}")`);
    r = { output: { passed: true, feedback: '' }, usage: r.usage };
  }
  // The run's event log shows each check and its verdict (the web page's and CLI's timelines).
  await deps.store.events.append(input.researchId, [
    {
      key: `verdict:${input.key}`,
      type: 'verdict',
      data: {
        step: input.step.id,
        attempt,
        passed: r.output.passed,
        ...(r.output.feedback ? { feedback: summarize(r.output.feedback, 300) } : {}),
      },
    },
  ]);
  return { verdict: r.output, usage: r.usage };
}

export const judge = defineRole({
  does: "Checks each step's result against what the step asked; a failed step runs again with its feedback.",
  prompts: { judge: JUDGE_PROMPT },
  parts: [],
  // A research step's last researcherTurn, a processing step's finishCoderStep.
  activities: () => ({}),
  answeredIn: { activity: 'researcherTurn', module: 'src/activities/phases/researcher-turn.ts' },
});
