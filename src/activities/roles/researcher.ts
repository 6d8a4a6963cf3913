// The researcher: one turn of the ReAct loop the workflow runs (src/workflows/researcher.ts). The
// conversation lives in PostgreSQL at positions the workflow chooses; the workflow carries only
// positions, tool names, arguments and ids. A turn writes the previous round's tool results, asks
// the model (tools offered unless it must answer) and stores its reply; a retried turn finds the
// reply an earlier attempt stored and asks nobody. The activity around the call (web tools run in
// the turn, rounds that go on, the step's findings and verdict) is src/activities/phases/
// researcher-turn.ts.
import type OpenAI from 'openai';
import { Context } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import type { ToolCall } from '../../shared/llm-outputs';
import { type PlanStep, type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import { activityCallKey } from '../attempt';
import type { ReplyReading } from '../llm/call';
import { flag, promptPart, stepVarShape, text, toolPrompt } from '../llm/prompt-def';
import { renderPart, renderPrompt } from '../llm/render';
import type { McpDiscovery, McpToolSpec } from '../mcp';
import type { Message } from '../store';
import { createConversationActivities, THOUGHT_NOTED, USER_PAGES, type ToolResultInput } from '../role-kit/conversation';
import { finishedPart } from '../role-kit/cut-answer';
import { modelGaveUp, noteCorrection, noteFallback } from '../role-kit/fallbacks';
import { defineRole, type RoleDeps } from '../role-kit/role';
import { parseToolCalls, PYTHON_INPUT_DIR, TOOL_DESCRIPTIONS, toolDefinitions, trimToBudget } from '../role-kit/researcher-tools';

export const RESEARCHER_TURN_PROMPT = toolPrompt({
  file: 'researcher-react',
  role: 'researcher',
  vars: {
    ...stepVarShape,
    feedback: text,
    dependencies: text,
    web: flag,
    knowledge: flag,
    python: flag,
    think: flag,
    inputDir: text,
    background: text,
  },
  settings: ['inputDir', 'knowledge', 'locale', 'python', 'think', 'web'],
  untrusted: { question: 'user_message', dependencies: 'dependencies', background: 'background' },
});

/** The parts of prompts/researcher-react.md the turn sends on their own. */
const FORCED_ANSWER = promptPart('researcher-react', 'forced-answer', { reason: text });
const TURN_REPAIR = promptPart('researcher-react', 'turn-repair', { problems: text, cutOff: flag, withTools: flag });
/** What a turn that gave up leaves in the conversation: it ends the tool use, and says why. */
const GAVE_UP = promptPart('researcher-react', 'gave-up', {});

/** Characters of one earlier step's result in the researcher's first message. */
const DEPENDENCY_CHARS = 6_000;

/** What one turn's model call is given (the researcher-turn activity's input holds more). */
export interface TurnCall {
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
  /** `think` is offered: a step with rounds to spare on reflection (not a quick run's). */
  think?: boolean;
  /** The previous round's tool results, written into the conversation before the model is asked
   *  (no activity of their own per tool call). */
  toolResults?: ToolResultInput[];
  /** First turn only: pages the user asked the run to read, already read by the workflow; written
   *  after the task as the user's message. */
  userPages?: ToolResultInput;
}

/** What one turn's model call gives: its reply's tool calls, and what it found and spent. */
export interface TurnCallResult {
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
type Tools = OpenAI.Chat.ChatCompletionTool[];
type Row = { seq: number; message: Message };
/** `cut`: an answer cut off at its output limit, kept up to where it finished. */
type Turn = { output: { message: AssistantMessage; calls: ToolCall[]; cut?: boolean }; usage: Usage };
export type ResearcherDeps = Pick<RoleDeps, 'llm' | 'store' | 'budgets' | 'python' | 'discoverMcp' | 'web'>;

export const researcher = defineRole({
  does: 'One round of a research step: the model calls tools (search, crawl, documents, python, MCP) or writes its findings.',
  prompts: { researcherTurn: RESEARCHER_TURN_PROMPT },
  parts: [FORCED_ANSWER, TURN_REPAIR, GAVE_UP, USER_PAGES, THOUGHT_NOTED, ...Object.values(TOOL_DESCRIPTIONS)],
  activities: () => ({}),
  answeredIn: { activity: 'researcherTurn', module: 'src/activities/phases/researcher-turn.ts' },
});

/** One turn's model call: the conversation written, the model asked (or its stored reply taken), the reply stored. */
export async function oneTurn(deps: ResearcherDeps, turnInput: TurnCall): Promise<TurnCallResult> {
  const mcp = turnInput.discoverMcp && deps.discoverMcp ? await deps.discoverMcp({ role: 'researcher' }) : undefined;
  const input = mcp ? { ...turnInput, mcpTools: mcp.tools } : turnInput;
  const found = mcp && (mcp.tools.length || mcp.errors.length) ? { mcp } : {};
  const tools = input.mustAnswer ? [] : await offeredTools(deps, input);
  const { seq, rows } = await writeConversation(deps, input, tools);
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
    deps.budgets.conversationTokens,
    deps.budgets.counter,
  );
  const forcedAnswer = input.mustAnswer ? 'the tool rounds are spent' : fitted.fits ? undefined : 'the context budget is reached';
  const messages: Message[] = [...fitted.messages];
  if (forcedAnswer) messages.push({ role: 'user', content: renderPart(FORCED_ANSWER, { reason: forcedAnswer }) });
  let turn = await askModel(deps, input, seq, messages, forcedAnswer ? [] : tools, forcedAnswer);
  if (input.seq === 0 && !forcedAnswer && !turn.gaveUp && turn.output.calls.length === 0 && offers(tools, 'web_search')) {
    turn = await searchByCode(deps, input, turn);
  }
  // First writer wins: if another attempt stored this turn already, its tool calls are the ones
  // the conversation goes on with.
  const stored = (await deps.store.conversations.putFirst(input.researchId, input.convKey, seq, turn.output.message)) as AssistantMessage;
  const calls =
    JSON.stringify(stored) === JSON.stringify(turn.output.message)
      ? turn.output.calls
      : parseToolCalls(stored.tool_calls ?? [], input.mcpTools).calls;
  return { nextSeq: seq + 1, calls, usage: turn.usage, ...(forcedAnswer ? { forcedAnswer } : {}), ...found };
}

const offers = (tools: Tools, name: string) => tools.some((t) => t.type === 'function' && t.function.name === name);

/** The step's tools: no web for a step that works from given material (needSearch: false),
 *  python when the workflow can run it and a sandbox is there, think when the workflow offers it. */
export async function offeredTools(deps: ResearcherDeps, input: TurnCall): Promise<Tools> {
  const python = input.python && deps.python && (await deps.python.usable()) ? deps.python.spec : undefined;
  return toolDefinitions(input.mcpTools, {
    knowledge: input.knowledge ?? false,
    web: input.step.needSearch,
    think: input.think ?? false,
    ...(python ? { python } : {}),
  });
}

/**
 * Writes what comes before this turn's reply and reads the conversation back. Each write is the
 * same on every attempt of this turn: a retry rewrites what it wrote. The tool results (and, on the
 * first turn, the task and the user's pages) are one write. Returns the position of the reply.
 */
async function writeConversation(deps: ResearcherDeps, input: TurnCall, tools: Tools): Promise<{ seq: number; rows: Row[] }> {
  const { writeToolResults } = createConversationActivities({ store: deps.store, budgets: deps.budgets });
  const conversation = { researchId: input.researchId, convKey: input.convKey };
  if (input.seq !== 0) {
    await writeToolResults(conversation, input.toolResults ?? []);
    return { seq: input.seq, rows: await deps.store.conversations.load(input.researchId, input.convKey) };
  }
  const task = await taskMessages(deps, input, tools);
  const userPages = input.userPages ? [{ ...input.userPages, seq: 2, fromUser: true }] : [];
  const written = await writeToolResults(conversation, userPages, task);
  // A first attempt knows the whole conversation: it just wrote it. A retry reads it, to find
  // the answer an earlier attempt may have stored.
  const rows =
    Context.current().info.attempt === 1 ? [...task, ...written] : await deps.store.conversations.load(input.researchId, input.convKey);
  return { seq: userPages.length ? 3 : 2, rows };
}

/** The system prompt and the task, for positions 0 and 1. */
async function taskMessages(deps: ResearcherDeps, input: TurnCall, tools: Tools): Promise<Row[]> {
  // The earlier steps' results and the background brief in one read.
  const docs = await deps.store.getDocuments(input.researchId, [...input.dependencyKeys, 'background']);
  const background = docs.find((d) => d.key === 'background');
  const dependencies = docs.filter((d) => d.key !== 'background' || input.dependencyKeys.includes('background'));
  const prompt = renderPrompt(RESEARCHER_TURN_PROMPT, {
    question: input.question,
    locale: input.locale,
    stepTitle: input.step.title,
    stepDescription: input.step.description,
    feedback: input.feedback || '(none)',
    web: input.step.needSearch,
    knowledge: input.knowledge ?? false,
    python: offers(tools, 'python'),
    think: offers(tools, 'think'),
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

/** The model's reply. A model that gives up ends the step's tool use: the step is written from
 *  what its tools found (the workflow answers a context error by trimming, so that one is thrown). */
async function askModel(
  deps: ResearcherDeps,
  input: TurnCall,
  seq: number,
  messages: Message[],
  tools: Tools,
  forcedAnswer: string | undefined,
): Promise<Turn & { gaveUp: boolean }> {
  try {
    const turn = await deps.llm.complete<Turn['output']>({
      researchId: input.researchId,
      role: RESEARCHER_TURN_PROMPT.role,
      promptName: RESEARCHER_TURN_PROMPT.file,
      messages,
      ...(tools.length === 0 ? {} : { tools }),
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
    if (turn.output.cut) {
      const what = `the model's answer for "${summarize(input.step.title, 80)}" was cut off at its output limit: the step keeps the paragraphs it finished`;
      await noteCorrection(deps.store, input.researchId, 'researcher', `${input.convKey}/${seq}/cut`, what);
    }
    return { ...turn, gaveUp: false };
  } catch (err) {
    if (!modelGaveUp(err) || err.type === ErrorType.LlmContextLength) throw err;
    await noteFallback(
      deps.store,
      input.researchId,
      'researcher',
      `${input.convKey}/${seq}`,
      `"${summarize(input.step.title, 80)}" stopped using tools and was written from the results gathered so far`,
      err,
    );
    return { output: { message: { role: 'assistant', content: renderPart(GAVE_UP, {}) }, calls: [] }, usage: ZERO_USAGE, gaveUp: true };
  }
}

/**
 * A step that must search but whose first turn answers without searching (small models write
 * findings from the background alone, or from nothing) gets a search made by code from its title
 * and description; the model reads the results on its next turn.
 */
async function searchByCode(deps: ResearcherDeps, input: TurnCall, turn: Turn): Promise<Turn & { gaveUp: boolean }> {
  const search: OpenAI.Chat.ChatCompletionMessageToolCall = {
    id: 'call_code_search',
    type: 'function',
    function: { name: 'web_search', arguments: JSON.stringify({ queries: stepQueries(input.step) }) },
  };
  await noteFallback(
    deps.store,
    input.researchId,
    'researcher',
    `${input.convKey}/first-search`,
    `"${summarize(input.step.title, 80)}" was searched by code from its title, as the model answered without searching`,
    'called no tool on its first turn',
  );
  return {
    output: { message: { role: 'assistant', content: null, tool_calls: [search] }, calls: parseToolCalls([search]).calls },
    usage: turn.usage,
    gaveUp: false,
  };
}

/** A usable turn: valid tool calls, or an answer in words; anything else gets one repair request. */
function readTurn(
  choice: OpenAI.Chat.ChatCompletion.Choice | undefined,
  mcpTools: McpToolSpec[] | undefined,
  forcedAnswer: string | undefined,
  offered: Set<string>,
): ReplyReading<Turn['output']> {
  const msg = choice?.message;
  // A turn that must answer was offered no tools; tool calls some servers send anyway are dropped.
  const parsed = parseToolCalls(forcedAnswer ? [] : (msg?.tool_calls ?? []), mcpTools);
  const problems = parsed.problems;
  // A tool this step was not offered (web search in a step that works from given material).
  for (const c of parsed.calls) if (c.name !== 'mcp' && !offered.has(c.name)) problems.push(`${c.name} is not a tool of this step`);
  // A cut-off reply is the last problem: the repair asks for a shorter one after the list. An answer
  // in words that finished enough is kept up to where it finished instead (not paid for again).
  const cutOff = choice?.finish_reason === 'length' && parsed.calls.length === 0;
  const finished = cutOff && problems.length === 0 ? finishedPart(msg?.content ?? '') : undefined;
  if (finished !== undefined) {
    const message: AssistantMessage = { role: 'assistant', content: finished };
    return { value: { message, calls: [], cut: true }, logged: message };
  }
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

/** Queries for a step searched by code: its title, and its description's opening words. */
function stepQueries(step: PlanStep): string[] {
  const words = step.description.replace(/\s+/g, ' ').trim().split(' ').slice(0, 12).join(' ');
  return [...new Set([step.title.trim(), words].filter(Boolean))].slice(0, 2);
}
