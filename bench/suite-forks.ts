// How the suite's fork count changes its wall time: the same service files run with `maxForks` at
// the baseline (2) and at the setting under test (vitest.config.ts's own, or --forks), in
// alternating rounds, so a machine that changes speed within a sitting moves both alike. Prints
// each round and the ratio of the medians. Needs what the suite needs (PostgreSQL, the Temporal
// CLI: .ci/run or `npm run local-services` provisions them).
//   node bin/run-ts.mjs bench/suite-forks.ts [--rounds 2] [--forks 3] [--files test/api,test/workflows]
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    forks: { type: 'string', default: '3' },
    baseline: { type: 'string', default: '2' },
    files: { type: 'string', default: 'test/api,test/workflows' },
  },
});
/** Run from the project's root, as npm runs it. */
const ROOT = process.cwd();
const files = values.files.split(',').filter(Boolean);

/** A copy of vitest.config.ts with `maxForks` set to `forks`, beside it (its imports resolve alike). */
function configWith(forks: number): string {
  const file = path.join(ROOT, `vitest.bench-forks-${forks}.config.ts`);
  const source = readFileSync(path.join(ROOT, 'vitest.config.ts'), 'utf8');
  const changed = source.replace(/maxForks: \d+/, `maxForks: ${forks}`);
  if (!/maxForks: \d+/.test(source)) throw new Error('vitest.config.ts sets no maxForks');
  writeFileSync(file, changed);
  return file;
}

function timedRun(config: string): number {
  const started = Date.now();
  const r = spawnSync(
    process.execPath,
    // The fuzzer and fairness have passes of their own (scripts/run-tests.mjs).
    ['node_modules/vitest/vitest.mjs', 'run', '--config', config, ...files, '--exclude', 'test/api/openapi-fuzz.test.ts'],
    { cwd: ROOT, env: { ...process.env, CI: 'true', SUITE_EXCLUDE: 'test/workflows/fairness.test.ts' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (r.status !== 0) throw new Error(`vitest failed (exit ${r.status}):\n${String(r.stdout).slice(-3000)}`);
  return (Date.now() - started) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = Number(values.baseline);
const tried = Number(values.forks);
const configs = { [base]: configWith(base), [tried]: configWith(tried) };
const times: Record<number, number[]> = { [base]: [], [tried]: [] };
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const forks of round % 2 ? [base, tried] : [tried, base]) {
      const s = timedRun(configs[forks]!);
      times[forks]!.push(s);
      console.log(`round ${round}: ${forks} forks ${s.toFixed(0)} s`);
    }
  }
} finally {
  for (const f of Object.values(configs)) rmSync(f, { force: true });
}
console.log(
  `${files.join(' ')}: ${base} forks median ${median(times[base]!).toFixed(0)} s, ${tried} forks median ${median(times[tried]!).toFixed(0)} s, ratio ${(median(times[tried]!) / median(times[base]!)).toFixed(2)}`,
);
