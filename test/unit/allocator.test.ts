import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allocatorSetting, loadConfig } from '../../src/config';
import { JEMALLOC_PATHS, planAllocator, PRELOADED_MARK, type AllocatorEnv } from '../../src/infra/allocator';
import { ConfigError } from '../../src/shared/errors';

const ROOT = path.resolve(import.meta.dirname, '../..');
const LIB = JEMALLOC_PATHS[0]!;

function machine(over: Partial<AllocatorEnv> & { files?: string[]; maps?: string } = {}): AllocatorEnv {
  const files = new Set(over.files ?? [LIB]);
  return {
    platform: 'linux',
    env: {},
    exists: (p) => files.has(p),
    realpath: (p) => p,
    mappedFiles: () => over.maps ?? '7f00-7f01 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n',
    execve: () => {
      throw new Error('not in a unit test');
    },
    execPath: '/usr/bin/node',
    args: ['--expose-gc', '/app/bin/deep-research.mjs', 'worker'],
    ...over,
  };
}

describe('the allocator setting', () => {
  it('defaults to auto and takes system or an absolute path; anything else is refused with the reason', () => {
    expect(loadConfig({}).allocator).toBe('auto');
    expect(loadConfig({ ALLOCATOR: '/opt/lib/libjemalloc.so.2' }).allocator).toBe('/opt/lib/libjemalloc.so.2');
    expect(() => loadConfig({ ALLOCATOR: 'jemalloc' })).toThrow(/ALLOCATOR.*absolute path/s);
    expect(allocatorSetting({ ALLOCATOR: 'jemalloc' })).toBeUndefined();
    expect(allocatorSetting({ ALLOCATOR: 'system' })).toBe('system');
  });
});

describe('planAllocator', () => {
  it('auto: replaces the process with jemalloc preloaded ahead of any preload already asked for, same arguments', () => {
    const plan = planAllocator('auto', machine({ env: { LD_PRELOAD: '/opt/trace.so', KEEP: '1' } }));
    expect(plan).toEqual({
      kind: 'replace',
      library: LIB,
      args: ['--expose-gc', '/app/bin/deep-research.mjs', 'worker'],
      env: { LD_PRELOAD: `${LIB}:/opt/trace.so`, KEEP: '1', [PRELOADED_MARK]: LIB },
    });
  });

  it('auto keeps the system allocator where there is no jemalloc, off Linux, or without process.execve', () => {
    expect(planAllocator('auto', machine({ files: [] }))).toMatchObject({ kind: 'system', reason: expect.stringMatching(/libjemalloc2/) });
    expect(planAllocator('auto', machine({ platform: 'darwin' }))).toMatchObject({ kind: 'system', reason: expect.stringMatching(/darwin/) });
    expect(planAllocator('auto', machine({ execve: undefined }))).toMatchObject({ kind: 'system', reason: expect.stringMatching(/execve/) });
    expect(planAllocator('system', machine())).toEqual({ kind: 'system', reason: 'ALLOCATOR=system' });
  });

  it('does not replace a process that already has the library (preloaded by whoever started it)', () => {
    const maps = `7f00-7f01 r-xp 0 08:01 1 ${LIB}\n`;
    expect(planAllocator('auto', machine({ maps, env: { LD_PRELOAD: LIB } }))).toEqual({ kind: 'preloaded', library: LIB });
  });

  it('after the replacement: reports the library and takes the preload out of what its children inherit', () => {
    const env: NodeJS.ProcessEnv = { LD_PRELOAD: `${LIB}:/opt/trace.so`, [PRELOADED_MARK]: LIB };
    const plan = planAllocator('auto', machine({ env, maps: `7f00-7f01 r-xp 0 08:01 1 ${LIB}\n` }));
    expect(plan).toEqual({ kind: 'preloaded', library: LIB });
    expect(env).toEqual({ LD_PRELOAD: '/opt/trace.so' });
  });

  it('a preload the loader refused: auto falls back to the system allocator, a named library is a configuration error', () => {
    const refused = () => ({ LD_PRELOAD: LIB, [PRELOADED_MARK]: LIB });
    const env = refused();
    expect(planAllocator('auto', machine({ env }))).toMatchObject({ kind: 'system', reason: expect.stringMatching(/did not preload/) });
    expect(env).toEqual({});
    expect(() => planAllocator(LIB, machine({ env: refused() }))).toThrow(ConfigError);
  });

  it('a named library that does not exist is a configuration error, not a silent fallback', () => {
    expect(() => planAllocator('/opt/none/libjemalloc.so.2', machine())).toThrow(/ALLOCATOR: \/opt\/none\/libjemalloc.so.2 does not exist/);
  });
});

// The real thing: a process that replaces itself, on this machine's jemalloc (CI installs libjemalloc2).
const installed = JEMALLOC_PATHS.find((p) => existsSync(p));
describe.skipIf(process.platform !== 'linux' || (!installed && !process.env.CI))('replacing the process', () => {
  const probe = (setting: string) =>
    new Promise<{ childPid: number; out: Record<string, unknown> }>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'test', 'support', 'allocator-probe.mjs')], {
        cwd: ROOT,
        env: { ...process.env, ALLOCATOR_PROBE_SETTING: setting, LD_PRELOAD: '' },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve({ childPid: child.pid!, out: JSON.parse(out) as Record<string, unknown> }) : reject(new Error(`exit ${code}: ${err}`))));
    });

  it('auto: the same process (same id) runs on jemalloc, and its children would not inherit the preload', async () => {
    const { childPid, out } = await probe('auto');
    expect(out).toEqual({ pid: childPid, jemallocMapped: true, inUse: { kind: 'preloaded', library: installed }, preload: null, mark: null });
  });

  it('system: no replacement, no jemalloc', async () => {
    const { childPid, out } = await probe('system');
    expect(out).toEqual({ pid: childPid, jemallocMapped: false, inUse: { kind: 'system', reason: 'ALLOCATOR=system' }, preload: '', mark: null });
  });
});
