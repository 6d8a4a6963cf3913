// The researcher's conversation outside the model calls: tool results written at the positions
// the workflow chose, and trimming after a context-length error.
import type { CrawlResult } from '../crawl';
import { summarize } from '../../shared/plain';
import type { SandboxResult } from '../sandbox';
import type { Message, NewEvent, Store, StoredSource } from '../store';
import { promptPart, text } from '../llm/prompt-def';
import { renderPart } from '../llm/render';
import { PYTHON_INPUT_DIR, trimToBudget } from './researcher-tools';
import type { ResearcherBudgets } from './role';
import { shareBudget, type BudgetReport, type ResultGroup } from './tool-budget';

export interface ToolResultInput {
  researchId: string;
  convKey: string;
  seq: number;
  toolCallId: string;
  /** `notes`: what the search did to its results that the model should know (dropped as too old,
   *  only avoided domains left, providers this worker lacks). */
  search?: { query: string; sourceIds: string[]; error?: string; notes?: string[] }[];
  crawl?: CrawlResult[];
  /** A python call's sandbox run, with the input files it was given (source ids, inline names). */
  python?: { run: SandboxResult; sources: string[]; data: string[] };
  text?: string;
  /** A `think` call's reflection: recorded in the run's timeline; the model is told it is noted. */
  think?: string;
  /** Pages the user asked the run to read: written as the user's message, not a tool's answer. */
  fromUser?: boolean;
}

/** A think call's answer: nothing was run. */
export const THOUGHT_NOTED = promptPart('researcher-react', 'think-noted', {});

/** How the pages the user asked for are put to the researcher. */
export const USER_PAGES = promptPart('researcher-react', 'user-pages', { pages: text });

/** The run's event for one tool call of a researcher: the queries or pages, and what they found. */
function toolEvent(input: ToolResultInput, sources: number, budget: BudgetReport): NewEvent {
  const [step = '', attempt = '1'] = input.convKey.split('/');
  const cut = budget.shortened || budget.leftOut ? { budget } : {};
  const where = { step, attempt: Number(attempt), ...cut };
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
  if (input.think !== undefined)
    return { key, type: 'think', data: { step, attempt: Number(attempt), thought: summarize(input.think, 600) } };
  if (input.python) {
    const { run } = input.python;
    return { key, type: 'tool', data: { ...where, tool: 'python', status: run.status, artifacts: run.artifacts.length } };
  }
  return { key, type: 'tool', data: { ...where, chars: input.text?.length ?? 0 } };
}

export function createConversationActivities(deps: { store: Store; budgets: ResearcherBudgets }) {
  const { store, budgets } = deps;

  /** The messages of tool results (and their run events), built from what the store holds: the
   *  sources of all their queries, pages and program inputs in one read. */
  async function toolResultMessages(researchId: string, inputs: ToolResultInput[]): Promise<WrittenToolResult[]> {
    const wanted = inputs.flatMap((input) => [
      ...(input.search ?? []).flatMap((s) => (s.error ? [] : s.sourceIds)),
      ...(input.crawl ?? []).flatMap((c) => (c.status === 'ok' && c.sourceId ? [c.sourceId] : [])),
      ...(input.python?.sources ?? []),
    ]);
    const stored = wanted.length ? await store.getSources(researchId, [...new Set(wanted)]) : [];
    return inputs.map((input) => toolResultMessage(input, stored, budgets));
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
      budgets.counter,
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

/** Tokens a page's extract keeps at least, or it is left out; a search hit's snippet. */
const MIN_PAGE_TOKENS = 120;
const MIN_HIT_TOKENS = 30;
/** Characters of a search hit's text offered (its snippet, or the start of a stored page). */
const HIT_CHARS = 1_200;

/**
 * One tool call's result as the model reads it, from the sources the store holds: its pages and
 * hits share the tool-result budget (src/activities/role-kit/tool-budget.ts), and only the sources
 * shown are returned as read.
 */
function toolResultMessage(input: ToolResultInput, stored: StoredSource[], budgets: ResearcherBudgets): WrittenToolResult {
  const byId = new Map(stored.map((x) => [x.sourceId, x]));
  const groups: ResultGroup[] = [];
  for (const s of input.search ?? []) {
    if (s.error) {
      groups.push({ head: `Search "${s.query}" failed: ${s.error}`, parts: [] });
      continue;
    }
    const hits = s.sourceIds.flatMap((id) => byId.get(id) ?? []);
    groups.push({
      head: `Search "${s.query}":${s.notes?.length ? ` (${s.notes.join('; ')})` : ''}`,
      empty: '(no results)',
      parts: hits.map((x) => ({
        head: `[${x.sourceId}] ${x.title} — ${x.url}`,
        body: x.content.slice(0, HIT_CHARS),
        sourceIds: [x.sourceId],
        minTokens: MIN_HIT_TOKENS,
        label: summarize(x.title || x.url, 80),
      })),
    });
  }
  if (input.crawl?.length) groups.push(crawlGroup(input.crawl, byId));
  if (input.python) {
    const sources = input.python.sources.flatMap((id) => byId.get(id) ?? []);
    groups.push({
      head: '',
      parts: [
        {
          head: '',
          body: pythonResultText(input.python, sources),
          sourceIds: sources.map((x) => x.sourceId),
          minTokens: 1,
          label: 'python',
        },
      ],
    });
  }
  if (input.text) groups.push({ head: '', parts: [{ head: '', body: input.text, sourceIds: [], minTokens: 1, label: 'text' }] });
  if (input.think !== undefined)
    groups.push({ head: '', parts: [{ head: '', body: renderPart(THOUGHT_NOTED, {}), sourceIds: [], minTokens: 1, label: 'think' }] });
  const shared = shareBudget(groups, budgets.toolResultTokens, budgets.counter);
  const content = shared.text.trim() || '(no output)';
  const message: Message = input.fromUser
    ? { role: 'user', content: renderPart(USER_PAGES, { pages: content }) }
    : { role: 'tool', tool_call_id: input.toolCallId, content };
  return {
    seq: input.seq,
    message,
    event: toolEvent(input, shared.shownIds.length, shared.budget),
    chars: content.length,
    sourceIds: shared.shownIds,
  };
}

/** A crawl's pages: each read page with its extract; the others with why they were not read. */
function crawlGroup(pages: CrawlResult[], byId: Map<string, StoredSource>): ResultGroup {
  const notRead = pages
    .filter((c) => c.status !== 'ok' || !c.sourceId)
    .map((c) => `${c.url}: ${c.status}${c.reason ? ` (${c.reason})` : ''}`);
  const parts = pages
    .filter((c) => c.status === 'ok' && c.sourceId)
    .map((c) => ({
      head: `[${c.sourceId}] ${c.title ?? ''} — ${c.url}`,
      body: byId.get(c.sourceId!)?.content ?? c.summary ?? '',
      sourceIds: [c.sourceId!],
      minTokens: MIN_PAGE_TOKENS,
      label: c.url,
    }));
  return { head: notRead.join('\n'), parts };
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
