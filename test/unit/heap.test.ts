import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { BUFFER_POOL_BYTES, heapFlags } from '../../src/infra/heap';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Probed {
  before: number;
  after: number;
  main: number;
  slabBefore: number;
  slabAfter: number;
}
let probed: Promise<Probed> | undefined;
/** test/support/heap-probe.ts, run once in a process of its own (V8 flags hold for the whole process). */
const probe = () =>
  (probed ??= promisify(execFile)(
    process.execPath,
    [path.join(ROOT, 'bin', 'run-ts.mjs'), path.join(ROOT, 'test', 'support', 'heap-probe.ts')],
    {
      cwd: ROOT,
    },
  ).then(({ stdout }) => JSON.parse(stdout) as Probed));

describe('heap sizing', () => {
  it('sets a growth factor and the threads’ semi-space by default, and nothing for 0', () => {
    expect(heapFlags(loadConfig({}).heap)).toEqual(['--heap-growing-percent=50', '--max-semi-space-size=4']);
    expect(heapFlags(loadConfig({ HEAP_GROWTH_PERCENT: '0', THREAD_SEMI_SPACE_MB: '0' }).heap)).toEqual([]);
    expect(() => loadConfig({ HEAP_GROWTH_PERCENT: '-1' })).toThrow(/HEAP_GROWTH_PERCENT/);
  });

  it('uses flags this Node’s V8 knows (setFlagsFromString ignores unknown ones without a word)', () => {
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    for (const flag of heapFlags(loadConfig({}).heap)) expect(known).toContain(`  ${flag.slice(0, flag.indexOf('='))} (`);
  });

  it('gives threads started after it a small young generation, and leaves the main thread’s', async () => {
    const { before, after, main } = await probe();
    const MB = 1 << 20;
    // Two semi-spaces: at most 2 × 4 MB once tuned; V8's default lets a busy thread reach 2 × 16 MB.
    expect(after).toBeLessThanOrEqual(8 * MB);
    expect(before).toBeGreaterThan(8 * MB);
    expect(main).toBeGreaterThan(0);
  });

  it('cuts small Buffers from 8 KiB slabs once tuned, so a kept one pins 8 KiB, not the 64 KiB Node 24 uses', async () => {
    const { slabBefore, slabAfter } = await probe();
    expect(slabAfter).toBe(BUFFER_POOL_BYTES);
    expect(slabBefore).toBeGreaterThanOrEqual(BUFFER_POOL_BYTES);
  });
});
