// The C allocator of a long-running process (dev, worker, api). glibc's malloc keeps what the native
// threads free (Temporal Core's, V8's helpers', libuv's) in arenas it rarely gives back: a worker
// holding 500 idle workflows in its sticky cache grew by 137 MB under glibc and by 40 MB under
// jemalloc, and its JavaScript heaps by the same amount under both (`npm run bench:workflow-memory`
// with and without it). The allocator is chosen when the program is loaded, so a process that wants
// jemalloc replaces itself once, at start, with the same program, arguments and process id, with
// jemalloc preloaded (process.execve); its children do not inherit the preload.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { ConfigError } from '../shared/errors';

/** ALLOCATOR: `auto` (jemalloc where it is installed), `system`, or a shared library's path. */
export type AllocatorSetting = 'auto' | 'system' | (string & {});

/** Where Debian, Ubuntu, Fedora, Alpine and a source build put jemalloc (libjemalloc2 on Debian). */
export const JEMALLOC_PATHS: readonly string[] = Object.freeze([
  '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
  '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2',
  '/usr/lib64/libjemalloc.so.2',
  '/usr/lib/libjemalloc.so.2',
  '/usr/local/lib/libjemalloc.so.2',
]);

/** Set on the replaced process: the library it asked the loader to preload. */
export const PRELOADED_MARK = 'DEEP_RESEARCH_PRELOADED';

export interface AllocatorEnv {
  platform: NodeJS.Platform;
  /** This process's environment (read and, after a replacement, cleaned). */
  env: NodeJS.ProcessEnv;
  exists(path: string): boolean;
  /** `path` with its links resolved, as the loader maps it. */
  realpath(path: string): string;
  /** The files mapped into this process (/proc/self/maps), to see that the preload took. */
  mappedFiles(): string;
  /** process.execve where this Node has it. */
  execve: ((file: string, args: readonly string[], env: NodeJS.ProcessEnv) => never) | undefined;
  execPath: string;
  /** Node's options and the script's arguments: what the replaced process runs with. */
  args: readonly string[];
}

export type AllocatorOutcome =
  | { kind: 'system'; reason: string }
  | { kind: 'preloaded'; library: string }
  | { kind: 'replace'; library: string; args: string[]; env: NodeJS.ProcessEnv };

/** The library `setting` asks for on this machine, or why the system's allocator stays. */
export function chooseLibrary(setting: AllocatorSetting, a: Pick<AllocatorEnv, 'platform' | 'exists'>): { library: string } | { reason: string } {
  if (setting === 'system') return { reason: 'ALLOCATOR=system' };
  if (a.platform !== 'linux') return { reason: `not on Linux (${a.platform})` };
  if (setting === 'auto') {
    const found = JEMALLOC_PATHS.find((p) => a.exists(p));
    return found ? { library: found } : { reason: 'no jemalloc installed (Debian: apt-get install libjemalloc2)' };
  }
  return { library: setting };
}

/**
 * What this process does about its allocator: keep the system's; keep the library it already runs
 * with (after a replacement, the mark and the preload are taken out of its environment, so that the
 * processes it starts, such as the Temporal dev server or Chromium, use their own); or replace
 * itself with the library preloaded. `auto` never fails: it falls back to the system's allocator.
 * A named library that is missing, or that the loader would not preload, is a ConfigError.
 */
export function planAllocator(setting: AllocatorSetting, a: AllocatorEnv): AllocatorOutcome {
  const asked = a.env[PRELOADED_MARK];
  if (asked !== undefined) {
    const rest = withoutLibrary(a.env.LD_PRELOAD, asked);
    if (rest === '') delete a.env.LD_PRELOAD;
    else a.env.LD_PRELOAD = rest;
    delete a.env[PRELOADED_MARK];
    if (isMapped(asked, a)) return { kind: 'preloaded', library: asked };
    if (setting === 'auto') return { kind: 'system', reason: `the loader did not preload ${asked}` };
    throw allocatorError(`the loader did not preload ${setting}: is it a shared library for this machine?`);
  }
  const choice = chooseLibrary(setting, a);
  if ('reason' in choice) return { kind: 'system', reason: choice.reason };
  if (!a.exists(choice.library)) throw allocatorError(`${choice.library} does not exist`);
  if (isMapped(choice.library, a)) return { kind: 'preloaded', library: choice.library };
  if (!a.execve) return { kind: 'system', reason: 'this Node cannot replace its process (process.execve came in Node 22.15)' };
  const preload = [choice.library, ...(a.env.LD_PRELOAD ? [a.env.LD_PRELOAD] : [])].join(':');
  return { kind: 'replace', library: choice.library, args: [...a.args], env: { ...a.env, LD_PRELOAD: preload, [PRELOADED_MARK]: choice.library } };
}

function isMapped(library: string, a: Pick<AllocatorEnv, 'realpath' | 'mappedFiles'>): boolean {
  const maps = a.mappedFiles();
  return maps.includes(library) || maps.includes(a.realpath(library));
}

function withoutLibrary(list: string | undefined, library: string): string {
  return (list ?? '')
    .split(/[: ]/)
    .filter((p) => p !== '' && p !== library)
    .join(':');
}

function allocatorError(reason: string): ConfigError {
  return new ConfigError(`ALLOCATOR: ${reason}`, [{ variable: 'ALLOCATOR', reason }]);
}

/** This process, for {@link planAllocator}. */
export function thisProcess(): AllocatorEnv {
  return {
    platform: process.platform,
    // eslint-disable-next-line no-restricted-properties -- the loader's variables, not configuration: handed to the replaced process, then taken out of its environment
    env: process.env,
    exists: existsSync,
    realpath: (p) => {
      try {
        return realpathSync(p);
      } catch {
        return p;
      }
    },
    mappedFiles: () => readFileSync('/proc/self/maps', 'utf8'),
    execve: typeof process.execve === 'function' ? process.execve.bind(process) : undefined,
    execPath: process.execPath,
    args: [...process.execArgv, ...process.argv.slice(1)],
  };
}

/** The long-running commands (src/cli.ts serviceCommand): the ones worth an allocator of their own. */
export const ALLOCATOR_COMMANDS: ReadonlySet<string> = new Set(['dev', 'worker', 'api']);

let settled: Exclude<AllocatorOutcome, { kind: 'replace' }> | undefined;

/**
 * Applies {@link planAllocator} to this process, for the command line `argv` (the command first):
 * replaces the process (and does not return), or records what it runs on. The launcher
 * (bin/deep-research.mjs) calls it before it loads the program, which the replaced process would
 * load again.
 */
export function settleAllocator(setting: AllocatorSetting, argv: readonly string[], a: AllocatorEnv = thisProcess()): void {
  const [command, ...rest] = argv;
  if (!command || !ALLOCATOR_COMMANDS.has(command) || rest.includes('--help') || rest.includes('-h')) return;
  const plan = planAllocator(setting, a);
  if (plan.kind === 'replace') a.execve!(a.execPath, [a.execPath, ...plan.args], plan.env);
  else settled = plan;
}

/** What this process's allocator is, as settled at start. */
export function allocatorInUse(): Exclude<AllocatorOutcome, { kind: 'replace' }> {
  return settled ?? { kind: 'system', reason: 'not settled at start (started other than by bin/deep-research.mjs)' };
}
