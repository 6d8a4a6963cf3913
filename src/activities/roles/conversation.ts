// The researcher's conversation outside the model calls: tool results written at the positions
// the workflow chose, and trimming after a context-length error.
import type { CrawlResult } from '../crawl';
import { summarize } from '../../shared/plain';
import type { SandboxResult } from '../sandbox';
import type { Message, NewEvent, Store, StoredSource } from '../store';
import { promptPart, text } from '../llm/prompt-def';
import { renderPart } from '../llm/render';
import { MAX_TOOL_CHARS, PYTHON_INPUT_DIR, trimToBudget } from './researcher-tools';

export interface ToolResultInput {
  researchId: string;
  convKey: string;
  seq: number;
  toolCallId: string;
  search?: { query: string; sourceIds: string[]; error?: string }[];
  crawl?: CrawlResult[];
  /** A python call's sandbox run, with the input files it was given (source ids, inline names). */
  python?: { run: SandboxResult; sources: string[]; data: string[] };
  text?: string;
  /** Pages the user asked the run to read: written as the user's message, not a tool's answer. */
  fromUser?: boolean;
}

/** How the pages the user asked for are put to the researcher. */
export const USER_PAGES = promptPart('researcher-react', 'user-pages', { pages: text });

/** The run's event for one tool call of a researcher: the queries or pages, and what they found. */
function toolEvent(input: ToolResultInput, sources: number): NewEvent {
  const [step = '', attempt = '1'] = input.convKey.split('/');
  const where = { step, attempt: Number(attempt) };
  const key = `tool:${input.convKey}:${input.seq}:${input.toolCallId}`;
  if (input.search) {
    const queries = input.search.map((q) => ({
      query: q.query,
      results: q.sourceIds.length,
      ...(q.error ? { error: summarize(q.error, 200) } : {}),
    }));
    return { key, type: 'search', data: { ...where, queries, sources } };
  }
  if (input.crawl) {
    const pages = input.crawl.map((p) => ({
      url: p.url,
      status: p.status,
      ...(p.reason ? { reason: summarize(p.reason, 200) } : {}),
      ...(p.title ? { title: summarize(p.title, 120) } : {}),
    }));
    return { key, type: 'crawl', data: { ...where, pages, sources } };
  }
  if (input.python) {
    const { run } = input.python;
    return { key, type: 'tool', data: { ...where, tool: 'python', status: run.status, artifacts: run.artifacts.length } };
  }
  return { key, type: 'tool', data: { ...where, chars: input.text?.length ?? 0 } };
}

export function createConversationActivities(deps: { store: Store }) {
  const { store } = deps;

  /** The messages of tool results (and their run events), built from what the store holds: the
   *  sources of all their queries, pages and program inputs in one read. */
  async function toolResultMessages(researchId: string, inputs: ToolResultInput[]): Promise<WrittenToolResult[]> {
    const wanted = inputs.flatMap((input) => [
      ...(input.search ?? []).flatMap((s) => (s.error ? [] : s.sourceIds)),
      ...(input.crawl ?? []).flatMap((c) => (c.status === 'ok' && c.sourceId ? [c.sourceId] : [])),
      ...(input.python?.sources ?? []),
    ]);
    const stored = wanted.length ? await store.getSources(researchId, [...new Set(wanted)]) : [];
    return inputs.map((input) => toolResultMessage(input, stored));
  }

  /**
   * Writes tool results into one conversation, with any other messages at their positions, in one
   * statement, and their run events in another; each write is the same on every attempt.
   */
  async function writeToolResults(
    conversation: { researchId: string; convKey: string },
    inputs: ToolResultInput[],
    others: { seq: number; message: Message }[] = [],
  ): Promise<WrittenToolResult[]> {
    const written = await toolResultMessages(conversation.researchId, inputs);
    await store.conversations.putAll(conversation.researchId, conversation.convKey, [...others, ...written]);
    await store.events.append(
      conversation.researchId,
      written.map((w) => w.event),
    );
    return written;
  }

  /** Writes the result of one tool call into the conversation (an MCP tool's, from its activity). */
  async function appendToolResult(input: ToolResultInput): Promise<{ chars: number; sourceIds: string[] }> {
    const [w] = await writeToolResults(input, [input]);
    return { chars: w!.chars, sourceIds: w!.sourceIds };
  }

  /** After a context-length error: shortens every tool result but the last `keepLast`. */
  async function trimConversation(input: { researchId: string; convKey: string; keepLast: number }): Promise<{ trimmed: number }> {
    const rows = await store.conversations.load(input.researchId, input.convKey);
    const fitted = trimToBudget(
      rows.map((r) => r.message),
      0,
      input.keepLast,
    );
    for (let i = 0; i < rows.length; i++) {
      if (fitted.messages[i] !== rows[i]!.message && JSON.stringify(fitted.messages[i]) !== JSON.stringify(rows[i]!.message)) {
        await store.conversations.put(input.researchId, input.convKey, rows[i]!.seq, fitted.messages[i]!);
      }
    }
    return { trimmed: fitted.trimmed };
  }

  return { appendToolResult, writeToolResults, trimConversation };
}

/** A tool result written into a conversation: its position and message, its run event, and what
 *  it holds. */
export interface WrittenToolResult {
  seq: number;
  message: Message;
  event: NewEvent;
  chars: number;
  sourceIds: string[];
}

/** One tool call's result as the model reads it, from the sources the store holds. */
function toolResultMessage(input: ToolResultInput, stored: StoredSource[]): WrittenToolResult {
  const parts: string[] = [];
  const ids = new Set<string>();
  const among = (sourceIds: string[]) => {
    const set = new Set(sourceIds);
    return stored.filter((x) => set.has(x.sourceId));
  };
  for (const s of input.search ?? []) {
    if (s.error) {
      parts.push(`Search "${s.query}" failed: ${s.error}`);
      continue;
    }
    const sources = among(s.sourceIds);
    const hits = sources.map((x) => `[${x.sourceId}] ${x.title} — ${x.url}\n${x.content.slice(0, 400)}`);
    parts.push(`Search "${s.query}":\n${hits.length ? hits.join('\n') : '(no results)'}`);
    sources.forEach((x) => ids.add(x.sourceId));
  }
  for (const c of input.crawl ?? []) {
    if (c.status !== 'ok' || !c.sourceId) {
      parts.push(`${c.url}: ${c.status}${c.reason ? ` (${c.reason})` : ''}`);
      continue;
    }
    const source = stored.find((x) => x.sourceId === c.sourceId);
    parts.push(`[${c.sourceId}] ${c.title ?? ''} — ${c.url}\n${source?.content.slice(0, 2_500) ?? c.summary ?? ''}`);
    ids.add(c.sourceId);
  }
  if (input.python) {
    const sources = among(input.python.sources);
    sources.forEach((x) => ids.add(x.sourceId));
    parts.push(pythonResultText(input.python, sources));
  }
  if (input.text) parts.push(input.text);
  let content = parts.join('\n\n') || '(no output)';
  if (content.length > MAX_TOOL_CHARS) content = `${content.slice(0, MAX_TOOL_CHARS)}\n[output trimmed]`;
  const message: Message = input.fromUser
    ? { role: 'user', content: renderPart(USER_PAGES, { pages: content }) }
    : { role: 'tool', tool_call_id: input.toolCallId, content };
  return { seq: input.seq, message, event: toolEvent(input, ids.size), chars: content.length, sourceIds: [...ids] };
}

/** A python run as the model reads it: what it was given, how it ended, what it printed and kept. */
function pythonResultText(python: NonNullable<ToolResultInput['python']>, sources: { sourceId: string; title: string }[]): string {
  const { run } = python;
  const titles = new Map(sources.map((s) => [s.sourceId, s.title]));
  const inputs = [...python.sources.map((id) => `${id}.md (${summarize(titles.get(id) ?? 'unknown source', 80)} [${id}])`), ...python.data];
  const lines = [
    `python: ${run.status}: ${run.message}`,
    inputs.length ? `Input files in ${PYTHON_INPUT_DIR}: ${inputs.join(', ')}` : '',
    run.stdout ? `stdout${run.stdoutTruncated ? ' (the end of it)' : ''}:\n${run.stdout}` : 'stdout: (nothing printed)',
    run.stderr && run.status !== 'ok' ? `stderr${run.stderrTruncated ? ' (the end of it)' : ''}:\n${run.stderr}` : '',
    run.artifacts.length ? `Files kept: ${run.artifacts.map((a) => `${a.name} (${a.contentType}, ${a.bytes} bytes)`).join(', ')}` : '',
    run.rejected.length ? `Files not kept: ${run.rejected.map((r) => `${r.name} (${r.reason})`).join(', ')}` : '',
  ];
  return lines.filter(Boolean).join('\n');
}
