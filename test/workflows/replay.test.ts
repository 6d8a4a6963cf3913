// Replays recorded histories against the current workflow code: a change that an execution in
// flight could not replay fails here before it ships. One history per path a test keeps (the
// tests call recordHistories from test/support/record-history.ts); `npm run record-histories`
// records them all again, on purpose, when the code changes that way.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/spawn';
import { workflowBundle } from '../support/services';

const dir = path.join(ROOT, 'test', 'histories');
const ids = JSON.parse(readFileSync(path.join(dir, 'workflow-ids.json'), 'utf8')) as Record<string, string>;
const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'workflow-ids.json');

/** The histories the tests keep: each name in a recordHistories call of a test file. */
function keptByTests(): string[] {
  const names: string[] = [];
  for (const f of readdirSync(path.join(ROOT, 'test'), { recursive: true }).map(String)) {
    if (!f.endsWith('.test.ts')) continue;
    const text = readFileSync(path.join(ROOT, 'test', f), 'utf8');
    for (const call of text.matchAll(/recordHistories\(\[([\s\S]*?)\]\);/g))
      for (const name of call[1]!.matchAll(/'([a-z0-9-]+\.json)'/g)) names.push(name[1]!);
  }
  return names.sort();
}

describe('replay of recorded histories', () => {
  it('has the history of each path the tests keep, each with its workflow id (npm run record-histories)', () => {
    const kept = keptByTests();
    expect(kept.length).toBeGreaterThanOrEqual(30);
    expect(new Set(kept).size).toBe(kept.length);
    expect([...files].sort()).toEqual(kept);
    expect(Object.keys(ids).sort()).toEqual(kept);
  });

  it.each(files)('%s replays without nondeterminism', async (file) => {
    const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { events: unknown[] };
    expect(history.events.length).toBeGreaterThan(10);
    expect(ids[file]).toBeTypeOf('string');
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, history, ids[file]);
  });
});
