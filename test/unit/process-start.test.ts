import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, startSettings } from '../../src/config';
import { JEMALLOC_PATHS, planStart, PRELOADED_MARK, type ProcessFacts, type StartSettings } from '../../src/infra/process-start';
import { ConfigError } from '../../src/shared/errors';

const ROOT = path.resolve(import.meta.dirname, '../..');
const LIB = JEMALLOC_PATHS[0]!;
const AUTO: StartSettings = { allocator: 'auto', mainSemiSpaceMb: 16 };
const SCRIPT = ['/app/bin/deep-research.mjs', 'worker'];

function machine(over: Partial<ProcessFacts> & { files?: string[]; maps?: string } = {}): ProcessFacts {
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
    nodeArgs: ['--expose-gc'],
    scriptArgs: SCRIPT,
    ...over,
  };
}
const mapped = `7f00-7f01 r-xp 0 08:01 1 ${LIB}\n`;

describe('the start settings', () => {
  it('default to jemalloc where installed and a 16 MB main semi-space; anything else is refused with the reason', () => {
    expect(loadConfig({}).start).toEqual({ allocator: 'auto', mainSemiSpaceMb: 16 });
    expect(loadConfig({ ALLOCATOR: '/opt/lib/libjemalloc.so.2', MAIN_SEMI_SPACE_MB: '0' }).start).toEqual({
      allocator: '/opt/lib/libjemalloc.so.2',
      mainSemiSpaceMb: 0,
    });
    expect(() => loadConfig({ ALLOCATOR: 'jemalloc' })).toThrow(/ALLOCATOR.*absolute path/s);
    expect(startSettings({ ALLOCATOR: 'jemalloc' })).toBeUndefined();
    expect(startSettings({ MAIN_SEMI_SPACE_MB: 'lots' })).toBeUndefined();
    expect(startSettings({ ALLOCATOR: 'system' })).toEqual({ allocator: 'system', mainSemiSpaceMb: 16 });
  });
});

describe('planStart', () => {
  it('replaces the process with jemalloc preloaded ahead of any preload already asked for, and the flag ahead of Node’s options', () => {
    const plan = planStart(AUTO, machine({ env: { LD_PRELOAD: '/opt/trace.so', KEEP: '1' } }));
    expect(plan).toEqual({
      kind: 'replace',
      args: ['--max-semi-space-size=16', '--expose-gc', ...SCRIPT],
      env: { LD_PRELOAD: `${LIB}:/opt/trace.so`, KEEP: '1', [PRELOADED_MARK]: LIB },
    });
  });

  it('replaces it for the flag alone where there is no jemalloc, and not at all when neither is wanted', () => {
    expect(planStart(AUTO, machine({ files: [] }))).toEqual({
      kind: 'replace',
      args: ['--max-semi-space-size=16', '--expose-gc', ...SCRIPT],
      env: { [PRELOADED_MARK]: '' },
    });
    expect(planStart({ allocator: 'system', mainSemiSpaceMb: 0 }, machine())).toEqual({
      kind: 'settled',
      allocator: { kind: 'system', reason: 'ALLOCATOR=system' },
      mainSemiSpaceMb: undefined,
    });
  });

  it('does not replace a process that already has both (from whoever started it)', () => {
    const viaOptions = planStart(AUTO, machine({ maps: mapped, env: { LD_PRELOAD: LIB, NODE_OPTIONS: '--max-semi-space-size=8' } }));
    expect(viaOptions).toEqual({ kind: 'settled', allocator: { kind: 'preloaded', library: LIB }, mainSemiSpaceMb: 8 });
    const viaArgs = planStart(AUTO, machine({ maps: mapped, nodeArgs: ['--max-semi-space-size=32'] }));
    expect(viaArgs).toEqual({ kind: 'settled', allocator: { kind: 'preloaded', library: LIB }, mainSemiSpaceMb: 32 });
  });

  it('keeps things as they are off Linux for the allocator, and wherever Node cannot replace its process', () => {
    expect(planStart({ allocator: 'auto', mainSemiSpaceMb: 0 }, machine({ platform: 'darwin' }))).toMatchObject({
      kind: 'settled',
      allocator: { kind: 'system', reason: expect.stringMatching(/darwin/) },
    });
    expect(planStart(AUTO, machine({ execve: undefined }))).toMatchObject({
      kind: 'settled',
      allocator: { kind: 'system', reason: expect.stringMatching(/execve/) },
      mainSemiSpaceMb: undefined,
    });
  });

  it('after the replacement: says what it runs on and takes the preload out of what its children inherit', () => {
    const env: NodeJS.ProcessEnv = { LD_PRELOAD: `${LIB}:/opt/trace.so`, [PRELOADED_MARK]: LIB };
    expect(planStart(AUTO, machine({ env, maps: mapped, nodeArgs: ['--max-semi-space-size=16', '--expose-gc'] }))).toEqual({
      kind: 'settled',
      allocator: { kind: 'preloaded', library: LIB },
      mainSemiSpaceMb: 16,
    });
    expect(env).toEqual({ LD_PRELOAD: '/opt/trace.so' });
    const flagOnly: NodeJS.ProcessEnv = { [PRELOADED_MARK]: '' };
    expect(planStart(AUTO, machine({ files: [], env: flagOnly, nodeArgs: ['--max-semi-space-size=16'] }))).toMatchObject({
      kind: 'settled',
      allocator: { kind: 'system', reason: expect.stringMatching(/libjemalloc2/) },
    });
    expect(flagOnly).toEqual({});
  });

  it('a preload the loader refused: auto falls back to the system allocator, a named library is a configuration error', () => {
    const refused = () => ({ LD_PRELOAD: LIB, [PRELOADED_MARK]: LIB });
    const env = refused();
    expect(planStart(AUTO, machine({ env }))).toMatchObject({
      allocator: { kind: 'system', reason: expect.stringMatching(/did not preload/) },
    });
    expect(env).toEqual({});
    expect(() => planStart({ allocator: LIB, mainSemiSpaceMb: 16 }, machine({ env: refused() }))).toThrow(ConfigError);
  });

  it('a named library that does not exist is a configuration error, not a silent fallback', () => {
    expect(() => planStart({ allocator: '/opt/none/libjemalloc.so.2', mainSemiSpaceMb: 16 }, machine())).toThrow(
      /ALLOCATOR: \/opt\/none\/libjemalloc.so.2 does not exist/,
    );
  });
});

// The real thing: a process that replaces itself (CI installs libjemalloc2).
const installed = JEMALLOC_PATHS.find((p) => existsSync(p));
describe.skipIf(process.platform !== 'linux' || (!installed && !process.env.CI))('replacing the process', () => {
  const probe = (allocator: string, semiSpaceMb: string) =>
    new Promise<{ childPid: number; out: Record<string, unknown> }>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'test', 'support', 'process-start-probe.mjs')], {
        cwd: ROOT,
        env: { ...process.env, PROBE_ALLOCATOR: allocator, PROBE_SEMI_SPACE_MB: semiSpaceMb, LD_PRELOAD: '', NODE_OPTIONS: '' },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0
          ? resolve({ childPid: child.pid!, out: JSON.parse(out) as Record<string, unknown> })
          : reject(new Error(`exit ${code}: ${err}`)),
      );
    });

  it('auto: the same process (same id) runs on jemalloc with a bounded young generation; its children would inherit neither', async () => {
    const { childPid, out } = await probe('auto', '8');
    expect(out).toMatchObject({
      pid: childPid,
      jemallocMapped: true,
      settled: { kind: 'settled', allocator: { kind: 'preloaded', library: installed }, mainSemiSpaceMb: 8 },
      preload: null,
      mark: null,
    });
    // Two semi-spaces of 8 MB (V8 doubles the young generation without pointer compression): 16 MB,
    // a few pages more while a scavenge is under way (20 MB seen on a loaded machine). V8's own
    // size here is 128 MB (the next test), so 32 still tells the two apart.
    expect(out.newSpaceMb).toBeLessThanOrEqual(32);
  });

  it('system and V8’s default: no replacement, no jemalloc, and the young generation V8 sizes itself', async () => {
    const { childPid, out } = await probe('system', '0');
    expect(out).toMatchObject({
      pid: childPid,
      jemallocMapped: false,
      settled: { kind: 'settled', allocator: { kind: 'system', reason: 'ALLOCATOR=system' } },
      preload: '',
      mark: null,
    });
    expect(out.settled).not.toHaveProperty('mainSemiSpaceMb');
    expect(out.newSpaceMb).toBeGreaterThan(32);
  });
});
