// The load benchmark on two commits, in one run: this checkout against a baseline commit (a git
// worktree of it, given this checkout's bench/load.ts so both are measured the same way), one after
// the other, --rounds times in alternating order, and the ratio of each figure (this ÷ baseline in
// each round, and their geometric mean).
//   npm run bench:load-vs -- --baseline <commit> [--rounds 1] [--baseline-env K=V]... -- <bench:load arguments>
// --baseline-env gives the baseline's dev process a setting this checkout does not get (e.g. the
// SDK's own behaviour where node_modules, shared with the baseline, carries a newer patch).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../src/infra/paths';

const { values, positionals } = parseArgs({
  options: { baseline: { type: 'string' }, rounds: { type: 'string', default: '1' }, 'baseline-env': { type: 'string', multiple: true } },
  allowPositionals: true,
});
if (!values.baseline) throw new Error('--baseline <commit> is required');
const rounds = Number(values.rounds);

const work = mkdtempSync(path.join(os.tmpdir(), 'load-vs-'));
const base = path.join(work, 'baseline');
execFileSync('git', ['-C', PROJECT_ROOT, 'worktree', 'add', '--detach', '-q', base, values.baseline]);
copyFileSync(path.join(PROJECT_ROOT, 'bench', 'load.ts'), path.join(base, 'bench', 'load.ts'));
for (const shared of ['node_modules', '.tools']) {
  if (existsSync(path.join(PROJECT_ROOT, shared))) symlinkSync(path.join(PROJECT_ROOT, shared), path.join(base, shared));
}

type Figures = Record<string, number>;
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
const head = execFileSync('git', ['-C', PROJECT_ROOT, 'rev-parse', '--short', 'HEAD']).toString().trim();
console.log(
  `\nbench:load ${positionals.join(' ')}: ${head} (this checkout) against ${values.baseline}, ${rounds} round(s), the order alternating`,
);
console.log("baseline, this: medians over the rounds; ratio: geometric mean of each round's this ÷ baseline");
console.log(`${'figure'.padEnd(22)}${'baseline'.padStart(12)}${'this'.padStart(12)}${'ratio'.padStart(9)}  each round`);
for (const key of Object.keys(results.head[0]!)) {
  const b = median(results.baseline.map((f) => f[key] ?? NaN));
  const h = median(results.head.map((f) => f[key] ?? NaN));
  const perRound = results.head.map((f, i) => (f[key] ?? NaN) / (results.baseline[i]![key] ?? NaN));
  console.log(
    `${key.padEnd(22)}${b.toFixed(3).padStart(12)}${h.toFixed(3).padStart(12)}${meanRatio(perRound).toFixed(3).padStart(9)}  ${perRound.map((r) => r.toFixed(3)).join(' ')}`,
  );
}
