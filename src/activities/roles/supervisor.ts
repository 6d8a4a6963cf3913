// The supervisor (researchMode 'supervisor'): after each wave of steps it reads the question, the
// plan and the findings so far and decides what to do next with tools, as open_deep_research's
// supervisor does: `think` (a reflection, written to the run's events), `conduct_research` (new
// steps for the next wave, repaired by code like gap reflection's) or `research_complete`. One
// activity is one decision: a reply that only thinks is answered and asked again, a few times at
// most. A model that gives no usable decision: the research is complete, with a note.
import { readToolArgs } from '../llm/tool-args';
import type OpenAI from 'openai';
import { z } from 'zod';
import { cappedList, cappedText, LIMITS, ThinkArgs } from '../../shared/llm-outputs';
import type { PlanStep, Usage } from '../../shared/schemas';
import { addUsage, summarize, ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { count, flag, promptPart, text, toolPrompt } from '../llm/prompt-def';
import { renderPart, renderPrompt } from '../llm/render';
import type { Message, Store } from '../store';
import { activityKey, modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { codeRuns, repairSteps, stepId, type PlannerDeps } from '../role-kit/plan-repair';
import { defineRole } from '../role-kit/role';

/** The tools' arguments, as the model sees them (JSON Schema from these) and as code checks them. */
const ConductResearchArgs = z.object({
  steps: cappedList(
    z.object({
      title: cappedText(LIMITS.titleChars),
      description: cappedText(LIMITS.descriptionChars).describe('Exactly what to find or compute'),
      kind: z.preprocess((v) => (v === 'coder' ? v : 'researcher'), z.enum(['researcher', 'coder'])),
      dependsOn: cappedList(z.string(), LIMITS.steps).optional().describe('ids of earlier steps whose findings it needs'),
    }),
    LIMITS.steps,
    1,
  ),
});
const ResearchCompleteArgs = z.object({ reason: cappedText(500).optional() });
const TOOL_SCHEMAS = { think: ThinkArgs, conduct_research: ConductResearchArgs, research_complete: ResearchCompleteArgs } as const;
type ToolName = keyof typeof TOOL_SCHEMAS;
type Call = { [K in ToolName]: { name: K; args: z.infer<(typeof TOOL_SCHEMAS)[K]> } }[ToolName];

export const SUPERVISOR_PROMPT = toolPrompt({
  file: 'supervisor',
  role: 'planner',
  vars: { question: text, plan: text, findings: text, wave: count, maxWaves: count, maxNewSteps: count, processing: flag },
  settings: ['maxNewSteps', 'maxWaves', 'processing'],
  untrusted: { question: 'user_message', plan: 'plan', findings: 'findings' },
});
const TOOL_DESCRIPTIONS: Record<ToolName, ReturnType<typeof promptPart<Record<string, never>>>> = {
  think: promptPart('supervisor', 'think', {}),
  conduct_research: promptPart('supervisor', 'conduct-research', {}),
  research_complete: promptPart('supervisor', 'research-complete', {}),
};
/** The answer to a `think` call, and to a reply that only thought: decide now. */
const THOUGHT_NOTED = promptPart('supervisor', 'thought-noted', { lastTurn: flag });
const TURN_REPAIR = promptPart('supervisor', 'turn-repair', { problems: text });

/** Model calls one decision may take: replies that only think are answered and asked again. */
const MAX_TURNS = 3;
/** Characters of one finding, and of all of them, the supervisor reads. */
const FINDING_CHARS = 2_000;
const FINDINGS_CHARS = 24_000;

export interface SupervisorInput {
  researchId: string;
  question: string;
  /** Waves run so far (the plan's steps are wave 1), and the most the run may have. */
  wave: number;
  maxWaves: number;
  /** Every step so far, as steered, with its status (and its summary or why it did not complete). */
  steps: (PlanStep & { status: string; summary?: string | undefined })[];
  /** Document keys of the accepted step results. */
  stepKeys: string[];
  /** The most steps the next wave may have. */
  maxNewSteps: number;
}

export interface SupervisorDecision {
  /** The model's reflections, in order (each also an event of the run). */
  thoughts: string[];
  /** The next wave; empty when the research is complete. */
  steps: PlanStep[];
  complete: boolean;
  /** Why it is complete, in the model's words or the fallback's. */
  reason?: string;
  /** What code changed in the steps it delegated (ids, cut steps, dependencies). */
  repairs: string[];
  usage: Usage;
}

type SupervisorDeps = Pick<PlannerDeps, 'canRunCode'> & { llm: Llm; store: Store };

export function createSupervisorActivities(deps: SupervisorDeps) {
  return { superviseResearch: (input: SupervisorInput) => superviseResearch(deps, input) };
}

export const supervisor = defineRole({
  does: "Supervisor mode: after each wave of steps, thinks, delegates the next wave's steps or ends the research.",
  prompts: { supervisor: SUPERVISOR_PROMPT },
  parts: [...Object.values(TOOL_DESCRIPTIONS), THOUGHT_NOTED, TURN_REPAIR],
  activities: createSupervisorActivities,
});

async function superviseResearch(deps: SupervisorDeps, input: SupervisorInput): Promise<SupervisorDecision> {
  const processing = await codeRuns(deps);
  const prompt = renderPrompt(SUPERVISOR_PROMPT, {
    question: input.question,
    plan: planBlock(input.steps),
    findings: await findingsBlock(deps.store, input.researchId, input.stepKeys),
    wave: input.wave,
    maxWaves: input.maxWaves,
    maxNewSteps: input.maxNewSteps,
    processing,
  });
  const messages: Message[] = [
    { role: 'system', content: prompt.system },
    { role: 'user', content: prompt.user },
  ];
  const thoughts: string[] = [];
  let usage = ZERO_USAGE;
  try {
    for (let turn = 1; turn <= MAX_TURNS; turn++) {
      const r = await askModel(deps.llm, input.researchId, turn, messages);
      usage = addUsage(usage, r.usage);
      const said = r.output.calls.flatMap((c) => (c.name === 'think' ? [c.args.reflection.trim()] : [])).filter(Boolean);
      await recordThoughts(deps.store, input, thoughts.length, said);
      thoughts.push(...said);
      const decision = decide(r.output.calls, input, processing);
      if (decision) return { thoughts, ...decision, usage };
      // Only thoughts: they are answered, and the model is asked again (the last time, to decide).
      messages.push(r.output.message, ...thoughtsNoted(r.output.message, turn + 1 === MAX_TURNS));
    }
    throw new SupervisorUndecided(`only thought for ${MAX_TURNS} turns and never decided`);
  } catch (err) {
    if (!(err instanceof SupervisorUndecided) && !modelGaveUp(err)) throw err;
    const what = `the research was taken as complete after wave ${input.wave}`;
    await noteFallback(
      deps.store,
      input.researchId,
      'supervisor',
      activityKey(),
      what,
      err instanceof SupervisorUndecided ? err.message : err,
    );
    // The fallback's note says why, in the report; the run's note only that it was one.
    return { thoughts, steps: [], complete: true, reason: 'the model gave no usable decision', repairs: [], usage };
  }
}

/** A model that only thinks is not a failure of the call: its fallback is the same as one. */
class SupervisorUndecided extends Error {}

/** The decision in the calls, or undefined when they only think. Research wins over complete. */
function decide(calls: Call[], input: SupervisorInput, processing: boolean): Omit<SupervisorDecision, 'thoughts' | 'usage'> | undefined {
  const drafts = calls.flatMap((c) => (c.name === 'conduct_research' ? c.args.steps : []));
  if (drafts.length) {
    const repairs: string[] = [];
    const steps = repairSteps(
      drafts.map((d, i) => ({
        id: stepId(d.title).slice(0, 24) || `wave-${input.wave + 1}-${i + 1}`,
        title: d.title,
        description: d.description,
        type: d.kind === 'coder' ? ('processing' as const) : ('research' as const),
        needSearch: d.kind !== 'coder',
        dependsOn: d.dependsOn ?? [],
      })),
      { question: input.question, maxSteps: input.maxNewSteps, processing, taken: input.steps.map((s) => s.id), repairs },
    );
    // Ids are made by code from the titles: only the repairs the model can act on are kept.
    return { steps, complete: false, repairs: repairs.filter((r) => !r.startsWith('id ') && !r.startsWith('duplicate id')) };
  }
  const done = calls.find((c) => c.name === 'research_complete');
  if (done) return { steps: [], complete: true, repairs: [], ...(done.args.reason ? { reason: done.args.reason } : {}) };
  return undefined;
}

/** Each reflection is an event of the run (the web page's and CLI's timelines); keyed, so a retry writes it once. */
async function recordThoughts(store: Store, input: SupervisorInput, before: number, said: string[]): Promise<void> {
  if (!said.length) return;
  await store.events.append(
    input.researchId,
    said.map((t, i) => ({
      key: `think:${input.wave}:${before + i}`,
      type: 'think',
      data: { wave: input.wave, thought: summarize(t, 600) },
    })),
  );
}

type AssistantMessage = OpenAI.Chat.ChatCompletionAssistantMessageParam;
type Turn = { message: AssistantMessage; calls: Call[] };

function askModel(llm: Llm, researchId: string, turn: number, messages: Message[]) {
  const tools = toolDefinitions();
  return llm.complete<Turn>({
    researchId,
    role: SUPERVISOR_PROMPT.role,
    promptName: SUPERVISOR_PROMPT.file,
    key: `turn-${turn}`,
    messages: [...messages],
    tools,
    expected: 'supervisor decision',
    reuse: (logged) => {
      const message = logged as AssistantMessage | undefined;
      if (message?.role !== 'assistant') return undefined;
      const parsed = parseCalls(message.tool_calls ?? []);
      return parsed.problems.length ? undefined : { message, calls: parsed.calls };
    },
    read: (choice) => {
      const msg = choice?.message;
      const parsed = parseCalls(msg?.tool_calls ?? []);
      if (!parsed.calls.length && !parsed.problems.length) parsed.problems.push('the reply called no tool');
      if (parsed.problems.length) {
        return {
          problem: parsed.problems.join('; '),
          repair: [{ role: 'user', content: renderPart(TURN_REPAIR, { problems: parsed.problems.join('; ') }) }],
        };
      }
      const message: AssistantMessage = { role: 'assistant', content: msg!.content ?? null, tool_calls: msg!.tool_calls };
      return { value: { message, calls: parsed.calls }, logged: message };
    },
  });
}

/** Validates the tool calls; returns problems for a repair request instead of throwing. */
function parseCalls(raw: OpenAI.Chat.ChatCompletionMessageToolCall[]): { calls: Call[]; problems: string[] } {
  const calls: Call[] = [];
  const problems: string[] = [];
  for (const tc of raw) {
    if (tc.type !== 'function') continue;
    const name = tc.function.name as ToolName;
    const schema = TOOL_SCHEMAS[name];
    if (!schema) {
      problems.push(`there is no tool named "${tc.function.name}"`);
      continue;
    }
    const read = readToolArgs(name, tc.function.arguments, schema);
    if (!read.ok) {
      problems.push(read.problem);
      continue;
    }
    calls.push({ name, args: read.args } as Call);
  }
  return { calls, problems };
}

/** The answer to each tool call of a reply that only thought (every call needs one). */
function thoughtsNoted(message: AssistantMessage, lastTurn: boolean): Message[] {
  const content = renderPart(THOUGHT_NOTED, { lastTurn });
  return (message.tool_calls ?? []).map((tc) => ({ role: 'tool' as const, tool_call_id: tc.id, content }));
}

let definitions: OpenAI.Chat.ChatCompletionTool[] | undefined;
function toolDefinitions(): OpenAI.Chat.ChatCompletionTool[] {
  definitions ??= (Object.keys(TOOL_SCHEMAS) as ToolName[]).map((name) => {
    const { $schema: _drop, ...parameters } = z.toJSONSchema(TOOL_SCHEMAS[name], { io: 'input' }) as Record<string, unknown>;
    return { type: 'function', function: { name, description: renderPart(TOOL_DESCRIPTIONS[name], {}), parameters } };
  });
  return definitions;
}

/** The steps so far: id, kind, status, title and what was asked; why a step did not complete. */
function planBlock(steps: SupervisorInput['steps']): string {
  if (!steps.length) return '(no steps)';
  return steps
    .map(
      (s) =>
        `- ${s.id} (${s.type === 'processing' ? 'coder' : 'researcher'}, ${s.status}): ${s.title}\n  ${summarize(s.description, 400)}` +
        (s.status !== 'completed' && s.summary ? `\n  (${summarize(s.summary, 200)})` : ''),
    )
    .join('\n');
}

/** The background and the accepted findings, each cut to FINDING_CHARS, all to FINDINGS_CHARS. */
async function findingsBlock(store: Store, researchId: string, stepKeys: string[]): Promise<string> {
  const docs = await store.getDocuments(researchId, ['background', ...stepKeys]);
  let left = FINDINGS_CHARS;
  const parts: string[] = [];
  for (const d of docs) {
    if (left <= 0) break;
    const body = `Summary: ${d.summary}\n${d.content.slice(0, Math.min(FINDING_CHARS, left))}`;
    left -= body.length;
    parts.push(`<finding key="${d.key}">\n${body}\n</finding>`);
  }
  return parts.join('\n') || '(no findings)';
}
