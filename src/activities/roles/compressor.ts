// The compressor: a researcher step's conversation (its tool calls and what they returned) becomes
// the step's findings, citing only the sources its tools retrieved; files its python programs kept
// are linked. A model that gives no usable findings: the evidence retrieved, listed by code.
import { citedSourceIds } from '../../shared/citations';
import { CitedText, PYTHON_RUNS_PER_ATTEMPT, pythonRunNumber } from '../../shared/llm-outputs';
import { type PlanStep, type StepOutput, type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { jsonPrompt, stepVarShape, text } from '../llm/prompt-def';
import type { ArtifactRef, SandboxResult } from '../sandbox';
import type { Message, Store } from '../store';
import { groundedFindings, sourcesListed } from '../role-kit/cited';
import { salvageCitedText, takeCutMark } from '../role-kit/cut-answer';
import { modelGaveUp, noteCorrection, noteFallback } from '../role-kit/fallbacks';
import { defineRole } from '../role-kit/role';

export const COMPRESSOR_PROMPT = jsonPrompt(
  {
    file: 'compressor',
    role: 'researcher',
    vars: { ...stepVarShape, transcript: text },
    settings: ['locale'],
    untrusted: { question: 'user_message', transcript: 'transcript' },
  },
  'ResearchFindings',
  CitedText,
);

/** Characters of transcript the compressor reads (the most recent). */
const TRANSCRIPT_CHARS = 60_000;

export interface CompressInput {
  researchId: string;
  convKey: string;
  key: string;
  question: string;
  locale: string;
  step: PlanStep;
  /** Why the step answered before it was done (StepOutput.cutShort); kept in the findings' meta. */
  cutShort?: string;
}

export const compressor = defineRole({
  does: "Turns a researcher step's tool calls and results into the step's findings, citing only what its tools retrieved.",
  prompts: { compressor: COMPRESSOR_PROMPT },
  parts: [],
  // The step's last researcherTurn writes its findings.
  activities: () => ({}),
  answeredIn: { activity: 'researcherTurn', module: 'src/activities/phases/researcher-turn.ts' },
});

/** Compresses the conversation into the step's findings, citing only sources it retrieved.
 *  `callKey`: the model call's key within its activity, when the activity makes another call
 *  before this one (the researcher's last turn). */
export async function compressResearch(deps: { llm: Llm; store: Store }, input: CompressInput, callKey?: string): Promise<StepOutput> {
  const rows = await deps.store.conversations.load(input.researchId, input.convKey);
  const ids = [...new Set(rows.filter((r) => r.message.role === 'tool').flatMap((r) => citedSourceIds(String(r.message.content ?? ''))))];
  const retrieved = await deps.store.getSources(input.researchId, ids);
  const known = new Set(retrieved.map((s) => s.sourceId));
  let r: { output: { text: string; summary: string }; usage: Usage };
  try {
    r = await deps.llm.structured(
      COMPRESSOR_PROMPT,
      {
        question: input.question,
        locale: input.locale,
        stepTitle: input.step.title,
        stepDescription: input.step.description,
        transcript: transcriptOf(rows.map((row) => row.message)).slice(-TRANSCRIPT_CHARS),
      },
      // Findings cut off at their limit keep what the model finished, not paid for again.
      { researchId: input.researchId, ...(callKey ? { key: callKey } : {}), salvage: salvageCitedText },
    );
    r = await keptIfCut(deps.store, input, r);
  } catch (err) {
    if (!modelGaveUp(err)) throw err;
    const listed = sourcesListed(retrieved);
    r = {
      output: { text: `Evidence retrieved for "${input.step.title}":\n\n${listed.text}`, summary: listed.summary },
      usage: ZERO_USAGE,
    };
    await noteFallback(
      deps.store,
      input.researchId,
      'researcher',
      `${input.key}/compress`,
      `the findings of "${summarize(input.step.title, 80)}" are the evidence its tools retrieved, listed by code`,
      err,
    );
  }
  const { text, sourceIds, dropped } = await groundedFindings(deps.store, input.researchId, input.key, r.output.text, retrieved);
  const artifacts = await pythonArtifacts(deps.store, input.researchId, input.step.id, input.convKey);
  await deps.store.saveDocument(input.researchId, {
    key: input.key,
    kind: 'step',
    content: [text, ...artifactLinks(artifacts)].join('\n\n'),
    summary: summarize(r.output.summary),
    sourceIds,
    meta: {
      stepId: input.step.id,
      droppedSourceIds: dropped,
      retrievedSourceIds: [...known],
      ...(input.cutShort ? { cutShort: input.cutShort } : {}),
      ...(artifacts.length ? { artifacts: artifacts.map((a) => a.artifactId) } : {}),
    },
  });
  return {
    key: input.key,
    summary: summarize(r.output.summary, 300),
    sourceIds,
    usage: r.usage,
    ...(input.cutShort ? { cutShort: input.cutShort } : {}),
  };
}

/** Findings kept from an answer cut off at its output limit: the mark taken out, the cut noted. */
async function keptIfCut<T extends { output: { text: string; summary: string } }>(store: Store, input: CompressInput, r: T): Promise<T> {
  const { text, cut } = takeCutMark(r.output.text);
  if (!cut) return r;
  const what = `the model's findings for "${summarize(input.step.title, 80)}" were cut off at its output limit: the step keeps the paragraphs it finished`;
  await noteCorrection(store, input.researchId, 'researcher', `${input.key}/cut`, what);
  return { ...r, output: { ...r.output, text } };
}

/** Files the step attempt's python programs kept (those that ran to the end); the last one of a name wins. */
async function pythonArtifacts(store: Store, researchId: string, stepId: string, convKey: string): Promise<ArtifactRef[]> {
  // The conversation of a step attempt is `<step id>/<attempt>`.
  const attempt = Number(convKey.split('/').at(-1));
  if (!Number.isInteger(attempt)) return [];
  const from = pythonRunNumber(attempt, 0);
  const runs = await store.sandboxRuns.ofStep<SandboxResult>(researchId, stepId, from, from + PYTHON_RUNS_PER_ATTEMPT);
  const byName = new Map<string, ArtifactRef>();
  for (const run of runs) if (run.status === 'ok') for (const a of run.result.artifacts) byName.set(a.name, a);
  return [...byName.values()];
}

/** Charts shown, other files linked, as the coder's findings do: the report links them from there. */
function artifactLinks(artifacts: ArtifactRef[]): string[] {
  const charts = artifacts.filter((a) => a.contentType === 'image/png');
  const others = artifacts.filter((a) => a.contentType !== 'image/png');
  return [
    ...charts.map((a) => `![${a.name}](artifact:${a.artifactId})`),
    ...(others.length ? [`Files: ${others.map((a) => `[${a.name}](artifact:${a.artifactId})`).join(', ')}`] : []),
  ];
}

function transcriptOf(messages: Message[]): string {
  return messages
    .filter((m) => m.role === 'assistant' || m.role === 'tool')
    .map((raw) => {
      const m = raw as { role: string; content?: unknown; tool_calls?: { function: { name: string; arguments: string } }[] };
      const calls = m.tool_calls?.map((t) => `→ ${t.function.name}(${t.function.arguments})`).join('\n') ?? '';
      return `${m.role === 'tool' ? 'TOOL RESULT' : 'RESEARCHER'}:\n${typeof m.content === 'string' ? m.content : ''}${calls ? `\n${calls}` : ''}`;
    })
    .join('\n\n');
}
