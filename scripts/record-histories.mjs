#!/usr/bin/env node
// Records the replay test's histories again (test/histories, one per path a test keeps): runs
// every test file that calls recordHistories with RECORD_HISTORIES=1, on a fresh directory. Run it
// when workflow code changes in a way an execution in flight could not replay, after checking that
// no run of the old code still needs it (docs/development.md, "Histories").
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dir = path.join(root, 'test', 'histories');
const files = readdirSync(path.join(root, 'test'), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.ts') && readFileSync(path.join(root, 'test', f), 'utf8').includes('recordHistories('))
  .map((f) => path.join('test', f))
  .sort();
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
console.log(`recording histories from ${files.length} test files: ${files.join(' ')}`);
const run = spawnSync(process.execPath, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, RECORD_HISTORIES: '1' },
});
const kept = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'workflow-ids.json');
console.log(`${kept.length} histories in test/histories`);
process.exit(run.status ?? 1);
