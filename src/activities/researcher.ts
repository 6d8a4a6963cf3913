// Activities of the ReAct researcher. The conversation lives in PostgreSQL at positions the
// workflow chooses; the workflow carries only positions, tool names, arguments and ids.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config';
import { llmConfigured } from '../config';
import { citedSourceIds, keepKnownSourceIds } from '../shared/citations';
import { ErrorType, LLM_NOT_CONFIGURED_MESSAGE } from '../shared/errors';
import { CrawlArgs, KnowledgeSearchArgs, summarize, WebSearchArgs, type PlanStep, type ToolCall, type Usage } from '../shared/schemas';
import type { CrawlResult } from './crawl';
import { mcpFunctionName, type McpToolSpec } from './mcp';
import { chatCompletion, estimateCostUsd } from './llm';
import { renderPrompt, untrusted } from './prompts';
import type { StepOutput } from './research';
import type { LlmCallStore, ResearchStore } from './store';
import type { CallStructured } from './llm';

type Message = OpenAI.Chat.ChatCompletionMessageParam;

/** Characters of one tool result kept in the conversation. */
export const MAX_TOOL_CHARS = 6_000;
/** Characters a trimmed tool result keeps. */
const TRIMMED_CHARS = 200;

export function createConversationStore(pool: pg.Pool) {
  return {
    async load(researchId: string, convKey: string): Promise<{ seq: number; message: Message }[]> {
      const { rows } = await pool.query<{ seq: number; message: Message }>(
        'SELECT seq, message FROM conversation_messages WHERE research_id = $1 AND conv_key = $2 ORDER BY seq',
        [researchId, convKey],
      );
      return rows;
    },
    async put(researchId: string, convKey: string, seq: number, message: Message): Promise<void> {
      await pool.query(
        `INSERT INTO conversation_messages (research_id, conv_key, seq, message) VALUES ($1, $2, $3, $4)
         ON CONFLICT (research_id, conv_key, seq) DO UPDATE SET message = EXCLUDED.message`,
        [researchId, convKey, seq, JSON.stringify(message)],
      );
    },
  };
}
type ConversationStore = ReturnType<typeof createConversationStore>;

const TOOL_SCHEMAS = { web_search: WebSearchArgs, crawl: CrawlArgs, knowledge_search: KnowledgeSearchArgs } as const;
const TOOL_DESCRIPTIONS: Record<keyof typeof TOOL_SCHEMAS, string> = {
  web_search: 'Search the web. Returns results with source ids, titles, URLs and snippets.',
  crawl: 'Read web pages (URLs from search results) and extract what serves the goal. Returns evidence with source ids.',
  knowledge_search: "Search the local knowledge base of the user's own documents.",
};

export function toolDefinitions(mcpTools: McpToolSpec[] = []): OpenAI.Chat.ChatCompletionTool[] {
  const builtIn = (Object.keys(TOOL_SCHEMAS) as (keyof typeof TOOL_SCHEMAS)[]).map((name): OpenAI.Chat.ChatCompletionTool => {
    const { $schema: _drop, ...parameters } = z.toJSONSchema(TOOL_SCHEMAS[name]) as Record<string, unknown>;
    return { type: 'function', function: { name, description: TOOL_DESCRIPTIONS[name], parameters } };
  });
  const mcp = mcpTools.map((t): OpenAI.Chat.ChatCompletionTool => ({
    type: 'function',
    function: { name: mcpFunctionName(t.server, t.tool), description: `[${t.server}] ${t.description}`, parameters: t.inputSchema },
  }));
  return [...builtIn, ...mcp];
}

/** Validates the model's tool calls; returns problems for a repair request instead of throwing. */
export function parseToolCalls(raw: OpenAI.Chat.ChatCompletionMessageToolCall[], mcpTools: McpToolSpec[] = []): { calls: ToolCall[]; problems: string[] } {
  const calls: ToolCall[] = [];
  const problems: string[] = [];
  for (const tc of raw) {
    if (tc.type !== 'function') {
      problems.push(`tool call ${tc.id} is not a function call`);
      continue;
    }
    const mcp = mcpTools.find((t) => mcpFunctionName(t.server, t.tool) === tc.function.name);
    if (mcp) {
      let args: unknown;
      try {
        args = JSON.parse(tc.function.arguments || '{}');
      } catch {
        problems.push(`the arguments of ${tc.function.name} are not valid JSON: ${tc.function.arguments.slice(0, 200)}`);
        continue;
      }
      if (args === null || typeof args !== 'object' || Array.isArray(args)) {
        problems.push(`the arguments of ${tc.function.name} must be a JSON object`);
        continue;
      }
      calls.push({ id: tc.id, name: 'mcp', server: mcp.server, tool: mcp.tool, args: args as Record<string, unknown> });
      continue;
    }
    const name = tc.function.name as keyof typeof TOOL_SCHEMAS;
    const schema = TOOL_SCHEMAS[name];
    if (!schema) {
      problems.push(`there is no tool named "${tc.function.name}"`);
      continue;
    }
    let json: unknown;
    try {
      json = JSON.parse(tc.function.arguments || '{}');
    } catch {
      problems.push(`the arguments of ${name} are not valid JSON: ${tc.function.arguments.slice(0, 200)}`);
      continue;
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      problems.push(`the arguments of ${name} are invalid: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
      continue;
    }
    calls.push({ id: tc.id, name, args: parsed.data } as ToolCall);
  }
  return { calls, problems };
}

function messageChars(m: Message): number {
  return JSON.stringify(m).length;
}

/** Cuts the oldest tool results first until the conversation fits `budget` characters. */
export function trimToBudget(messages: Message[], budget: number, keepLast = 2): { messages: Message[]; trimmed: number; fits: boolean } {
  const out = messages.map((m) => ({ ...m })) as Message[];
  let total = out.reduce((a, m) => a + messageChars(m), 0);
  let trimmed = 0;
  const toolIdx = out.map((m, i) => (m.role === 'tool' ? i : -1)).filter((i) => i >= 0);
  for (const i of toolIdx.slice(0, Math.max(0, toolIdx.length - keepLast))) {
    if (total <= budget) break;
    const m = out[i] as OpenAI.Chat.ChatCompletionToolMessageParam;
    const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
    if (content.length <= TRIMMED_CHARS) continue;
    const cut = `${content.slice(0, TRIMMED_CHARS)}\n[trimmed to save context]`;
    total -= content.length - cut.length;
    out[i] = { ...m, content: cut };
    trimmed++;
  }
  return { messages: out, trimmed, fits: total <= budget };
}

export interface ResearcherDeps {
  config: Pick<Config, 'llm'>;
  client: () => OpenAI;
  calls: LlmCallStore;
  store: ResearchStore;
  conversations: ConversationStore;
  call: CallStructured;
  /** Characters of conversation the researcher's model may be sent. */
  contextChars: number;
}

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
}

export interface TurnResult {
  /** Position after the messages this turn wrote. */
  nextSeq: number;
  calls: ToolCall[];
  usage: Usage;
  /** Why the model had to answer without tools, if it did. */
  forcedAnswer?: string;
}

export function createResearcherActivities(deps: ResearcherDeps) {
  const { conversations, store } = deps;

  async function researcherTurn(input: TurnInput): Promise<TurnResult> {
    if (!llmConfigured(deps.config)) throw ApplicationFailure.nonRetryable(LLM_NOT_CONFIGURED_MESSAGE, ErrorType.LlmNotConfigured);
    let seq = input.seq;
    if (seq === 0) {
      const docs = await store.getDocuments(input.researchId, input.dependencyKeys);
      const prompt = renderPrompt('researcher-react', {
        locale: input.locale,
        stepTitle: input.step.title,
        stepDescription: input.step.description,
        feedback: input.feedback || '(none)',
        question: untrusted('user_message', input.question),
        dependencies: untrusted('dependencies', docs.map((d) => `<result key="${d.key}">\n${d.content.slice(0, 6_000)}\n</result>`).join('\n') || '(none)'),
      });
      await conversations.put(input.researchId, input.convKey, 0, { role: 'system', content: prompt.system });
      await conversations.put(input.researchId, input.convKey, 1, { role: 'user', content: prompt.user });
      seq = 2;
    }
    const rows = await conversations.load(input.researchId, input.convKey);
    // A retried turn whose answer was already stored returns it: the model is not asked twice.
    const done = rows.find((r) => r.seq === seq && r.message.role === 'assistant');
    if (done) {
      const parsed = parseToolCalls((done.message as OpenAI.Chat.ChatCompletionAssistantMessageParam).tool_calls ?? [], input.mcpTools);
      return { nextSeq: seq + 1, calls: parsed.calls, usage: { promptTokens: 0, completionTokens: 0, costUsd: 0 } };
    }
    const history = rows.filter((r) => r.seq < seq).map((r) => r.message);
    const fitted = trimToBudget(history, deps.contextChars);
    const forcedAnswer = input.mustAnswer ? 'the tool rounds are spent' : fitted.fits ? undefined : 'the context budget is reached';
    const messages: Message[] = [...fitted.messages];
    if (forcedAnswer) messages.push({ role: 'user', content: `Stop using tools: ${forcedAnswer}. Write your findings now from what you have, citing source ids.` });

    const model = deps.config.llm.models.researcher;
    const client = deps.client();
    const usage = { promptTokens: 0, completionTokens: 0 };
    const started = Date.now();
    let problems: string[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const request: Message[] = attempt === 0 ? messages : [...messages, { role: 'user', content: `Your previous reply could not be used: ${problems.join('; ')}. Reply again${forcedAnswer ? '' : ', calling the tools with valid JSON arguments'}.` }];
      const completion = await chatCompletion(client, { model, messages: request, ...(forcedAnswer ? {} : { tools: toolDefinitions(input.mcpTools), tool_choice: 'auto' as const }) });
      usage.promptTokens += completion.usage?.prompt_tokens ?? 0;
      usage.completionTokens += completion.usage?.completion_tokens ?? 0;
      const choice = completion.choices?.[0];
      const msg = choice?.message;
      if (choice?.finish_reason === 'content_filter') throw ApplicationFailure.nonRetryable(`model ${model} refused: content filter`, ErrorType.LlmContentFilter);
      const parsed = parseToolCalls(msg?.tool_calls ?? [], input.mcpTools);
      problems = parsed.problems;
      if (choice?.finish_reason === 'length' && parsed.calls.length === 0) problems.push('the reply was cut off (finish_reason: length); be briefer');
      if (!msg || (parsed.calls.length === 0 && !msg.content && problems.length === 0)) problems.push('the reply was empty');
      if (problems.length) continue;
      const stored: OpenAI.Chat.ChatCompletionAssistantMessageParam = {
        role: 'assistant',
        content: msg!.content ?? null,
        ...(parsed.calls.length ? { tool_calls: (msg!.tool_calls ?? []).filter((t) => parsed.calls.some((c) => c.id === t.id)) } : {}),
      };
      await conversations.put(input.researchId, input.convKey, seq, stored);
      const cost = { ...usage, costUsd: estimateCostUsd(deps.config.llm.prices, model, usage.promptTokens, usage.completionTokens) };
      const info = Context.current().info;
      await deps.calls.recordCall({
        callKey: `${info.workflowExecution?.runId ?? 'standalone'}/${info.activityId}`,
        researchId: input.researchId,
        role: 'researcher',
        model,
        promptName: 'researcher-react',
        response: stored,
        usage: cost,
        durationMs: Date.now() - started,
      });
      return { nextSeq: seq + 1, calls: parsed.calls, usage: cost, ...(forcedAnswer ? { forcedAnswer } : {}) };
    }
    throw ApplicationFailure.nonRetryable(`model ${model} gave no usable researcher turn after a repair request: ${problems.join('; ')}`, ErrorType.LlmInvalidOutput);
  }

  /** Writes the result of one tool call into the conversation, built from what the store holds. */
  async function appendToolResult(input: {
    researchId: string;
    convKey: string;
    seq: number;
    toolCallId: string;
    search?: { query: string; sourceIds: string[]; error?: string }[];
    crawl?: CrawlResult[];
    text?: string;
  }): Promise<{ chars: number; sourceIds: string[] }> {
    const parts: string[] = [];
    const ids = new Set<string>();
    for (const s of input.search ?? []) {
      if (s.error) {
        parts.push(`Search "${s.query}" failed: ${s.error}`);
        continue;
      }
      const sources = await store.getSources(input.researchId, s.sourceIds);
      parts.push(`Search "${s.query}":\n${sources.length ? sources.map((x) => `[${x.sourceId}] ${x.title} — ${x.url}\n${x.content.slice(0, 400)}`).join('\n') : '(no results)'}`);
      sources.forEach((x) => ids.add(x.sourceId));
    }
    for (const c of input.crawl ?? []) {
      if (c.status !== 'ok' || !c.sourceId) {
        parts.push(`${c.url}: ${c.status}${c.reason ? ` (${c.reason})` : ''}`);
        continue;
      }
      const [source] = await store.getSources(input.researchId, [c.sourceId]);
      parts.push(`[${c.sourceId}] ${c.title ?? ''} — ${c.url}\n${source?.content.slice(0, 2_500) ?? c.summary ?? ''}`);
      ids.add(c.sourceId);
    }
    if (input.text) parts.push(input.text);
    let content = parts.join('\n\n') || '(no output)';
    if (content.length > MAX_TOOL_CHARS) content = `${content.slice(0, MAX_TOOL_CHARS)}\n[output trimmed]`;
    await conversations.put(input.researchId, input.convKey, input.seq, { role: 'tool', tool_call_id: input.toolCallId, content });
    return { chars: content.length, sourceIds: [...ids] };
  }

  /** After a context-length error: shortens every tool result but the last `keepLast`. */
  async function trimConversation(input: { researchId: string; convKey: string; keepLast: number }): Promise<{ trimmed: number }> {
    const rows = await conversations.load(input.researchId, input.convKey);
    const fitted = trimToBudget(rows.map((r) => r.message), 0, input.keepLast);
    for (let i = 0; i < rows.length; i++) {
      if (fitted.messages[i] !== rows[i]!.message && JSON.stringify(fitted.messages[i]) !== JSON.stringify(rows[i]!.message)) {
        await conversations.put(input.researchId, input.convKey, rows[i]!.seq, fitted.messages[i]!);
      }
    }
    return { trimmed: fitted.trimmed };
  }

  /** Compresses the conversation into the step's findings, citing only sources it retrieved. */
  async function compressResearch(input: { researchId: string; convKey: string; key: string; question: string; locale: string; step: PlanStep }): Promise<StepOutput> {
    const rows = await conversations.load(input.researchId, input.convKey);
    const transcript = rows
      .filter((r) => r.message.role === 'assistant' || r.message.role === 'tool')
      .map((r) => {
        const m = r.message as { role: string; content?: unknown; tool_calls?: { function: { name: string; arguments: string } }[] };
        const calls = m.tool_calls?.map((t) => `→ ${t.function.name}(${t.function.arguments})`).join('\n') ?? '';
        return `${m.role === 'tool' ? 'TOOL RESULT' : 'RESEARCHER'}:\n${typeof m.content === 'string' ? m.content : ''}${calls ? `\n${calls}` : ''}`;
      })
      .join('\n\n');
    const ids = [...new Set(rows.filter((r) => r.message.role === 'tool').flatMap((r) => citedSourceIds(String(r.message.content ?? ''))))];
    const known = new Set((await store.getSources(input.researchId, ids)).map((s) => s.sourceId));
    const r = await deps.call({
      researchId: input.researchId,
      role: 'researcher',
      prompt: 'compressor',
      schema: 'CitedText',
      vars: { question: input.question, locale: input.locale, stepTitle: input.step.title, stepDescription: input.step.description, transcript: transcript.slice(-60_000) },
      untrustedVars: ['question', 'transcript'],
    });
    const { text, dropped } = keepKnownSourceIds(r.output.text, known);
    const sourceIds = citedSourceIds(text);
    await store.saveDocument(input.researchId, {
      key: input.key,
      kind: 'step',
      content: text,
      summary: summarize(r.output.summary),
      sourceIds,
      meta: { stepId: input.step.id, droppedSourceIds: dropped, retrievedSourceIds: [...known] },
    });
    return { key: input.key, summary: summarize(r.output.summary, 300), sourceIds, usage: r.usage };
  }

  async function knowledgeSearch(input: { researchId: string; query: string }): Promise<{ text: string }> {
    return { text: `The knowledge base has no documents yet, so "${summarize(input.query, 100)}" found nothing. Use web_search.` };
  }

  return { researcherTurn, appendToolResult, trimConversation, compressResearch, knowledgeSearch };
}
