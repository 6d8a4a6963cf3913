// The ReAct researcher's model calls. The conversation lives in PostgreSQL at positions the
// workflow chooses; the workflow carries only positions, tool names, arguments and ids.
import type OpenAI from 'openai';
import { Context } from '@temporalio/activity';
import { citedSourceIds } from '../../shared/citations';
import { PYTHON_RUNS_PER_ATTEMPT, pythonRunNumber, type ToolCall } from '../../shared/llm-outputs';
import { summarize, ZERO_USAGE, type PlanStep, type StepOutput, type Usage } from '../../shared/schemas';
import { activityCallKey } from '../attempt';
import type { Llm, ReplyReading } from '../llm/call';
import { PROMPTS } from '../llm/prompts';
import { flag, promptPart, text } from '../llm/prompt-def';
import { renderPart, renderPrompt } from '../llm/render';
import type { McpDiscovery, McpToolSpec } from '../mcp';
import type { ArtifactRef, SandboxResult } from '../sandbox';
import type { Message, Store } from '../store';
import { createConversationActivities, type ToolResultInput } from './conversation';
import { groundedFindings, sourcesListed } from './cited';
import { modelGaveUp, noteFallback } from './fallbacks';
import { ErrorType } from '../../shared/errors';
import { parseToolCalls, PYTHON_INPUT_DIR, toolDefinitions, trimToBudget, type PythonToolSpec } from './researcher-tools';

/** Characters of one earlier step's result in the researcher's first message. */
const DEPENDENCY_CHARS = 6_000;
/** Characters of transcript the compressor reads (the most recent). */
const TRANSCRIPT_CHARS = 60_000;

export interface TurnInput {
  researchId: string;
  convKey: string;
  /** Position of the message this turn writes (0 on the first turn: it also writes the task). */
  seq: number;
  question: string;
  locale: string;
  step: PlanStep;
  feedback: string;
  dependencyKeys: string[];
  /** No tools: the model must answer with what it has (rounds or context budget spent). */
  mustAnswer: boolean;
  /** MCP tools discovered for this step. */
  mcpTools?: McpToolSpec[];
  /** The step's first turn finds its MCP tools itself, and returns them for the turns after it. */
  discoverMcp?: boolean;
  /** The run has a knowledge base: knowledge_search is offered. */
  knowledge?: boolean;
  /** The workflow can run python calls; the worker decides whether a sandbox is there to offer it. */
  python?: boolean;
  /** The previous round's tool results, written into the conversation before the model is asked
   *  (no activity of their own per tool call). */
  toolResults?: ToolResultInput[];
  /** First turn only: pages the user asked the run to read, already read by the workflow; written
   *  after the task as the user's message. */
  userPages?: ToolResultInput;
}

export interface TurnResult {
  /** Position after the messages this turn wrote. */
  nextSeq: number;
  calls: ToolCall[];
  usage: Usage;
  /** Why the model had to answer without tools, if it did. */
  forcedAnswer?: string;
  /** The MCP tools a first turn found (discoverMcp) and the servers it could not ask; absent when
   *  there were neither. */
  mcp?: McpDiscovery;
}

type AssistantMessage = OpenAI.Chat.ChatCompletionAssistantMessageParam;

/** The python tool, where the worker has it: its limits, and whether a sandbox can run it now. */
export interface PythonTool {
  spec: PythonToolSpec;
  usable: () => Promise<boolean>;
}

/** The parts of prompts/researcher-react.md the turn sends on their own. */
const FORCED_ANSWER = promptPart('researcher-react', 'forced-answer', { reason: text });
const TURN_REPAIR = promptPart('researcher-react', 'turn-repair', { problems: text, cutOff: flag, withTools: flag });
/** What a turn that gave up leaves in the conversation: it ends the tool use, and says why. */
const GAVE_UP = promptPart('researcher-react', 'gave-up', {});

export function createResearcherActivities(deps: {
  llm: Llm;
  store: Store;
  contextChars: number;
  python?: PythonTool;
  /** The MCP servers' tools for a role (none when no server is configured). */
  discoverMcp?: (input: { role: string }) => Promise<McpDiscovery>;
}) {
  const { writeToolResults } = createConversationActivities({ store: deps.store });
  const { conversations } = deps.store;

  /** The step's tools: no web for a step that works from given material (needSearch: false),
   *  python when the workflow can run it and a sandbox is there. */
  async function offeredTools(input: TurnInput): Promise<OpenAI.Chat.ChatCompletionTool[]> {
    const python = input.python && deps.python && (await deps.python.usable()) ? deps.python.spec : undefined;
    return toolDefinitions(input.mcpTools, {
      knowledge: input.knowledge ?? false,
      web: input.step.needSearch,
      ...(python ? { python } : {}),
    });
  }

  /** The system prompt and the task, for positions 0 and 1. */
  async function taskMessages(input: TurnInput, tools: OpenAI.Chat.ChatCompletionTool[]): Promise<{ seq: number; message: Message }[]> {
    // The earlier steps' results and the background brief in one read.
    const docs = await deps.store.getDocuments(input.researchId, [...input.dependencyKeys, 'background']);
    const background = docs.find((d) => d.key === 'background');
    const dependencies = docs.filter((d) => d.key !== 'background' || input.dependencyKeys.includes('background'));
    const prompt = renderPrompt(PROMPTS.researcherTurn, {
      question: input.question,
      locale: input.locale,
      stepTitle: input.step.title,
      stepDescription: input.step.description,
      feedback: input.feedback || '(none)',
      web: input.step.needSearch,
      knowledge: input.knowledge ?? false,
      python: tools.some((t) => t.type === 'function' && t.function.name === 'python'),
      inputDir: PYTHON_INPUT_DIR,
      background: background ? background.content.slice(0, DEPENDENCY_CHARS) : '(none)',
      dependencies:
        dependencies.map((d) => `<result key="${d.key}">\n${d.content.slice(0, DEPENDENCY_CHARS)}\n</result>`).join('\n') || '(none)',
    });
    return [
      { seq: 0, message: { role: 'system', content: prompt.system } },
      { seq: 1, message: { role: 'user', content: prompt.user } },
    ];
  }

  async function researcherTurn(turnInput: TurnInput): Promise<TurnResult> {
    const mcp = turnInput.discoverMcp && deps.discoverMcp ? await deps.discoverMcp({ role: 'researcher' }) : undefined;
    const input = mcp ? { ...turnInput, mcpTools: mcp.tools } : turnInput;
    const found = mcp && (mcp.tools.length || mcp.errors.length) ? { mcp } : {};
    // Each write is the same on every attempt of this turn: a retry rewrites what it wrote. The
    // tool results (and, on the first turn, the task and the user's pages) are one write.
    const conversation = { researchId: input.researchId, convKey: input.convKey };
    let seq = input.seq;
    const tools = input.mustAnswer ? [] : await offeredTools(input);
    let rows: { seq: number; message: Message }[];
    if (seq === 0) {
      const task = await taskMessages(input, tools);
      const userPages = input.userPages ? [{ ...input.userPages, seq: 2, fromUser: true }] : [];
      const written = await writeToolResults(conversation, userPages, task);
      seq = userPages.length ? 3 : 2;
      // A first attempt knows the whole conversation: it just wrote it. A retry reads it, to find
      // the answer an earlier attempt may have stored.
      rows = Context.current().info.attempt === 1 ? [...task, ...written] : await conversations.load(input.researchId, input.convKey);
    } else {
      await writeToolResults(conversation, input.toolResults ?? []);
      rows = await conversations.load(input.researchId, input.convKey);
    }
    // A retried turn whose answer was already stored returns it: the model is not asked twice. The
    // attempt that paid for it never reported, so its usage comes from the call log.
    const done = rows.find((r) => r.seq === seq && r.message.role === 'assistant');
    if (done) {
      const parsed = parseToolCalls((done.message as AssistantMessage).tool_calls ?? [], input.mcpTools);
      const paid = await deps.store.llmCalls.find(activityCallKey());
      return { nextSeq: seq + 1, calls: parsed.calls, usage: paid?.usage ?? ZERO_USAGE, ...found };
    }
    const fitted = trimToBudget(
      rows.filter((r) => r.seq < seq).map((r) => r.message),
      deps.contextChars,
    );
    const forcedAnswer = input.mustAnswer ? 'the tool rounds are spent' : fitted.fits ? undefined : 'the context budget is reached';
    const messages: Message[] = [...fitted.messages];
    if (forcedAnswer)
      messages.push({
        role: 'user',
        content: renderPart(FORCED_ANSWER, { reason: forcedAnswer }),
      });

    type Turn = { output: { message: AssistantMessage; calls: ToolCall[] }; usage: Usage };
    let turn: Turn;
    let gaveUp = false;
    try {
      turn = await deps.llm.complete<{ message: AssistantMessage; calls: ToolCall[] }>({
        researchId: input.researchId,
        role: PROMPTS.researcherTurn.role,
        promptName: PROMPTS.researcherTurn.file,
        messages,
        ...(forcedAnswer || tools.length === 0 ? {} : { tools }),
        expected: 'researcher turn',
        reuse: (logged) => {
          const message = logged as AssistantMessage;
          return message?.role === 'assistant'
            ? { message, calls: parseToolCalls(message.tool_calls ?? [], input.mcpTools).calls }
            : undefined;
        },
        read: (choice) =>
          readTurn(choice, input.mcpTools, forcedAnswer, new Set(tools.map((t) => (t.type === 'function' ? t.function.name : '')))),
      });
    } catch (err) {
      // The workflow answers a context error by trimming the conversation; other give-ups end the
      // step's tool use here, and the step is written from what its tools found.
      if (!modelGaveUp(err) || err.type === ErrorType.LlmContextLength) throw err;
      await noteFallback(
        deps.store,
        input.researchId,
        'researcher',
        `${input.convKey}/${seq}`,
        `"${summarize(input.step.title, 80)}" stopped using tools and was written from the results gathered so far`,
        err,
      );
      turn = { output: { message: { role: 'assistant', content: renderPart(GAVE_UP, {}) }, calls: [] }, usage: ZERO_USAGE };
      gaveUp = true;
    }

    // A step that must search but whose first turn answers without searching (small models write
    // findings from the background alone, or from nothing) gets a search made by code from its
    // title and description; the model reads the results on its next turn.
    if (
      input.seq === 0 &&
      !forcedAnswer &&
      !gaveUp &&
      turn.output.calls.length === 0 &&
      tools.some((t) => t.type === 'function' && t.function.name === 'web_search')
    ) {
      const search: OpenAI.Chat.ChatCompletionMessageToolCall = {
        id: 'call_code_search',
        type: 'function',
        function: { name: 'web_search', arguments: JSON.stringify({ queries: stepQueries(input.step) }) },
      };
      turn = {
        output: { message: { role: 'assistant', content: null, tool_calls: [search] }, calls: parseToolCalls([search]).calls },
        usage: turn.usage,
      };
      await noteFallback(
        deps.store,
        input.researchId,
        'researcher',
        `${input.convKey}/first-search`,
        `"${summarize(input.step.title, 80)}" was searched by code from its title, as the model answered without searching`,
        'called no tool on its first turn',
      );
    }

    // First writer wins: if another attempt stored this turn already, its tool calls are the ones
    // the conversation goes on with.
    const stored = (await conversations.putFirst(input.researchId, input.convKey, seq, turn.output.message)) as AssistantMessage;
    const calls =
      JSON.stringify(stored) === JSON.stringify(turn.output.message)
        ? turn.output.calls
        : parseToolCalls(stored.tool_calls ?? [], input.mcpTools).calls;
    return { nextSeq: seq + 1, calls, usage: turn.usage, ...(forcedAnswer ? { forcedAnswer } : {}), ...found };
  }

  /** Compresses the conversation into the step's findings, citing only sources it retrieved. */
  async function compressResearch(input: {
    researchId: string;
    convKey: string;
    key: string;
    question: string;
    locale: string;
    step: PlanStep;
  }): Promise<StepOutput> {
    const rows = await conversations.load(input.researchId, input.convKey);
    const ids = [...new Set(rows.filter((r) => r.message.role === 'tool').flatMap((r) => citedSourceIds(String(r.message.content ?? ''))))];
    const retrieved = await deps.store.getSources(input.researchId, ids);
    const known = new Set(retrieved.map((s) => s.sourceId));
    let r: { output: { text: string; summary: string }; usage: Usage };
    try {
      r = await deps.llm.structured(
        PROMPTS.compressor,
        {
          question: input.question,
          locale: input.locale,
          stepTitle: input.step.title,
          stepDescription: input.step.description,
          transcript: transcriptOf(rows.map((row) => row.message)).slice(-TRANSCRIPT_CHARS),
        },
        { researchId: input.researchId },
      );
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
    const artifacts = await pythonArtifacts(input.researchId, input.step.id, input.convKey);
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
        ...(artifacts.length ? { artifacts: artifacts.map((a) => a.artifactId) } : {}),
      },
    });
    return { key: input.key, summary: summarize(r.output.summary, 300), sourceIds, usage: r.usage };
  }

  /** Files the step attempt's python programs kept (those that ran to the end); the last one of a name wins. */
  async function pythonArtifacts(researchId: string, stepId: string, convKey: string): Promise<ArtifactRef[]> {
    // The conversation of a step attempt is `<step id>/<attempt>`.
    const attempt = Number(convKey.split('/').at(-1));
    if (!Number.isInteger(attempt)) return [];
    const from = pythonRunNumber(attempt, 0);
    const runs = await deps.store.sandboxRuns.ofStep<SandboxResult>(researchId, stepId, from, from + PYTHON_RUNS_PER_ATTEMPT);
    const byName = new Map<string, ArtifactRef>();
    for (const run of runs) if (run.status === 'ok') for (const a of run.result.artifacts) byName.set(a.name, a);
    return [...byName.values()];
  }

  return { researcherTurn, compressResearch };
}

/** Queries for a step searched by code: its title, and its description's opening words. */
function stepQueries(step: PlanStep): string[] {
  const words = step.description.replace(/\s+/g, ' ').trim().split(' ').slice(0, 12).join(' ');
  return [...new Set([step.title.trim(), words].filter(Boolean))].slice(0, 2);
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

/** A usable turn: valid tool calls, or an answer in words; anything else gets one repair request. */
function readTurn(
  choice: OpenAI.Chat.ChatCompletion.Choice | undefined,
  mcpTools: McpToolSpec[] | undefined,
  forcedAnswer: string | undefined,
  offered: Set<string>,
): ReplyReading<{ message: AssistantMessage; calls: ToolCall[] }> {
  const msg = choice?.message;
  // A turn that must answer was offered no tools; tool calls some servers send anyway are dropped.
  const parsed = parseToolCalls(forcedAnswer ? [] : (msg?.tool_calls ?? []), mcpTools);
  const problems = parsed.problems;
  // A tool this step was not offered (web search in a step that works from given material).
  for (const c of parsed.calls) if (c.name !== 'mcp' && !offered.has(c.name)) problems.push(`${c.name} is not a tool of this step`);
  // A cut-off reply is the last problem: the repair asks for a shorter one after the list.
  const cutOff = choice?.finish_reason === 'length' && parsed.calls.length === 0;
  if (cutOff) problems.push('the reply was cut off (finish_reason: length)');
  if (!msg || (parsed.calls.length === 0 && !msg.content && problems.length === 0)) problems.push('the reply was empty');
  if (problems.length) {
    const content = renderPart(TURN_REPAIR, { problems: problems.join('; '), cutOff, withTools: !forcedAnswer });
    return { problem: problems.join('; '), repair: [{ role: 'user', content }] };
  }
  const message: AssistantMessage = {
    role: 'assistant',
    content: msg!.content ?? null,
    ...(parsed.calls.length ? { tool_calls: (msg!.tool_calls ?? []).filter((t) => parsed.calls.some((c) => c.id === t.id)) } : {}),
  };
  return { value: { message, calls: parsed.calls }, logged: message };
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
