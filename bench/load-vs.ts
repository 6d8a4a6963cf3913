// The load benchmark on two commits, in one run: this checkout against a baseline commit (a git
// worktree of it, given this checkout's bench/load.ts so both are measured the same way), one after
// the other, --rounds times in alternating order, and the ratio of each figure (this ÷ baseline in
// each round, and their geometric mean).
//   npm run bench:load-vs -- --baseline <commit> [--rounds 1] [--baseline-env K=V]... [--baseline-node-arg=FLAG]... -- <bench:load arguments>
// --baseline-env gives the baseline's dev process a setting this checkout does not get (e.g. the
// SDK's own behaviour where node_modules, shared with the baseline, carries a newer patch).
// --baseline-node-arg=FLAG gives the baseline's service processes a Node or V8 option.
// The baseline gets this checkout's bench (bench/load.ts and bench/support/) and its fake model
// (test/support/llm-server.ts, which records the token usage the bench reads): the measuring side
// is the same for both, and only the product differs. Its research script stays its own, as its
// answers fit its own prompts and schemas.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../src/infra/paths';

const { values, positionals } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    'baseline-env': { type: 'string', multiple: true },
    'baseline-node-arg': { type: 'string', multiple: true },
  },
  allowPositionals: true,
});
if (!values.baseline) throw new Error('--baseline <commit> is required');
const rounds = Number(values.rounds);

const work = mkdtempSync(path.join(os.tmpdir(), 'load-vs-'));
const base = path.join(work, 'baseline');
execFileSync('git', ['-C', PROJECT_ROOT, 'worktree', 'add', '--detach', '-q', base, values.baseline]);
for (const harness of ['bench/load.ts', 'bench/support', 'test/support/llm-server.ts']) {
  cpSync(path.join(PROJECT_ROOT, harness), path.join(base, harness), { recursive: true });
}
for (const shared of ['node_modules', '.tools']) {
  if (existsSync(path.join(PROJECT_ROOT, shared))) symlinkSync(path.join(PROJECT_ROOT, shared), path.join(base, shared));
}

/** The figures of one bench:load run: numbers, and a few tables (tokens by role) that are not compared here. */
type Figures = Record<string, unknown>;
function measure(root: string, label: string, round: number): Figures {
  const out = path.join(work, `${label}-${round}.json`);
  console.log(`round ${round + 1}/${rounds}: ${label}`);
  const r = spawnSync(
    process.execPath,
    [
      path.join(root, 'bin', 'run-ts.mjs'),
      path.join(root, 'bench', 'load.ts'),
      ...positionals,
      ...(label === 'baseline' ? (values['baseline-env'] ?? []).flatMap((kv) => ['--env', kv]) : []),
      ...(label === 'baseline' ? (values['baseline-node-arg'] ?? []).map((a) => `--node-arg=${a}`) : []),
      '--json',
      out,
    ],
    {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  if (r.status !== 0) throw new Error(`bench:load on ${label} exited ${r.status}`);
  return JSON.parse(readFileSync(out, 'utf8')) as Figures;
}

const results: { head: Figures[]; baseline: Figures[] } = { head: [], baseline: [] };
try {
  // The machine's speed drifts during a session (seen here: about 10% over four rounds, always
  // upward), which counts against whichever runs second: the order alternates, baseline first in
  // odd rounds and this checkout first in even ones, so an even number of rounds cancels a steady drift.
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      results.baseline.push(measure(base, 'baseline', i));
      results.head.push(measure(PROJECT_ROOT, 'head', i));
    } else {
      results.head.push(measure(PROJECT_ROOT, 'head', i));
      results.baseline.push(measure(base, 'baseline', i));
    }
  }
} finally {
  execFileSync('git', ['-C', PROJECT_ROOT, 'worktree', 'remove', '--force', base]);
  rmSync(work, { recursive: true, force: true });
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
};
/** The geometric mean of each round's ratio (this ÷ baseline, measured next to each other). */
const meanRatio = (rs: number[]) => Math.exp(rs.reduce((a, r) => a + Math.log(r), 0) / rs.length);
const num = (f: Figures, key: string) => (typeof f[key] === 'number' ? f[key] : NaN);
const head = execFileSync('git', ['-C', PROJECT_ROOT, 'rev-parse', '--short', 'HEAD']).toString().trim();
console.log(
  `\nbench:load ${positionals.join(' ')}: ${head} (this checkout) against ${values.baseline}, ${rounds} round(s), the order alternating`,
);
console.log("baseline, this: medians over the rounds; ratio: geometric mean of each round's this ÷ baseline");
/** What issue 37 asks to compare first: the whole stack's CPU, each process's, the work per run, p95. */
const HEADLINE = [
  'stackCpuPerRun',
  'devCpuPerRun',
  'temporalCpuPerRun',
  'postgresCpuPerRun',
  'eventsPerRun',
  'activityTasksPerRun',
  'workflowTasksPerRun',
  'p95S',
];
const numeric = Object.keys(results.head[0]!).filter((k) => typeof results.head[0]![k] === 'number');
const keys = [...HEADLINE.filter((k) => numeric.includes(k)), ...numeric.filter((k) => !HEADLINE.includes(k))];
console.log(`${'figure'.padEnd(24)}${'baseline'.padStart(12)}${'this'.padStart(12)}${'ratio'.padStart(9)}  each round`);
const headlines = HEADLINE.filter((k) => numeric.includes(k)).length;
for (const [n, key] of keys.entries()) {
  if (n === headlines) console.log('-'.repeat(57));
  const b = median(results.baseline.map((f) => num(f, key)));
  const h = median(results.head.map((f) => num(f, key)));
  const perRound = results.head.map((f, i) => num(f, key) / num(results.baseline[i]!, key));
  console.log(
    `${key.padEnd(24)}${b.toFixed(3).padStart(12)}${h.toFixed(3).padStart(12)}${meanRatio(perRound).toFixed(3).padStart(9)}  ${perRound.map((r) => r.toFixed(3)).join(' ')}`,
  );
}

// The token table by role, before and after: the medians over the rounds of each role's tokens per run.
type RoleTokens = Record<string, { calls: number; prompt: number; completion: number }>;
const tables = (fs: Figures[]) => fs.map((f) => (f.tokensByRole ?? {}) as RoleTokens);
const [tb, th] = [tables(results.baseline), tables(results.head)];
const roles = [...new Set([...tb, ...th].flatMap((t) => Object.keys(t)))].sort();
if (roles.length) {
  console.log(`\ntokens per run by role (medians): ${'prompt'.padStart(20)}${'completion'.padStart(24)}`);
  console.log(
    `${'role'.padEnd(18)}${'baseline'.padStart(10)}${'this'.padStart(10)}${'ratio'.padStart(7)}${'baseline'.padStart(10)}${'this'.padStart(10)}${'ratio'.padStart(7)}`,
  );
  for (const role of roles) {
    const cell = (which: 'prompt' | 'completion') => {
      const b = median(tb.map((t) => t[role]?.[which] ?? 0));
      const h = median(th.map((t) => t[role]?.[which] ?? 0));
      return `${b.toFixed(0).padStart(10)}${h.toFixed(0).padStart(10)}${(b ? (h / b).toFixed(2) : '-').padStart(7)}`;
    };
    console.log(`${role.padEnd(18)}${cell('prompt')}${cell('completion')}`);
  }
}
