#!/usr/bin/env node
// Runs vitest, then prints one plain closing line, "N passed, N failed, N skipped". Under CI=true
// a skipped test fails the run: every test must have found the services it needs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

const out = path.resolve('.data', 'test-results.json');
mkdirSync(path.dirname(out), { recursive: true });
rmSync(out, { force: true });
const r = spawnSync(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
let code = r.status ?? 1;
try {
  const res = JSON.parse(readFileSync(out, 'utf8'));
  const skipped = res.numPendingTests + res.numTodoTests;
  console.log(`\n${res.numPassedTests} passed, ${res.numFailedTests} failed, ${skipped} skipped`);
  if (process.env.CI === 'true' && skipped > 0) {
    console.error(`CI=true: ${skipped} test(s) skipped; under CI every test must run`);
    code = code || 1;
  }
  if (res.numTotalTests === 0) {
    console.error('no tests ran');
    code = code || 1;
  }
} catch (err) {
  console.error(`no test results (${err.message})`);
  code = code || 1;
}
process.exit(code);
