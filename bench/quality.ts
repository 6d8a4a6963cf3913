// The quality of a report, measured here: each question of the fixture web (bench/quality/corpus.ts:
// made-up topics no model knows, five facts planted on specific pages, some found only by a second
// search) researched by `deep-research dev` against a real model and the fixture's search engine,
// and each report scored by code:
//   recall   the gold facts the report's body states;
//   cited    those it states next to a citation of a page that states them;
//   made up  citations that name no reference, or a reference to a page the fixture web does not have;
//   words    the body's length (executive summary and sections; notes and references left out).
// It prints a table (and --out writes it as JSON). Not a test: the model decides the numbers.
//   npm run local-llm &   # the real local model on :8088 (scripts/local-llm.ts)
//   node bin/run-ts.mjs bench/quality.ts [--llm http://127.0.0.1:8088/v1] [--questions tramway,alloy]
//        [--effort quick] [--repeat N] [--out .data/quality.json] [--label NAME] [--reports DIR]
//        [--app ../an-earlier-checkout]   # measure another build with this scorer
//        [--baseline ../an-earlier-checkout [--baseline-label NAME]]   # and this one, round by round
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ReportJson } from '../src/api/contract';
import { bodyMarkdown } from '../src/shared/report-doc';
import { listen } from '../test/support/http';
import { FakeSearxng } from '../test/support/search-server';
import { spawnDev } from './support/dev-stack';
import { PAGES, QUESTIONS, pageHtml, searchCorpus, type BenchQuestion } from './quality/corpus';

function readOptions() {
  return parseArgs({
    options: {
      llm: { type: 'string', default: 'http://127.0.0.1:8088/v1' },
      model: { type: 'string', default: 'local' },
      questions: { type: 'string' },
      effort: { type: 'string', default: 'quick' },
      out: { type: 'string' },
      label: { type: 'string', default: 'this build' },
      'timeout-min': { type: 'string', default: '30' },
      // A small model's runs vary: each question this many times, each run a row.
      repeat: { type: 'string', default: '1' },
      // Another checkout whose service is measured (an earlier build: before and after in one
      // scorer); its dependencies installed. Default: this one.
      app: { type: 'string' },
      // A second build measured in the same rounds (its dependencies installed): each round runs
      // every question on both builds, which goes first alternating, so a drift of the machine or
      // the model server falls on both; the comparison is printed last.
      baseline: { type: 'string' },
      'baseline-label': { type: 'string', default: 'baseline' },
      // Where each run's report is written (<build>-<question>-<round>.md).
      reports: { type: 'string' },
    },
  }).values;
}
type Options = ReturnType<typeof readOptions>;

export interface Score {
  id: string;
  status: string;
  facts: number;
  recalled: string[];
  cited: string[];
  citations: number;
  madeUp: number;
  words: number;
  seconds: number;
}

/** One line of text; a thousands separator a small model wrote with a space ("41, 000") read as one. */
const flat = (s: string) => s.replace(/\s+/g, ' ').replace(/(\d), (\d{3})\b/g, '$1,$2');

/** The citation numbers in a piece of text: [3], [3, 5], [3][5]. */
const citationsIn = (text: string) =>
  [...text.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)].flatMap((m) => m[1]!.split(',').map((n) => Number(n.trim())));

/** The body of a report from a build whose JSON has no `doc` (before 2026-11-30): its Markdown
 *  without the title, the notes above the body and the reference lists. */
function olderBody(markdown: string): string {
  const lists = markdown.search(/^## (?:References|Also consulted|Sources)\s*$/m);
  return (lists < 0 ? markdown : markdown.slice(0, lists))
    .replace(/^# [^\n]*\n/, '')
    .split('\n')
    .filter((l) => !l.startsWith('>'))
    .join('\n');
}

/** Scores one report against its question's gold facts. */
export function scoreReport(
  q: BenchQuestion,
  report: Pick<ReportJson, 'summary' | 'references'> & { doc?: ReportJson['doc']; markdown?: string },
  siteUrl: string,
) {
  const body = [report.summary ?? '', report.doc ? bodyMarkdown(report.doc) : olderBody(report.markdown ?? '')].join('\n\n');
  // A paragraph, or a list item, is where a fact and its citation sit together.
  const blocks = body.split(/\n{2,}|\n(?=\s*[-*] )/).map(flat);
  const urlOf = new Map(report.references.map((r) => [r.n, r.url]));
  const pathOf = (url: string | undefined) => (url?.startsWith(siteUrl) ? url.slice(siteUrl.length).split(/[?#]/)[0] : undefined);
  const recalled: string[] = [];
  const cited: string[] = [];
  for (const fact of q.facts) {
    const holding = blocks.filter((b) => fact.forms.some((re) => new RegExp(re.source, 'i').test(b)));
    if (!holding.length) continue;
    recalled.push(fact.id);
    // The citations of the sentence that states it, else of its paragraph.
    const near = holding.map((b) => {
      const sentence = b.split(/(?<=[.!?])\s+/).find((x) => fact.forms.some((re) => new RegExp(re.source, 'i').test(x)));
      const own = sentence ? citationsIn(sentence) : [];
      return own.length ? own : citationsIn(b);
    });
    const grounded = near.some((ns) => ns.some((n) => fact.pages.includes(pathOf(urlOf.get(n)) ?? '')));
    if (grounded) cited.push(fact.id);
  }
  const all = citationsIn(body);
  const known = new Set(PAGES.map((p) => p.path));
  const madeUp = all.filter((n) => !urlOf.has(n) || !known.has(pathOf(urlOf.get(n)) ?? '')).length;
  const words = flat(body).split(' ').filter(Boolean).length;
  return { recalled, cited, citations: all.length, madeUp, words };
}

/** A build under measurement: its `deep-research dev` and the runs scored so far. */
interface Build {
  label: string;
  dev: Awaited<ReturnType<typeof spawnDev>>['dev'];
  api: string;
  scores: Score[];
}

async function main(): Promise<void> {
  const values = readOptions();
  const questions = values.questions ? QUESTIONS.filter((q) => values.questions!.split(',').includes(q.id)) : QUESTIONS;
  const byPath = new Map(PAGES.map((p) => [p.path, pageHtml(p)]));
  const site = await listen((req, res) => {
    const html = byPath.get((req.url ?? '/').split('?')[0]!);
    res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html ?? '<html><body>Not found</body></html>');
  });
  const search = await new FakeSearxng({}, (q) => searchCorpus(q, site.url)).start();
  const reports = values.reports ?? mkdtempSync(path.join(os.tmpdir(), 'quality-bench-reports-'));
  mkdirSync(reports, { recursive: true });
  const start = async (label: string, app: string | undefined): Promise<Build> => {
    const { dev, apiUrl } = await spawnDev(
      mkdtempSync(path.join(os.tmpdir(), 'quality-bench-')),
      {
        OPENAI_BASE_URL: values.llm,
        OPENAI_API_KEY: 'sk-local',
        LLM_MODEL: values.model,
        LOG_LEVEL: 'warn',
        SEARCH_PROVIDERS: 'searxng',
        SEARXNG_URL: search.url,
        CRAWL_ALLOW_HOSTS: new URL(site.url).host,
      },
      [],
      app && path.resolve(app),
    );
    return { label, dev, api: apiUrl, scores: [] };
  };
  const builds = [await start(values.label, values.app)];
  if (values.baseline) builds.unshift(await start(values['baseline-label'], values.baseline));
  try {
    for (const b of builds) await b.dev.waitFor(/deep-research is running/, 180_000);
    for (let round = 0; round < Number(values.repeat); round++)
      for (const q of questions)
        for (const b of round % 2 ? [...builds].reverse() : builds) {
          const file = path.join(reports, `${builds.length > 1 ? `${slug(b.label)}-` : ''}${q.id}-${round + 1}.md`);
          b.scores.push(await research(values, b.api, q, site.url, file));
          console.log(`round ${round + 1}, ${q.id} on ${b.label}: ${summaryOf(b.scores.slice(-1))}`);
        }
  } finally {
    for (const b of builds) b.dev.child.kill('SIGINT');
    await Promise.all(builds.map((b) => new Promise((r) => b.dev.child.once('exit', r))));
    await Promise.all([site.close(), search.close()]);
  }
  for (const b of builds) print(values, b);
  if (builds.length > 1) compare(builds);
  if (values.out)
    writeFileSync(
      values.out,
      JSON.stringify({ effort: values.effort, builds: builds.map((b) => ({ label: b.label, scores: b.scores })) }, null, 2),
    );
}

const slug = (label: string) => label.replace(/[^\w.-]+/g, '-');

const ACTIVE = ['running', 'awaiting_review', 'awaiting_clarification'];

async function research(values: Options, api: string, q: BenchQuestion, siteUrl: string, reportFile: string): Promise<Score> {
  const started = Date.now();
  const res = await fetch(`${api}/v1/research`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ question: q.question, options: { autoAcceptPlan: true, effort: values.effort } }),
  });
  if (res.status !== 202) throw new Error(`POST /v1/research answered ${res.status}: ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  const deadline = started + Number(values['timeout-min']) * 60_000;
  let status = 'running';
  while (Date.now() < deadline) {
    status = ((await (await fetch(`${api}/v1/research/${id}`)).json()) as { status: string }).status;
    if (!ACTIVE.includes(status)) break;
    await new Promise((r) => setTimeout(r, 5_000));
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  // A run out of time stops, so the next one does not share the model server with it.
  if (ACTIVE.includes(status)) await fetch(`${api}/v1/research/${id}/cancel`, { method: 'POST' });
  const empty = { facts: q.facts.length, recalled: [], cited: [], citations: 0, madeUp: 0, words: 0 };
  if (status !== 'completed') return { id: q.id, status, seconds, ...empty };
  const report = (await (await fetch(`${api}/v1/research/${id}/report?format=json`)).json()) as ReportJson;
  writeFileSync(reportFile, report.markdown);
  return { id: q.id, status, seconds, facts: q.facts.length, ...scoreReport(q, report, siteUrl) };
}

const total = (scores: Score[], f: (s: Score) => number) => scores.reduce((n, s) => n + f(s), 0);

/** Recall, cited and made-up citations summed over runs. */
function summaryOf(scores: Score[]): string {
  const facts = total(scores, (s) => s.facts);
  return `recall ${total(scores, (s) => s.recalled.length)}/${facts}, cited ${total(scores, (s) => s.cited.length)}/${facts}, made-up citations ${total(scores, (s) => s.madeUp)}`;
}

function print(values: Options, build: Build): void {
  const rows = build.scores.map((s) => [
    s.id,
    s.status,
    `${s.recalled.length}/${s.facts}`,
    `${s.cited.length}/${s.facts}`,
    String(s.citations),
    String(s.madeUp),
    String(s.words),
    String(s.seconds),
    s.recalled.filter((f) => !s.cited.includes(f)).join(' ') || '-',
  ]);
  const head = ['question', 'status', 'recall', 'cited', 'citations', 'made up', 'words', 'seconds', 'stated, not cited'];
  console.log(`\nquality of ${build.label} (effort ${values.effort}, model at ${values.llm})`);
  console.log(table(head, rows));
  console.log(`all: ${summaryOf(build.scores)}`);
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** The builds side by side, per question and over all: facts recalled and cited per run (mean, and
 *  the lowest and highest run), completed runs, made-up citations. */
function compare(builds: Build[]): void {
  const ids = [...new Set(builds.flatMap((b) => b.scores.map((s) => s.id)))];
  const spread = (xs: number[]) => {
    const mean = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    return `${mean.toFixed(1)} (${Math.min(...xs)}-${Math.max(...xs)})`;
  };
  const rows = builds.flatMap((b) =>
    [...ids, 'all'].map((id) => {
      const runs = b.scores.filter((s) => id === 'all' || s.id === id);
      const of = (f: (s: Score) => number) => `${total(runs, f)}/${total(runs, (s) => s.facts)}, a run ${spread(runs.map(f))}`;
      return [
        b.label,
        id,
        `${runs.filter((s) => s.status === 'completed').length}/${runs.length}`,
        of((s) => s.recalled.length),
        of((s) => s.cited.length),
        String(total(runs, (s) => s.madeUp)),
        spread(runs.map((s) => s.seconds)),
      ];
    }),
  );
  console.log('\nthe builds compared (a run: mean, lowest-highest)');
  console.log(table(['build', 'question', 'completed', 'recall', 'cited', 'made up', 'seconds'], rows));
}

if (process.argv[1] && path.resolve(process.argv[1]).endsWith(path.join('bench', 'quality.ts'))) await main();
