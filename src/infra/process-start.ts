// What a long-running process (dev, worker, api) can only choose when it is started: its C allocator
// and the size of its main thread's young generation.
// - glibc's malloc keeps what the native threads free (Temporal Core's, V8's helpers', libuv's) in
//   arenas it rarely gives back: a worker holding 500 idle workflows in its sticky cache grew by
//   195 MB under glibc and by 79 MB under jemalloc (`npm run bench:workflow-memory -- --workflows
//   500 --allocators`, medians of 3 rounds); its JavaScript heaps grew alike under both.
// - V8 lets the main thread's young generation grow to 2 × 64 MB on a 64-bit Node without pointer
//   compression; at a thousand runs in flight it reached all of that. Its limit is read when the
//   isolate is made, so only a flag on the command line sets it (src/infra/heap.ts sets the
//   threads' at run time).
// A process that wants either replaces itself once, at start, with the same program, arguments and
// process id (process.execve), jemalloc preloaded and the flag added; the processes it starts
// inherit neither.
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

/** Set on the replaced process: the library it asked the loader to preload ('' for none). */
export const PRELOADED_MARK = 'DEEP_RESEARCH_PRELOADED';

/** The start-time settings (ALLOCATOR, MAIN_SEMI_SPACE_MB). */
export interface StartSettings {
  allocator: AllocatorSetting;
  /** The main thread's largest semi-space in MB; 0: V8's default. */
  mainSemiSpaceMb: number;
}

export interface ProcessFacts {
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
  /** Node's options (process.execArgv). */
  nodeArgs: readonly string[];
  /** The script and its arguments (process.argv from the script on). */
  scriptArgs: readonly string[];
}

export type AllocatorInUse = { kind: 'system'; reason: string } | { kind: 'preloaded'; library: string };

export type StartOutcome =
  | { kind: 'settled'; allocator: AllocatorInUse; mainSemiSpaceMb: number | undefined }
  | { kind: 'replace'; args: string[]; env: NodeJS.ProcessEnv };

/** The library `setting` asks for on this machine, or why the system's allocator stays. */
function chooseLibrary(setting: AllocatorSetting, a: Pick<ProcessFacts, 'platform' | 'exists'>): { library: string } | { reason: string } {
  if (setting === 'system') return { reason: 'ALLOCATOR=system' };
  if (a.platform !== 'linux') return { reason: `not on Linux (${a.platform})` };
  if (setting === 'auto') {
    const found = JEMALLOC_PATHS.find((p) => a.exists(p));
    return found ? { library: found } : { reason: 'no jemalloc installed (Debian: apt-get install libjemalloc2)' };
  }
  return { library: setting };
}

const SEMI_SPACE_FLAG = '--max-semi-space-size';

/** The main thread's semi-space limit this process was started with (its options or NODE_OPTIONS). */
function semiSpaceFlag(a: Pick<ProcessFacts, 'nodeArgs' | 'env'>): number | undefined {
  const all = [...a.nodeArgs, ...(a.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const hit = all.filter((x) => x.startsWith(`${SEMI_SPACE_FLAG}=`)).at(-1);
  return hit === undefined ? undefined : Number(hit.slice(SEMI_SPACE_FLAG.length + 1));
}

/**
 * What this process does at start: run as it is (settled), or replace itself so that it gets
 * jemalloc and the main thread's semi-space limit. After a replacement, the mark and the preload
 * are taken out of its environment, so that the processes it starts (the Temporal dev server,
 * Chromium) use their own. `auto` never fails: without jemalloc it keeps the system's allocator;
 * a named library that is missing, or that the loader would not preload, is a ConfigError. Where
 * this Node cannot replace its process, it runs as it is.
 */
export function planStart(s: StartSettings, a: ProcessFacts): StartOutcome {
  const asked = a.env[PRELOADED_MARK];
  if (asked !== undefined)
    return { kind: 'settled', allocator: afterReplacement(s.allocator, asked, a), mainSemiSpaceMb: semiSpaceFlag(a) };
  const choice = chooseLibrary(s.allocator, a);
  if ('library' in choice && !a.exists(choice.library)) throw allocatorError(`${choice.library} does not exist`);
  const library = 'library' in choice && !isMapped(choice.library, a) ? choice.library : undefined;
  const flag = s.mainSemiSpaceMb > 0 && semiSpaceFlag(a) === undefined ? [`${SEMI_SPACE_FLAG}=${s.mainSemiSpaceMb}`] : [];
  const allocator: AllocatorInUse =
    'library' in choice ? { kind: 'preloaded', library: choice.library } : { kind: 'system', reason: choice.reason };
  if (library === undefined && flag.length === 0) return { kind: 'settled', allocator, mainSemiSpaceMb: semiSpaceFlag(a) };
  if (!a.execve) {
    const reason = 'this Node cannot replace its process (process.execve came in Node 22.15)';
    return { kind: 'settled', allocator: library ? { kind: 'system', reason } : allocator, mainSemiSpaceMb: semiSpaceFlag(a) };
  }
  const env: NodeJS.ProcessEnv = { ...a.env, [PRELOADED_MARK]: library ?? '' };
  if (library) env.LD_PRELOAD = [library, ...(a.env.LD_PRELOAD ? [a.env.LD_PRELOAD] : [])].join(':');
  return { kind: 'replace', args: [...flag, ...a.nodeArgs, ...a.scriptArgs], env };
}

/** The replaced process: what it runs on, its environment cleaned for its children. */
function afterReplacement(setting: AllocatorSetting, asked: string, a: ProcessFacts): AllocatorInUse {
  delete a.env[PRELOADED_MARK];
  if (asked === '') {
    const choice = chooseLibrary(setting, a);
    return 'reason' in choice ? { kind: 'system', reason: choice.reason } : { kind: 'preloaded', library: choice.library };
  }
  const rest = withoutLibrary(a.env.LD_PRELOAD, asked);
  if (rest === '') delete a.env.LD_PRELOAD;
  else a.env.LD_PRELOAD = rest;
  if (isMapped(asked, a)) return { kind: 'preloaded', library: asked };
  if (setting === 'auto') return { kind: 'system', reason: `the loader did not preload ${asked}` };
  throw allocatorError(`the loader did not preload ${setting}: is it a shared library for this machine?`);
}

function isMapped(library: string, a: Pick<ProcessFacts, 'realpath' | 'mappedFiles'>): boolean {
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

/** This process, for {@link planStart}. */
export function thisProcess(): ProcessFacts {
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
    nodeArgs: [...process.execArgv],
    scriptArgs: process.argv.slice(1),
  };
}

/** The long-running commands (src/cli.ts serviceCommand): the ones worth settling. */
export const SETTLED_COMMANDS: ReadonlySet<string> = new Set(['dev', 'worker', 'api']);

let settled: Extract<StartOutcome, { kind: 'settled' }> | undefined;

/**
 * Applies {@link planStart} to this process, for the command line `argv` (the command first):
 * replaces the process (and does not return), or records what it runs on. The launcher
 * (bin/deep-research.mjs) calls it before it loads the program, which the replaced process would
 * load again.
 */
/** Whether the command line runs a command whose process is settled at start (dev, worker, api). */
export function settles(argv: readonly string[]): boolean {
  const [command, ...rest] = argv;
  return Boolean(command && SETTLED_COMMANDS.has(command) && !rest.includes('--help') && !rest.includes('-h'));
}

export function settleProcess(s: StartSettings, argv: readonly string[], a: ProcessFacts = thisProcess()): void {
  if (!settles(argv)) return;
  const plan = planStart(s, a);
  if (plan.kind === 'replace') a.execve!(a.execPath, [a.execPath, ...plan.args], plan.env);
  else settled = plan;
}

/** What this process runs on, as settled at start. */
export function settledStart(): Extract<StartOutcome, { kind: 'settled' }> {
  return (
    settled ?? {
      kind: 'settled',
      allocator: { kind: 'system', reason: 'not settled at start (started other than by bin/deep-research.mjs)' },
      mainSemiSpaceMb: undefined,
    }
  );
}
