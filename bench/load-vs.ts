// The load benchmark on two commits, in one run: this checkout against a baseline commit (a git
// worktree of it, given this checkout's bench/load.ts so both are measured the same way), one after
// the other, --rounds times, and the ratio of each figure (this ÷ baseline, median over rounds).
//   npm run bench:load-vs -- --baseline <commit> [--rounds 1] -- <bench:load arguments>
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../src/infra/paths';

const { values, positionals } = parseArgs({
  options: { baseline: { type: 'string' }, rounds: { type: 'string', default: '1' } },
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
    [path.join(root, 'bin', 'run-ts.mjs'), path.join(root, 'bench', 'load.ts'), ...positionals, '--json', out],
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
  for (let i = 0; i < rounds; i++) {
    results.baseline.push(measure(base, 'baseline', i));
    results.head.push(measure(PROJECT_ROOT, 'head', i));
  }
} finally {
  execFileSync('git', ['-C', PROJECT_ROOT, 'worktree', 'remove', '--force', base]);
  rmSync(work, { recursive: true, force: true });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const head = execFileSync('git', ['-C', PROJECT_ROOT, 'rev-parse', '--short', 'HEAD']).toString().trim();
console.log(`\nbench:load ${positionals.join(' ')}: ${head} (this checkout) against ${values.baseline}, median of ${rounds} round(s)`);
console.log(`${'figure'.padEnd(22)}${'baseline'.padStart(12)}${'this'.padStart(12)}${'ratio'.padStart(9)}`);
for (const key of Object.keys(results.head[0]!)) {
  const b = median(results.baseline.map((f) => f[key] ?? NaN));
  const h = median(results.head.map((f) => f[key] ?? NaN));
  console.log(`${key.padEnd(22)}${b.toFixed(3).padStart(12)}${h.toFixed(3).padStart(12)}${(h / b).toFixed(3).padStart(9)}`);
}
