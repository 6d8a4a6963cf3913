// The compressor: a researcher step's conversation (its tool calls and what they returned) becomes
// the step's findings, citing only the sources its tools retrieved; files its python programs kept
// are linked. The findings are asked at the end of the conversation itself, so that a provider's
// cache of it is reused; a conversation too long for one more request is sent as a transcript
// instead. A model that gives no usable findings: the evidence retrieved, listed by code.
import type OpenAI from 'openai';
import { ApplicationFailure } from '@temporalio/activity';
import { citedSourceIds } from '../../shared/citations';
import { CitedText, PYTHON_RUNS_PER_ATTEMPT, pythonRunNumber } from '../../shared/llm-outputs';
import { type PlanStep, type StepOutput, type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { jsonPrompt, promptPart, stepVarShape, text } from '../llm/prompt-def';
import { renderPart } from '../llm/render';
import { ErrorType } from '../../shared/errors';
import type { ResearcherBudgets } from '../role-kit/role';
import { trimToBudget } from '../role-kit/researcher-tools';
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

/** What the compressor asks at the end of the step's conversation. */
const FROM_CONVERSATION = promptPart('compressor', 'from-conversation', { locale: text });

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
  /** The tools the step's conversation offered: with them, the findings are asked at its end. */
  tools?: OpenAI.Chat.ChatCompletionTool[];
}

type CompressDeps = { llm: Llm; store: Store; budgets?: ResearcherBudgets };
type Findings = { output: { text: string; summary: string }; usage: Usage };

export const compressor = defineRole({
  does: "Turns a researcher step's tool calls and results into the step's findings, citing only what its tools retrieved.",
  prompts: { compressor: COMPRESSOR_PROMPT },
  parts: [FROM_CONVERSATION],
  // The step's last researcherTurn writes its findings.
  activities: () => ({}),
  answeredIn: { activity: 'researcherTurn', module: 'src/activities/phases/researcher-turn.ts' },
});

/** Compresses the conversation into the step's findings, citing only sources it retrieved.
 *  `callKey`: the model call's key within its activity, when the activity makes another call
 *  before this one (the researcher's last turn). */
export async function compressResearch(deps: CompressDeps, input: CompressInput, callKey?: string): Promise<StepOutput> {
  const rows = await deps.store.conversations.load(input.researchId, input.convKey);
  const ids = [...new Set(rows.filter((r) => r.message.role === 'tool').flatMap((r) => citedSourceIds(String(r.message.content ?? ''))))];
  const retrieved = await deps.store.getSources(input.researchId, ids);
  const known = new Set(retrieved.map((s) => s.sourceId));
  let r: Findings;
  try {
    r = await keptIfCut(deps.store, input, await askFindings(deps, input, rows, callKey));
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
      stepTitle: input.step.title,
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

/**
 * The model's findings: asked at the end of the step's conversation (trimmed as its turns were),
 * with its tools, when the step gave them and the budgets are known; else, or when that is too long
 * for the model, from the conversation's transcript.
 */
async function askFindings(deps: CompressDeps, input: CompressInput, rows: { message: Message }[], callKey?: string): Promise<Findings> {
  // Findings cut off at their limit keep what the model finished, not paid for again.
  const ctx = (suffix: string) => ({
    researchId: input.researchId,
    ...(callKey || suffix ? { key: `${callKey ?? ''}${suffix}` } : {}),
    salvage: salvageCitedText,
  });
  const messages = rows.map((row) => row.message);
  if (input.tools && deps.budgets) {
    // The turns were trimmed without their answer: so is this, and the answer goes after.
    const last = messages.at(-1)?.role === 'assistant' ? messages.slice(-1) : [];
    const before = trimToBudget(messages.slice(0, messages.length - last.length), deps.budgets.conversationTokens, deps.budgets.counter);
    const conversation = { messages: [...before.messages, ...last], tools: input.tools };
    try {
      return await deps.llm.followUp(COMPRESSOR_PROMPT, conversation, renderPart(FROM_CONVERSATION, { locale: input.locale }), ctx(''));
    } catch (err) {
      if (!(err instanceof ApplicationFailure) || err.type !== ErrorType.LlmContextLength) throw err;
    }
  }
  return deps.llm.structured(
    COMPRESSOR_PROMPT,
    {
      question: input.question,
      locale: input.locale,
      stepTitle: input.step.title,
      stepDescription: input.step.description,
      transcript: transcriptOf(messages).slice(-TRANSCRIPT_CHARS),
    },
    ctx(input.tools && deps.budgets ? '/transcript' : ''),
  );
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
