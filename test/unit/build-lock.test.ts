import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withBuildLock } from '../../scripts/build-lock';

describe('build lock', () => {
  it('runs one build at a time: the second caller waits for the first to end, then runs', async () => {
    const lock = path.join(mkdtempSync(path.join(os.tmpdir(), 'lock-')), 'tool.lock');
    const events: string[] = [];
    const lines: string[] = [];
    const build = (name: string, ms: number) =>
      withBuildLock(
        lock,
        'the tool',
        (l) => lines.push(l),
        async () => {
          events.push(`${name} start`);
          await new Promise((r) => setTimeout(r, ms));
          events.push(`${name} end`);
          return name;
        },
      );
    const results = await Promise.all([build('a', 300), build('b', 10)]);
    expect(results).toEqual(['a', 'b']);
    expect(events).toEqual(['a start', 'a end', 'b start', 'b end']);
    expect(lines.some((l) => l.includes('waiting for another process building the tool'))).toBe(true);
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over a lock whose owner is gone, and frees the lock when the build throws', async () => {
    const lock = path.join(mkdtempSync(path.join(os.tmpdir(), 'lock-')), 'tool.lock');
    mkdirSync(lock);
    // A pid no process has (above the kernel's pid_max).
    writeFileSync(path.join(lock, 'pid'), '99999999');
    await expect(
      withBuildLock(
        lock,
        'the tool',
        () => undefined,
        async () => Promise.reject(new Error('build failed')),
      ),
    ).rejects.toThrow('build failed');
    expect(existsSync(lock)).toBe(false);
    expect(
      await withBuildLock(
        lock,
        'the tool',
        () => undefined,
        async () => 'built',
      ),
    ).toBe('built');
  });

  it('raises a background build to the normal priority once someone waits for it, and takes the lock when its owner is gone', async () => {
    const lock = path.join(mkdtempSync(path.join(os.tmpdir(), 'lock-')), 'tool.lock');
    const build = spawn('nice', ['-n', '19', 'sleep', '30'], { stdio: 'ignore' });
    await new Promise((r) => build.once('spawn', r));
    // nice execs sleep in the same process.
    await expect.poll(() => os.getPriority(build.pid!)).toBe(19);
    mkdirSync(lock);
    writeFileSync(path.join(lock, 'pid'), String(build.pid));
    const lines: string[] = [];
    const waiting = withBuildLock(
      lock,
      'the tool',
      (l) => lines.push(l),
      async () => 'mine',
    );
    const root = process.getuid?.() === 0;
    await expect
      .poll(() => (root ? os.getPriority(build.pid!) : lines.some((l) => l.includes('could not raise'))), { timeout: 10_000 })
      .toBe(root ? 0 : true);
    if (root) expect(lines.some((l) => l.includes('raised 1 process(es)'))).toBe(true);
    build.kill();
    expect(await waiting).toBe('mine');
  });
});
