// RECORD_HISTORIES=1 keeps the histories of chosen test runs in test/histories for the replay test
// (test/workflows/replay.test.ts). Test files run in parallel forks, so the index is updated under
// a lock file.
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { inject } from 'vitest';
import { ROOT } from './spawn';
import { temporalAddress } from './services';

const DIR = path.join(ROOT, 'test', 'histories');
const INDEX = path.join(DIR, 'workflow-ids.json');
const LOCK = path.join(DIR, '.workflow-ids.lock');

export const recording = process.env.RECORD_HISTORIES === '1';

/** Writes each workflow's history to test/histories/<file> and its id to workflow-ids.json (child
 *  ids derive from the parent's id, so replay needs the original ids); does nothing otherwise. */
export function recordHistories(pairs: [workflowId: string, file: string][]): void {
  if (!recording) return;
  for (const [workflowId, file] of pairs) {
    // The CLI's JSON export is the format historyFromJSON reads (as from the Web UI).
    const json = execFileSync(
      inject('temporalCliPath')!,
      ['workflow', 'show', '--workflow-id', workflowId, '--output', 'json', '--address', temporalAddress()!],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    writeFileSync(path.join(DIR, file), json);
  }
  withLock(() => {
    let index: Record<string, string> = {};
    try {
      index = JSON.parse(readFileSync(INDEX, 'utf8')) as Record<string, string>;
    } catch {
      // No index yet.
    }
    for (const [workflowId, file] of pairs) index[file] = workflowId;
    const sorted = Object.fromEntries(Object.entries(index).sort(([a], [b]) => a.localeCompare(b)));
    writeFileSync(INDEX, `${JSON.stringify(sorted, null, 2)}\n`);
  });
}

function withLock(fn: () => void): void {
  const end = Date.now() + 10_000;
  for (;;) {
    try {
      closeSync(openSync(LOCK, 'wx'));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || Date.now() > end) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    fn();
  } finally {
    rmSync(LOCK, { force: true });
  }
}
