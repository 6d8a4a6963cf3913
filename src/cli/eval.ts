// `deep-research eval --dataset FILE.jsonl`: a question set run through the API with bounded
// concurrency. Writes the outputs in DeepResearch Bench's submission format (`<model>.jsonl`, one
// `{id, prompt, article}` per line, appended as each report is ready, so a killed eval resumes
// with --resume) and a grounding table computed by code from each report and run: citations,
// the share that resolved to retrieved sources, the share the claim check found supported by
// their evidence, tokens, cost and wall time.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApiFailure, type ApiClient } from './api-client';
import { defineCommand, parseOptions, UsageError } from './command-table';
import type { Io } from './io';
import type { ReportJson } from '../api/contract';
import type { ResearchView } from '../shared/messages';
import { bodyMarkdown } from '../shared/report-doc';

export const evalCommand = defineCommand({
  name: 'eval',
  usage: `  eval --dataset FILE.jsonl [--out DIR] [--concurrency N] [--limit N] [--resume]
       [--model-name NAME] [--option k=v]...   run a question set ({id, prompt} per line), write
                                   <DIR>/<NAME>.jsonl ({id, prompt, article}) and a grounding table`,
  parse: ({ flags, need }): EvalOptions => ({
    dataset: flags.dataset ?? need('--dataset FILE.jsonl'),
    out: flags.out ?? `eval-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}`,
    concurrency: wholeNumber('concurrency', flags.concurrency) ?? 2,
    limit: wholeNumber('limit', flags.limit),
    resume: flags.resume ?? false,
    modelName: flags['model-name'] ?? 'deep-research',
    options: parseOptions(flags.option ?? []),
  }),
  handle: async ({ client, io }, o) => (await runEval(client, io, o)).code,
});

/** A flag that counts something: unset, or a whole number of at least 1. */
function wholeNumber(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag} must be a whole number of at least 1`);
  return n;
}

export interface EvalItem {
  id: string;
  prompt: string;
}

export interface EvalRow {
  id: string;
  runId: string;
  status: string;
  error?: string;
  /** [n] markers the draft had. */
  citations: number;
  /** Share of them that named a retrieved source. */
  resolvedShare: number | null;
  /** Share of the checked ones the claim check found supported. */
  supportedShare: number | null;
  checked: number;
  removed: number;
  linksRemoved: number;
  references: number;
  tokens: number;
  /** Null when some of the run's tokens had no price (its cost is not known). */
  costUsd: number | null;
  wallSeconds: number;
}

/** What a row needs of the run's status view (`GET /v1/research/:id`). */
type RunState = Pick<ResearchView, 'status' | 'error' | 'usage'>;

/** Reads the dataset: one JSON object per line with `id` and `prompt` (or `question`); a bad line
 *  stops the eval before anything is submitted, naming the line. */
export function readDataset(file: string): EvalItem[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new EvalError(`cannot read the dataset ${file}: ${(err as Error).message}`);
  }
  const items: EvalItem[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new EvalError(`${file}:${i + 1}: not JSON`);
    }
    const id = typeof o.id === 'string' || typeof o.id === 'number' ? String(o.id) : undefined;
    const prompt = typeof o.prompt === 'string' ? o.prompt : typeof o.question === 'string' ? o.question : undefined;
    if (!id) throw new EvalError(`${file}:${i + 1}: no "id"`);
    if (!prompt?.trim()) throw new EvalError(`${file}:${i + 1}: no "prompt" (or "question")`);
    if (seen.has(id)) throw new EvalError(`${file}:${i + 1}: id ${id} appears twice`);
    seen.add(id);
    items.push({ id, prompt });
  });
  if (!items.length) throw new EvalError(`${file} has no questions`);
  return items;
}

export class EvalError extends Error {}

const MARKER = /\[(\d+)\](?!\()/g;

/** One run's row, from its report and status (the claim check's figures when the report has them). */
export function gradeRun(item: EvalItem, runId: string, status: RunState, report: ReportJson | undefined, wallSeconds: number): EvalRow {
  const usage = status.usage ?? { promptTokens: 0, completionTokens: 0, costUsd: 0 };
  const base = {
    id: item.id,
    runId,
    status: status.status,
    tokens: usage.promptTokens + usage.completionTokens,
    costUsd: usage.unpricedTokens ? null : usage.costUsd,
    wallSeconds,
  };
  if (!report) {
    return {
      ...base,
      ...(status.error ? { error: status.error } : {}),
      citations: 0,
      resolvedShare: null,
      supportedShare: null,
      checked: 0,
      removed: 0,
      linksRemoved: 0,
      references: 0,
    };
  }
  const body = bodyMarkdown(report.doc);
  const g = report.grounding;
  const citations = g ? g.citations : [...body.matchAll(MARKER)].length + report.removedCitations.length;
  const unresolved = g ? g.unresolved : report.removedCitations.length;
  return {
    ...base,
    citations,
    resolvedShare: citations ? (citations - unresolved) / citations : null,
    supportedShare: g && g.checked ? g.supported / g.checked : null,
    checked: g?.checked ?? 0,
    removed: g?.removed ?? 0,
    linksRemoved: g?.linksRemoved ?? report.removedLinks?.length ?? 0,
    references: report.references.length,
  };
}

const COLUMNS: [keyof EvalRow, string][] = [
  ['id', 'id'],
  ['status', 'status'],
  ['citations', 'citations'],
  ['resolvedShare', 'resolved'],
  ['checked', 'checked'],
  ['supportedShare', 'supported'],
  ['removed', 'removed'],
  ['linksRemoved', 'links removed'],
  ['references', 'references'],
  ['tokens', 'tokens'],
  ['costUsd', 'cost USD'],
  ['wallSeconds', 'wall s'],
];

const cell = (k: keyof EvalRow, v: unknown): string => {
  if (v === null || v === undefined) return '–';
  if (k === 'resolvedShare' || k === 'supportedShare') return `${Math.round((v as number) * 100)}%`;
  if (k === 'costUsd') return (v as number).toFixed(4);
  if (k === 'wallSeconds') return (v as number).toFixed(1);
  return String(v);
};

/** Means over the finished runs (shares over the runs that have them), for the table's last row. */
export function summarizeRows(rows: EvalRow[]): Record<string, number | string | null> {
  const done = rows.filter((r) => r.status === 'completed');
  const mean = (xs: (number | null)[]) => {
    const ok = xs.filter((x): x is number => x !== null);
    return ok.length ? ok.reduce((a, b) => a + b, 0) / ok.length : null;
  };
  return {
    id: 'mean',
    status: `${done.length}/${rows.length} completed`,
    citations: mean(done.map((r) => r.citations)),
    resolvedShare: mean(done.map((r) => r.resolvedShare)),
    checked: mean(done.map((r) => r.checked)),
    supportedShare: mean(done.map((r) => r.supportedShare)),
    removed: mean(done.map((r) => r.removed)),
    linksRemoved: mean(done.map((r) => r.linksRemoved)),
    references: mean(done.map((r) => r.references)),
    tokens: mean(done.map((r) => r.tokens)),
    // Unknown when any run's cost is: a mean over the priced ones alone would read as the whole.
    costUsd: done.some((r) => r.costUsd === null) ? null : mean(done.map((r) => r.costUsd)),
    wallSeconds: mean(done.map((r) => r.wallSeconds)),
  };
}

/** The table as text: aligned columns, one row per question, means last. */
export function renderTable(rows: EvalRow[]): string {
  const total = summarizeRows(rows);
  const fmt = (r: Record<string, unknown>) =>
    COLUMNS.map(([k]) => {
      const v = r[k];
      return typeof v === 'number' && r === total && !['resolvedShare', 'supportedShare', 'costUsd', 'wallSeconds'].includes(k)
        ? v.toFixed(1)
        : cell(k, v);
    });
  const body = [COLUMNS.map(([, h]) => h), ...rows.map((r) => fmt(r as unknown as Record<string, unknown>)), fmt(total)];
  const widths = COLUMNS.map((_, i) => Math.max(...body.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return (
    [line(body[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...body.slice(1, -1).map(line), line(body.at(-1)!)].join('\n') + '\n'
  );
}

function csv(rows: EvalRow[]): string {
  const keys: (keyof EvalRow)[] = [
    'id',
    'runId',
    'status',
    ...COLUMNS.map(([k]) => k).filter((k) => k !== 'id' && k !== 'status'),
    'error',
  ];
  const esc = (v: unknown) => {
    const s = v === null || v === undefined ? '' : String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [keys.join(','), ...rows.map((r) => keys.map((k) => esc(r[k])).join(','))].join('\n') + '\n';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export interface EvalOptions {
  dataset: string;
  out: string;
  concurrency: number;
  limit?: number | undefined;
  resume: boolean;
  modelName: string;
  options: Record<string, unknown>;
  pollMs?: number;
}

export async function runEval(
  client: ApiClient,
  io: Pick<Io, 'out' | 'err'>,
  o: EvalOptions,
): Promise<{ code: number; rows: EvalRow[]; submission: string }> {
  let items = readDataset(o.dataset);
  if (o.limit !== undefined) items = items.slice(0, o.limit);
  mkdirSync(o.out, { recursive: true });
  const submission = path.join(o.out, `${o.modelName}.jsonl`);
  const rowsFile = path.join(o.out, 'grounding.json');
  const done = new Set<string>();
  let rows: EvalRow[] = [];
  if (o.resume && existsSync(submission)) {
    for (const line of readFileSync(submission, 'utf8').split('\n'))
      if (line.trim()) done.add(String((JSON.parse(line) as { id: unknown }).id));
    if (existsSync(rowsFile)) rows = (JSON.parse(readFileSync(rowsFile, 'utf8')) as { rows: EvalRow[] }).rows.filter((r) => done.has(r.id));
  } else writeFileSync(submission, '');
  const todo = items.filter((i) => !done.has(i.id));
  if (done.size) io.err(`resuming: ${done.size} done, ${todo.length} to run\n`);
  // Unattended: nobody reviews the plan.
  const options = { ...o.options, autoAcceptPlan: true };
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      const item = todo[next++]!;
      const started = Date.now();
      let row: EvalRow;
      try {
        const { id: runId } = await client.research.start({ question: item.prompt, options });
        let status: ResearchView;
        for (;;) {
          status = await client.research.get(runId);
          if (TERMINAL.has(status.status)) break;
          await sleep(o.pollMs ?? 1000);
        }
        const wall = (Date.now() - started) / 1000;
        const report = status.status === 'completed' ? await client.research.reportJson(runId) : undefined;
        row = gradeRun(item, runId, status, report, wall);
        if (report) appendFileSync(submission, `${JSON.stringify({ id: item.id, prompt: item.prompt, article: report.markdown })}\n`);
      } catch (err) {
        if (!(err instanceof ApiFailure)) throw err;
        row = gradeRun(item, '', { status: 'failed', error: err.message }, undefined, (Date.now() - started) / 1000);
      }
      rows.push(row);
      io.err(`${item.id}: ${row.status}${row.error ? ` (${row.error})` : ''}\n`);
      writeFileSync(rowsFile, `${JSON.stringify({ rows, mean: summarizeRows(rows) }, null, 2)}\n`);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, todo.length)) }, worker));
  const order = new Map(items.map((i, n) => [i.id, n]));
  rows.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  writeFileSync(rowsFile, `${JSON.stringify({ rows, mean: summarizeRows(rows) }, null, 2)}\n`);
  writeFileSync(path.join(o.out, 'grounding.csv'), csv(rows));
  io.out(renderTable(rows));
  io.out(`\nSubmission: ${path.resolve(submission)}\nTable: ${path.resolve(o.out, 'grounding.csv')}\n`);
  const failed = rows.filter((r) => r.status !== 'completed');
  return { code: failed.length ? 1 : 0, rows, submission };
}
