// Tool calling for servers and models that do not do it natively. Two cases meet here:
// - a server that refuses `tools` (llama.cpp without --jinja: "tools param requires --jinja flag"):
//   the tools are described in the system message and the model answers with a JSON action,
//   "JSON-action mode", chosen once per endpoint and model and remembered;
// - a model that writes its tool call as text (`{"name":"web_search","arguments":{…}}`, Qwen's
//   `<tool_call>…</tool_call>`) although the server offered native tools.
// Either way the text becomes `tool_calls`, so the researcher sees one shape, and text that is a
// tool call is never taken for findings.
import type OpenAI from 'openai';
import { ApplicationFailure } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import type { Message } from '../store';
import { JSON_ACTION_TOOL, JSON_ACTIONS } from './model-call';
import { renderPart } from './render';

type Tool = OpenAI.Chat.ChatCompletionTool;
type ToolCall = OpenAI.Chat.ChatCompletionMessageToolCall;

/** A refusal that says the server cannot take `tools` at all (not that one call was wrong). */
export function refusesTools(err: unknown): boolean {
  if (!(err instanceof ApplicationFailure)) return false;
  if (err.type !== ErrorType.LlmUnsupported && err.type !== ErrorType.LlmBadRequest) return false;
  return /tools? param\w* requires --jinja|--jinja|tools? (?:are |is )?not supported|does not support (?:tools|function|tool)|tool[_ ]choice .*not supported|function calling is not/i.test(
    err.message,
  );
}

function toolName(t: Tool): string {
  return t.type === 'function' ? t.function.name : '';
}

/** The tools and the answer format, for the system message of a JSON-action request. */
export function jsonActionRules(tools: Tool[]): string {
  const catalog = tools
    .filter((t) => t.type === 'function')
    .map((t) => {
      const f = (t as OpenAI.Chat.ChatCompletionFunctionTool).function;
      return renderPart(JSON_ACTION_TOOL, {
        name: f.name,
        description: f.description ?? '',
        parameters: JSON.stringify(f.parameters ?? {}),
      });
    })
    .join('\n');
  const first = tools.map(toolName).find(Boolean) ?? 'tool';
  return renderPart(JSON_ACTIONS, { catalog, first });
}

/**
 * The conversation as a server without tool support can take it: the tool rules appended to the
 * system message, earlier tool calls written as the JSON the model was asked for, and tool results
 * as user messages.
 */
export function asJsonActions(messages: Message[], tools: Tool[]): Message[] {
  const rules = jsonActionRules(tools);
  const out: Message[] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      out.push({ role: 'system', content: `${String(m.content ?? '')}\n\n${rules}` });
    } else if (m.role === 'assistant' && m.tool_calls?.length) {
      const calls = m.tool_calls
        .filter((c) => c.type === 'function')
        .map((c) => ({ name: c.function.name, arguments: safeParse(c.function.arguments) }));
      out.push({ role: 'assistant', content: JSON.stringify({ tool_calls: calls }) });
    } else if (m.role === 'tool') {
      const name = findCallName(messages, m.tool_call_id);
      out.push({ role: 'user', content: `<tool_result name="${name}">\n${String(m.content ?? '')}\n</tool_result>` });
    } else {
      out.push(m);
    }
  }
  if (out[0]?.role !== 'system') out.unshift({ role: 'system', content: rules });
  // Some chat templates refuse two user messages in a row: merge neighbours.
  return out.reduce<Message[]>((acc, m) => {
    const prev = acc.at(-1);
    if (prev && prev.role === 'user' && m.role === 'user' && typeof prev.content === 'string' && typeof m.content === 'string') {
      acc[acc.length - 1] = { role: 'user', content: `${prev.content}\n\n${m.content}` };
    } else acc.push(m);
    return acc;
  }, []);
}

function findCallName(messages: Message[], id: string): string {
  for (const m of messages) {
    if (m.role !== 'assistant' || !m.tool_calls) continue;
    const c = m.tool_calls.find((t) => t.id === id);
    if (c && c.type === 'function') return c.function.name;
  }
  return 'tool';
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Every JSON value in the text: the whole text, fenced blocks, `<tool_call>` blocks, or objects
 *  on lines of their own. */
function jsonValues(text: string): unknown[] {
  const t = text.trim();
  const tagged = [...t.matchAll(/<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/g)].map((m) => m[1]!);
  const fenced = [...t.matchAll(/```(?:json)?\s*([\s\S]*?)```/g)].map((m) => m[1]!);
  const pieces = tagged.length ? tagged : fenced.length ? fenced : [t];
  const out: unknown[] = [];
  for (const p of pieces) {
    const whole = safeJson(p.trim());
    if (whole !== undefined) {
      out.push(whole);
      continue;
    }
    // Several objects, one per line.
    const lines = p
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const each = lines.map(safeJson);
    if (each.length && each.every((v) => v !== undefined)) out.push(...each);
    else return [];
  }
  return out;
}

function safeJson(text: string): unknown {
  if (!/^[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One call out of the shapes models write: {name, arguments}, {function: {…}}, {tool, args}, {action, action_input}. */
function callOf(v: unknown): { name: string; args: unknown; explicit: boolean } | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (o.function && typeof o.function === 'object') return callOf(o.function);
  const name = o.name ?? o.tool ?? o.tool_name ?? o.action;
  if (typeof name !== 'string' || !name) return undefined;
  const given = o.arguments ?? o.args ?? o.parameters ?? o.action_input ?? o.input;
  const args = given ?? {};
  return { name, args: typeof args === 'string' ? safeParse(args) : args, explicit: given !== undefined };
}

/**
 * The tool calls a reply wrote as text, when the whole reply is tool calls (an answer that merely
 * mentions JSON is left as an answer). A call of a tool that is not offered counts when it has
 * arguments: it is a failed tool call, which the caller asks for again, not findings. Ids are made
 * here: the model gave none.
 */
export function toolCallsInText(content: string, offered: Set<string>): ToolCall[] | undefined {
  if (!content.trim() || !/[{[]/.test(content)) return undefined;
  const calls: { name: string; args: unknown; explicit: boolean }[] = [];
  for (const v of jsonValues(content)) {
    const list = Array.isArray(v)
      ? v
      : v && typeof v === 'object' && Array.isArray((v as { tool_calls?: unknown }).tool_calls)
        ? ((v as { tool_calls: unknown[] }).tool_calls as unknown[])
        : [v];
    for (const item of list) {
      const c = callOf(item);
      if (!c) return undefined;
      calls.push(c);
    }
  }
  if (!calls.length || !calls.every((c) => offered.has(c.name) || c.explicit)) return undefined;
  const stamp = Date.now().toString(36);
  return calls.map((c, i) => ({
    id: `call_text_${stamp}_${i}`,
    type: 'function' as const,
    function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
  }));
}

export const toolNames = (tools: Tool[] | undefined) => new Set((tools ?? []).map(toolName).filter(Boolean));
