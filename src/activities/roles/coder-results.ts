// The coder's findings: what the step's program printed (and the charts and files it kept) written
// up by the model, keeping only the source ids of the data it was given; the program itself goes
// below, folded. The activity that also has the judge look at them is src/activities/phases/coder-step.ts.
import { citedSourceIds, keepKnownSourceIds } from '../../shared/citations';
import { CitedText } from '../../shared/llm-outputs';
import { type StepOutput, type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE, type StepTask } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { count, flag, jsonPrompt, stepVarShape, text } from '../llm/prompt-def';
import type { SandboxResult } from '../sandbox';
import type { Store } from '../store';
import { activityKey, modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { defineRole } from '../role-kit/role';
import { dependencyFiles, filesBlock } from '../role-kit/step-files';
import { plural } from '../../shared/plural';

export const CODER_RESULTS_PROMPT = jsonPrompt(
  {
    file: 'coder-results',
    role: 'coder',
    vars: { ...stepVarShape, explanation: text, ran: flag, runMessage: text, attempts: count, output: text, dependencies: text },
    settings: ['locale'],
    untrusted: { question: 'user_message', output: 'output', dependencies: 'dependencies' },
  },
  'CodeFindings',
  CitedText,
);

export type FinishCoderInput = StepTask & {
  code: string;
  explanation: string;
  /** The last program's run; none when the model wrote no usable program. */
  run?: SandboxResult | undefined;
  attempts: number;
  /** Judge the findings too, unless the user asked the run to wrap up (the run accepts the step
   *  unjudged then). */
  judge?: boolean;
};

export const coderResults = defineRole({
  does: "Writes a processing step's findings from what its program printed and kept.",
  prompts: { coderResults: CODER_RESULTS_PROMPT },
  parts: [],
  activities: () => ({}),
  answeredIn: { activity: 'finishCoderStep', module: 'src/activities/phases/coder-step.ts' },
});

/** The step's findings written up and saved: by the model, or by code when no program ran or the
 *  model could not write them up (noted as a fallback). */
export async function writeCoderFindings(deps: { llm: Llm; store: Store }, input: FinishCoderInput): Promise<StepOutput> {
  const run = input.run;
  if (!run) return saveFindings(deps.store, input, notComputed(input), `"${input.step.title}" was not computed.`, ZERO_USAGE);
  try {
    const written = await askFindings(deps, input, run);
    return saveFindings(deps.store, input, written.text, written.summary, written.usage, run);
  } catch (err) {
    if (!modelGaveUp(err)) throw err;
    const what = `the findings of "${input.step.title}" give its program's output as it printed it`;
    await noteFallback(deps.store, input.researchId, 'coder', activityKey(), what, err);
    const summary = `"${input.step.title}": ${run.status === 'ok' ? 'its program ran' : 'its program failed'}; its output is quoted as printed.`;
    return saveFindings(deps.store, input, printedOutput(input, run), summary, ZERO_USAGE, run);
  }
}

/** What a step whose model wrote no usable program could not compute, said by code. */
function notComputed(input: FinishCoderInput): string {
  return `This processing step was not computed: no usable program could be written for it. What it was to compute: ${input.step.description.trim() || input.step.title}`;
}

/** A run's output as the findings, by code: the outcome, what the program printed, and the error when it failed. */
function printedOutput(input: FinishCoderInput, run: SandboxResult): string {
  const outcome =
    run.status === 'ok'
      ? `The step's program ran (${input.explanation.trim() || 'no explanation given'}). What it printed:`
      : `The step's program failed after ${plural(input.attempts, 'attempt')} (${run.status}: ${run.message}), so its results are incomplete. What it printed:`;
  const printed = `${run.stdout.trim() ? run.stdout.slice(0, PRINTED_CHARS) : '(nothing)'}${run.stdout.length > PRINTED_CHARS || run.stdoutTruncated ? '\n[output truncated]' : ''}`;
  // A fence longer than any run of backticks the output holds.
  const fence = '`'.repeat(Math.max(3, ...[...printed.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `${outcome}\n\n${fence}text\n${printed}\n${fence}`;
}

/** How much of a program's output the findings code writes may quote. */
const PRINTED_CHARS = 4_000;

async function askFindings(deps: { llm: Llm; store: Store }, input: FinishCoderInput, run: SandboxResult) {
  const files = await dependencyFiles(deps.store, input.researchId, input.dependencyKeys);
  const known = new Set(files.flatMap((f) => f.sourceIds));
  const r = await deps.llm.structured(
    CODER_RESULTS_PROMPT,
    {
      question: input.question,
      locale: input.locale,
      stepTitle: input.step.title,
      stepDescription: input.step.description,
      explanation: input.explanation,
      ran: run.status === 'ok',
      runMessage: run.message,
      attempts: input.attempts,
      output: `${run.stdout}${run.stdoutTruncated ? '\n[output truncated]' : ''}${run.status !== 'ok' ? `\n--- error output ---\n${run.stderr}` : ''}`,
      dependencies: filesBlock(files),
    },
    { researchId: input.researchId },
  );
  return { text: keepKnownSourceIds(r.output.text, known).text, summary: r.output.summary, usage: r.usage };
}

/** The findings saved with the run's charts and files, and the program folded below them. */
async function saveFindings(
  store: Store,
  input: FinishCoderInput,
  text: string,
  summary: string,
  usage: Usage,
  run?: SandboxResult,
): Promise<StepOutput> {
  const artifacts = run?.artifacts ?? [];
  const charts = artifacts.filter((a) => a.contentType === 'image/png');
  const others = artifacts.filter((a) => a.contentType !== 'image/png');
  const parts = [
    text,
    ...charts.map((a) => `![${a.name}](artifact:${a.artifactId})`),
    others.length ? `Files: ${others.map((a) => `[${a.name}](artifact:${a.artifactId})`).join(', ')}` : '',
    run ? `<details><summary>Program (${run.status})</summary>\n\n\`\`\`python\n${input.code.slice(0, 8_000)}\n\`\`\`\n</details>` : '',
  ].filter(Boolean);
  const sourceIds = citedSourceIds(text);
  await store.saveDocument(input.researchId, {
    key: input.key,
    kind: 'step',
    content: parts.join('\n\n'),
    summary: summarize(summary),
    sourceIds,
    meta: {
      stepId: input.step.id,
      stepTitle: input.step.title,
      sandboxStatus: run?.status ?? 'none',
      artifacts: artifacts.map((a) => a.artifactId),
      attempts: input.attempts,
    },
  });
  return { key: input.key, summary: summarize(summary, 300), sourceIds, usage: { ...usage } };
}
