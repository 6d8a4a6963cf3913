// The coder: the model writes a Python program for a processing step, which the sandbox runs (the
// workflow calls it: src/workflows/coder.ts); a failed program comes back with its error, a
// rejected step with the judge's feedback. The run's output becomes the step's findings in
// src/activities/roles/coder-results.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from '../../infra/paths';
import { type PlanStep, type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import { count, jsonPrompt, text } from '../llm/prompt-def';
import type { SandboxResult } from '../sandbox';
import { activityKey, modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { defineRole, type RoleDeps } from '../role-kit/role';
import { dependencyFiles, filesBlock } from '../role-kit/step-files';

/** The answer: the program for the step. */
export const CodeDraft = z.object({
  code: z.string().min(1).describe('A complete Python 3 program; reads its data from /work, writes charts and tables to /output'),
  explanation: z.string().describe('Two sentences: what the program computes and how'),
});
export type CodeDraft = z.infer<typeof CodeDraft>;

export const CODER_PROMPT = jsonPrompt(
  {
    file: 'coder',
    role: 'coder',
    vars: {
      question: text,
      stepTitle: text,
      stepDescription: text,
      packages: text,
      files: text,
      timeoutSeconds: count,
      memoryMb: count,
      previousStatus: text,
      previousMessage: text,
      previousCode: text,
      previousStderr: text,
      feedback: text,
      dependencies: text,
    },
    settings: ['memoryMb', 'packages', 'timeoutSeconds'],
    untrusted: { question: 'user_message', dependencies: 'dependencies' },
  },
  'CodeDraft',
  CodeDraft,
);

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

export interface WriteCodeInput {
  researchId: string;
  question: string;
  locale: string;
  step: PlanStep;
  dependencyKeys: string[];
  feedback: string;
  previous?: CodeAttempt;
}

type CoderDeps = Pick<RoleDeps, 'llm' | 'store' | 'sandbox'>;

export function createCoderActivities(deps: CoderDeps) {
  const packages = sandboxPackages();
  return { writeCode: (input: WriteCodeInput) => writeCode(deps, packages, input) };
}

export const coder = defineRole({
  does: 'Writes the Python program of a processing step, and fixes it after a failed run.',
  prompts: { coder: CODER_PROMPT },
  parts: [],
  activities: createCoderActivities,
});

export interface WrittenCode {
  code: string;
  explanation: string;
  files: { name: string; content: string }[];
  usage: Usage;
  /** The model gave no usable program (noted as a fallback): the step goes on to its findings
   *  with what ran before, or says what it could not compute. */
  gaveUp?: true;
}

async function writeCode(deps: CoderDeps, packages: string[], input: WriteCodeInput): Promise<WrittenCode> {
  const files = await dependencyFiles(deps.store, input.researchId, input.dependencyKeys);
  const previous = input.previous;
  try {
    return await askProgram(deps, packages, input, files);
  } catch (err) {
    if (!modelGaveUp(err)) throw err;
    const what = previous
      ? `no fix was written for the failed program of "${input.step.title}": its findings say what that program got to`
      : `no program was written for "${input.step.title}": its findings say what it could not compute`;
    await noteFallback(deps.store, input.researchId, 'coder', activityKey(), what, err);
    return { code: '', explanation: '', files: [], usage: { ...ZERO_USAGE }, gaveUp: true };
  }
}

async function askProgram(
  deps: CoderDeps,
  packages: string[],
  input: WriteCodeInput,
  files: Awaited<ReturnType<typeof dependencyFiles>>,
): Promise<WrittenCode> {
  const previous = input.previous;
  const r = await deps.llm.structured(
    CODER_PROMPT,
    {
      question: input.question,
      stepTitle: input.step.title,
      stepDescription: input.step.description,
      packages: packages.join(', '),
      files: files.length ? files.map((f) => f.name).join(', ') : '(none)',
      timeoutSeconds: deps.sandbox.timeoutSeconds,
      memoryMb: deps.sandbox.memoryMb,
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
