// The coder's findings: what the step's program printed (and the charts and files it kept) written
// up by the model, keeping only the source ids of the data it was given; the program itself goes
// below, folded. The activity that also has the judge look at them is src/activities/phases/coder-step.ts.
import { citedSourceIds, keepKnownSourceIds } from '../../shared/citations';
import { CitedText } from '../../shared/llm-outputs';
import { type StepOutput } from '../../shared/schemas';
import { summarize, type StepTask } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { count, flag, jsonPrompt, stepVarShape, text } from '../llm/prompt-def';
import type { SandboxResult } from '../sandbox';
import type { Store } from '../store';
import { defineRole } from '../role-kit/role';
import { dependencyFiles, filesBlock } from '../role-kit/step-files';

export const CODER_RESULTS_PROMPT = jsonPrompt(
  {
    file: 'coder-results',
    role: 'coder',
    vars: { ...stepVarShape, explanation: text, ran: flag, runMessage: text, attempts: count, output: text, dependencies: text },
    untrusted: { question: 'user_message', output: 'output', dependencies: 'dependencies' },
  },
  'CodeFindings',
  CitedText,
);

export type FinishCoderInput = StepTask & {
  code: string;
  explanation: string;
  run: SandboxResult;
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

/** The step's findings written up and saved. */
export async function writeCoderFindings(deps: { llm: Llm; store: Store }, input: FinishCoderInput): Promise<StepOutput> {
  const files = await dependencyFiles(deps.store, input.researchId, input.dependencyKeys);
  const known = new Set(files.flatMap((f) => f.sourceIds));
  const run = input.run;
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
  const { text } = keepKnownSourceIds(r.output.text, known);
  const charts = run.artifacts.filter((a) => a.contentType === 'image/png');
  const others = run.artifacts.filter((a) => a.contentType !== 'image/png');
  const parts = [
    text,
    ...charts.map((a) => `![${a.name}](artifact:${a.artifactId})`),
    others.length ? `Files: ${others.map((a) => `[${a.name}](artifact:${a.artifactId})`).join(', ')}` : '',
    `<details><summary>Program (${run.status})</summary>\n\n\`\`\`python\n${input.code.slice(0, 8_000)}\n\`\`\`\n</details>`,
  ].filter(Boolean);
  const sourceIds = citedSourceIds(text);
  await deps.store.saveDocument(input.researchId, {
    key: input.key,
    kind: 'step',
    content: parts.join('\n\n'),
    summary: summarize(r.output.summary),
    sourceIds,
    meta: {
      stepId: input.step.id,
      sandboxStatus: run.status,
      artifacts: run.artifacts.map((a) => a.artifactId),
      attempts: input.attempts,
    },
  });
  return { key: input.key, summary: summarize(r.output.summary, 300), sourceIds, usage: r.usage };
}
