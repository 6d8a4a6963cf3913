// Activities of the coder step: the model writes a program for the sandbox, and the results of
// the run become the step's findings (keeping the source ids of the data it used).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { citedSourceIds, keepKnownSourceIds } from '../../shared/citations';
import { summarize, type PlanStep, type StepOutput, type StepTask, type Usage } from '../../shared/schemas';
import { PROJECT_ROOT } from '../../infra/paths';
import type { Llm } from '../llm/call';
import { PROMPTS } from '../llm/prompts';
import type { SandboxResult } from '../sandbox';
import type { Store } from '../store';

/** Python packages the sandbox image provides, from the list its build installs. */
export function sandboxPackages(file = path.join(PROJECT_ROOT, 'sandbox', 'packages.txt')): string[] {
  const rename: Record<string, string> = { sklearn: 'scikit-learn' };
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('python3-'))
    .map((l) => l.slice('python3-'.length))
    .map((n) => rename[n] ?? n);
}

export interface CodeAttempt {
  code: string;
  status: SandboxResult['status'];
  message: string;
  stderr: string;
}

function filesBlock(files: { name: string; content: string }[]): string {
  return files.map((f) => `<file name="${f.name}">\n${f.content.slice(0, 6_000)}\n</file>`).join('\n') || '(none)';
}

export function createCoderActivities(deps: { llm: Llm; store: Store; limits: { timeoutSeconds: number; memoryMb: number } }) {
  const packages = sandboxPackages();

  async function dependencyFiles(researchId: string, keys: string[]) {
    const docs = await deps.store.getDocuments(researchId, keys);
    return docs.map((d) => ({ name: `${d.key.replace(/\//g, '_')}.md`, content: d.content, sourceIds: d.sourceIds }));
  }

  async function writeCode(input: {
    researchId: string;
    question: string;
    locale: string;
    step: PlanStep;
    dependencyKeys: string[];
    feedback: string;
    previous?: CodeAttempt;
  }): Promise<{ code: string; explanation: string; files: { name: string; content: string }[]; usage: Usage }> {
    const files = await dependencyFiles(input.researchId, input.dependencyKeys);
    const previous = input.previous;
    const r = await deps.llm.structured(
      PROMPTS.coder,
      {
        question: input.question,
        stepTitle: input.step.title,
        stepDescription: input.step.description,
        packages: packages.join(', '),
        files: files.length ? files.map((f) => f.name).join(', ') : '(none)',
        timeoutSeconds: deps.limits.timeoutSeconds,
        memoryMb: deps.limits.memoryMb,
        previousStatus: previous?.status ?? '',
        previousMessage: previous?.message ?? '',
        previousCode: previous?.code.slice(0, 6_000) ?? '',
        previousStderr: previous?.stderr.slice(-2_000) ?? '',
        feedback: input.feedback,
        dependencies: filesBlock(files),
      },
      { researchId: input.researchId },
    );
    return {
      code: r.output.code,
      explanation: summarize(r.output.explanation, 400),
      files: files.map(({ name, content }) => ({ name, content })),
      usage: r.usage,
    };
  }

  async function finishCoderStep(
    input: StepTask & {
      code: string;
      explanation: string;
      run: SandboxResult;
      attempts: number;
    },
  ): Promise<StepOutput> {
    const files = await dependencyFiles(input.researchId, input.dependencyKeys);
    const known = new Set(files.flatMap((f) => f.sourceIds));
    const run = input.run;
    const r = await deps.llm.structured(
      PROMPTS.coderResults,
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

  return { writeCode, finishCoderStep };
}
