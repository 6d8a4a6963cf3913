#!/usr/bin/env node
// `npm run test:quick`: the inner loop's check. Type check, lint, format check and the tests that
// need no service (vitest.quick.config.ts: test/unit without Temporal, PostgreSQL, Docker or a
// browser), run side by side, each with its time; it fails if any of them fails. `npm test` stays
// the complete suite.
//
// `--checks-only` (what `npm test` runs before the suite): the static checks and the workflow
// bundle, side by side, without the tests.
import { spawn } from 'node:child_process';

const NODE = process.execPath;
const checksOnly = process.argv.includes('--checks-only');
const testArgs = process.argv.slice(2).filter((a) => a !== '--checks-only');
const all = [
  { name: 'type check', args: ['node_modules/typescript/bin/tsc', '--noEmit'] },
  { name: 'type check (web)', args: ['node_modules/typescript/bin/tsc', '-p', 'web', '--noEmit'] },
  { name: 'lint', args: ['node_modules/eslint/bin/eslint.js', '.'] },
  { name: 'format', args: ['node_modules/prettier/bin/prettier.cjs', '--check', '--log-level', 'warn', '.'] },
  {
    name: 'tests without services',
    args: ['node_modules/vitest/vitest.mjs', 'run', '--config', 'vitest.quick.config.ts', ...testArgs],
    tests: true,
  },
  // The cached bundle every worker and dev the suite spawns starts on (and the suite's own workers
  // read): bundled once here, not once per process. A bundle in the cache is this code's, bundled.
  { name: 'workflow bundle', args: ['bin/run-ts.mjs', 'scripts/bundle-workflows.ts', '--cache'], checksOnly: true },
];
const checks = all.filter((c) => (checksOnly ? !c.tests : !c.checksOnly));

const started = Date.now();
const results = await Promise.all(
  checks.map(
    (c) =>
      new Promise((resolve) => {
        const t0 = Date.now();
        const child = spawn(NODE, c.args, { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('close', (code) => resolve({ ...c, code, out, seconds: (Date.now() - t0) / 1000 }));
      }),
  ),
);
for (const r of results.filter((x) => x.code !== 0)) console.log(`\n--- ${r.name} failed:\n${r.out.trimEnd()}`);
console.log('');
for (const r of results) console.log(`${r.code === 0 ? 'ok  ' : 'FAIL'} ${r.seconds.toFixed(0).padStart(4)} s  ${r.name}`);
console.log(`     ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s  in all`);
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
