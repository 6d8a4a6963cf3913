// The researcher's tools as the model sees them (OpenAI function definitions from the zod argument
// schemas, MCP tools beside them), validation of the calls it makes, and trimming of old tool
// results when the conversation outgrows its budget.
import { readToolArgs } from '../llm/tool-args';
import type OpenAI from 'openai';
import { z } from 'zod';
import { citedSourceIds } from '../../shared/citations';
import { CrawlArgs, KnowledgeSearchArgs, PythonArgs, ThinkArgs, WebSearchArgs, type ToolCall } from '../../shared/llm-outputs';
import { count, promptPart, text } from '../llm/prompt-def';
import { renderPart } from '../llm/render';
import { mcpFunctionName, type McpToolSpec } from '../mcp';
import { HISTORY_CHARS } from '../sandbox/output';
import type { TokenCounter } from '../llm/tokens';
import type { Message } from '../store';

/** Characters a trimmed tool result keeps. */
const TRIMMED_CHARS = 200;
/** Tokens a chat template adds per message (role markers, separators). */
const PER_MESSAGE_TOKENS = 8;

const TOOL_SCHEMAS = {
  web_search: WebSearchArgs,
  crawl: CrawlArgs,
  knowledge_search: KnowledgeSearchArgs,
  python: PythonArgs,
  think: ThinkArgs,
} as const;
type ToolName = keyof typeof TOOL_SCHEMAS;
/** The tools' descriptions: parts of prompts/researcher-tools.md. */
export const TOOL_DESCRIPTIONS = {
  web_search: promptPart('researcher-tools', 'web-search', {}),
  crawl: promptPart('researcher-tools', 'crawl', {}),
  knowledge_search: promptPart('researcher-tools', 'knowledge-search', {}),
  think: promptPart('researcher-tools', 'think', {}),
  python: promptPart('researcher-tools', 'python', {
    packages: text,
    timeoutSeconds: count,
    memoryMb: count,
    inputDir: text,
    outputDir: text,
    historyChars: count,
  }),
};

/** What the python tool's description promises: the sandbox's limits and packages. */
export interface PythonToolSpec {
  timeoutSeconds: number;
  memoryMb: number;
  packages: string[];
}

/** Where the sandbox puts the program's input files, and where it collects the files it keeps. */
export const PYTHON_INPUT_DIR = '/work';
export const PYTHON_OUTPUT_DIR = '/output';

function pythonDescription(spec: PythonToolSpec): string {
  return renderPart(TOOL_DESCRIPTIONS.python, {
    packages: spec.packages.join(', '),
    timeoutSeconds: spec.timeoutSeconds,
    memoryMb: spec.memoryMb,
    inputDir: PYTHON_INPUT_DIR,
    outputDir: PYTHON_OUTPUT_DIR,
    historyChars: HISTORY_CHARS,
  });
}

/** A built-in tool's parameters as JSON Schema, converted once per process. */
const parameterSchemas = new Map<ToolName, Record<string, unknown>>();
function toolParameters(name: ToolName): Record<string, unknown> {
  let parameters = parameterSchemas.get(name);
  if (!parameters) {
    const { $schema: _drop, ...rest } = z.toJSONSchema(TOOL_SCHEMAS[name]) as Record<string, unknown>;
    parameterSchemas.set(name, (parameters = rest));
  }
  return parameters;
}

/** The tools a researcher is offered: knowledge_search only when the run has a knowledge base, the
 *  web unless the step works from given material, python only when a sandbox can run it, think
 *  when asked for. */
export function toolDefinitions(
  mcpTools: McpToolSpec[] = [],
  opts: { knowledge?: boolean; web?: boolean; python?: PythonToolSpec; think?: boolean } = {},
): OpenAI.Chat.ChatCompletionTool[] {
  const offered: Record<ToolName, boolean> = {
    web_search: opts.web !== false,
    crawl: opts.web !== false,
    knowledge_search: opts.knowledge === true,
    python: opts.python !== undefined,
    think: opts.think === true,
  };
  const names = (Object.keys(TOOL_SCHEMAS) as ToolName[]).filter((n) => offered[n]);
  const builtIn = names.map((name): OpenAI.Chat.ChatCompletionTool => {
    const parameters = toolParameters(name);
    const description = name === 'python' ? pythonDescription(opts.python!) : renderPart(TOOL_DESCRIPTIONS[name], {});
    return { type: 'function', function: { name, description, parameters } };
  });
  const mcp = mcpTools.map((t): OpenAI.Chat.ChatCompletionTool => ({
    type: 'function',
    function: { name: mcpFunctionName(t.server, t.tool), description: `[${t.server}] ${t.description}`, parameters: t.inputSchema },
  }));
  return [...builtIn, ...mcp];
}

/** Validates the model's tool calls; returns problems for a repair request instead of throwing. */
export function parseToolCalls(
  raw: OpenAI.Chat.ChatCompletionMessageToolCall[],
  mcpTools: McpToolSpec[] = [],
): { calls: ToolCall[]; problems: string[] } {
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
    const name = tc.function.name as ToolName;
    const schema = TOOL_SCHEMAS[name];
    if (!schema) {
      problems.push(`there is no tool named "${tc.function.name}"`);
      continue;
    }
    const read = readToolArgs(name, tc.function.arguments, schema, (json) => looseArgs(name, json));
    if (!read.ok) {
      problems.push(read.problem);
      continue;
    }
    calls.push({ id: tc.id, name, args: read.args } as ToolCall);
  }
  return { calls, problems };
}

const asList = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : typeof v === 'string' && v.trim() ? [v] : undefined);

/**
 * The arguments small models get nearly right, put in the tool's shape: one `query` where a list
 * of `queries` is asked for, a `url` for `urls`, too many items, a missing crawl goal, stray keys.
 * What cannot be read this way still fails the schema and is asked for again.
 */
export function looseArgs(name: ToolName, json: unknown): unknown {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return json;
  const o = json as Record<string, unknown>;
  switch (name) {
    case 'web_search': {
      const queries = asList(o.queries ?? o.query ?? o.q ?? o.search_query ?? o.keywords);
      return queries ? { queries: queries.slice(0, 5) } : json;
    }
    case 'crawl': {
      const urls = asList(o.urls ?? o.url ?? o.links ?? o.pages);
      const goal = o.goal ?? o.purpose ?? o.query ?? o.question;
      return urls ? { urls: urls.slice(0, 5), goal: typeof goal === 'string' && goal.trim() ? goal : 'facts that answer the step' } : json;
    }
    case 'think': {
      const said = [o.reflection, o.thought, o.thoughts, o.text, o.content, o.note].find((v) => typeof v === 'string' && v.trim());
      return said ? { reflection: said } : json;
    }
    case 'knowledge_search': {
      const all = asList(o.query ?? o.queries);
      const alternatives = asList(o.alternatives)?.slice(0, 3) ?? all?.slice(1, 4);
      return all ? { query: all[0], ...(alternatives?.length ? { alternatives } : {}) } : json;
    }
    default:
      return json;
  }
}

function messageTokens(m: Message, counter: TokenCounter): number {
  const content = (m as { content?: unknown }).content;
  const calls = (m as { tool_calls?: unknown }).tool_calls;
  const text =
    (typeof content === 'string' ? content : content == null ? '' : JSON.stringify(content)) + (calls ? JSON.stringify(calls) : '');
  return counter.count(text) + PER_MESSAGE_TOKENS;
}

/**
 * Cuts the oldest tool results first until the conversation fits `budget` tokens. A cut result
 * keeps its opening and the ids of the sources it showed: the model read them, so they stay
 * citable (the compressor takes the ids a step may cite from its tool results).
 */
export function trimToBudget(
  messages: Message[],
  budget: number,
  counter: TokenCounter,
  keepLast = 2,
): { messages: Message[]; trimmed: number; fits: boolean } {
  const out = messages.map((m) => ({ ...m })) as Message[];
  // A token is at least one byte: a conversation of fewer bytes than the budget fits uncounted.
  if (out.reduce((a, m) => a + Buffer.byteLength(JSON.stringify(m)) + PER_MESSAGE_TOKENS, 0) <= budget) {
    return { messages: out, trimmed: 0, fits: true };
  }
  const sizes = out.map((m) => messageTokens(m, counter));
  let total = sizes.reduce((a, n) => a + n, 0);
  let trimmed = 0;
  const toolIdx = out.map((m, i) => (m.role === 'tool' ? i : -1)).filter((i) => i >= 0);
  for (const i of toolIdx.slice(0, Math.max(0, toolIdx.length - keepLast))) {
    if (total <= budget) break;
    const m = out[i] as OpenAI.Chat.ChatCompletionToolMessageParam;
    const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
    if (content.length <= TRIMMED_CHARS) continue;
    const ids = citedSourceIds(content);
    const shown = ids.length ? ` Sources it showed: ${ids.map((id) => `[${id}]`).join(' ')}` : '';
    const cut = `${content.slice(0, TRIMMED_CHARS)}\n[trimmed to save context]${shown}`;
    out[i] = { ...m, content: cut };
    const size = messageTokens(out[i]!, counter);
    total -= sizes[i]! - size;
    sizes[i] = size;
    trimmed++;
  }
  return { messages: out, trimmed, fits: total <= budget };
}
