// Reading a finished container: the bootstrap's JSON result on stdout (capped while it streams),
// the tail of stderr, and the container's state, turned into a result in words the model and a
// reader understand. Artifacts are checked by name and, for PNG, by their magic bytes.
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { summarize } from '../../shared/plain';
import type { SandboxLimits, SandboxResult } from './types';

const BootstrapResult = z.object({
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number(),
  stdout: z.string(),
  stdoutBytes: z.number(),
  stderr: z.string(),
  stderrBytes: z.number(),
  artifacts: z.array(z.object({ name: z.string(), b64: z.string() })),
  rejected: z.array(z.object({ name: z.string(), reason: z.string() })),
});
export type BootstrapResult = z.infer<typeof BootstrapResult>;

/** Characters of stdout and stderr that go into the workflow history (their ends are kept). */
export const HISTORY_CHARS = 4_000;
/** Bytes of the container's own stderr kept (the bootstrap's errors, a crash). */
const STDERR_BYTES = 16_384;

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.svg': 'image/svg+xml',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.html': 'text/plain',
};
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function tail(text: string, max = HISTORY_CHARS): string {
  return text.length <= max ? text : `…${text.slice(-max)}`;
}

/** The content type an artifact is kept as, or undefined when it is not kept. */
export function artifactType(name: string, data: Buffer): string | undefined {
  const type = TYPES[path.extname(name).toLowerCase()];
  if (type === 'image/png' && !data.subarray(0, 8).equals(PNG_MAGIC)) return undefined;
  return type;
}

/** Sinks for the container's demuxed stdout and stderr, each with a cap. */
export class OutputCollector {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  /** Set when stdout outgrew what any valid result can be: the run is treated as failed. */
  tooLarge = false;
  private readonly out: Buffer[] = [];
  private readonly err: Buffer[] = [];
  private outBytes = 0;
  private errBytes = 0;

  constructor(limits: SandboxLimits) {
    // Base64 artifacts plus both output streams plus the JSON around them.
    const maxResult = Math.ceil(limits.artifactTotalBytes * 1.4) + 4 * limits.outputBytes + 1_000_000;
    this.stdout.on('data', (c: Buffer) => {
      this.outBytes += c.length;
      if (this.outBytes > maxResult) this.tooLarge = true;
      else this.out.push(c);
    });
    this.stderr.on('data', (c: Buffer) => {
      this.errBytes += c.length;
      if (this.errBytes <= STDERR_BYTES) this.err.push(c);
    });
  }

  /** The bootstrap's result, or undefined when it wrote none (killed, crashed). */
  result(): BootstrapResult | undefined {
    let json: unknown;
    try {
      json = JSON.parse(Buffer.concat(this.out).toString('utf8'));
    } catch {
      return undefined;
    }
    const parsed = BootstrapResult.safeParse(json);
    return parsed.success ? parsed.data : undefined;
  }

  stderrText(): string {
    return Buffer.concat(this.err).toString('utf8');
  }
}

/** A container that ended without a result: out of memory, killed at the hard limit, or crashed. */
export function resultWithoutOutput(
  limits: SandboxLimits,
  state: { OOMKilled: boolean; ExitCode?: number | null },
  timedOutHard: boolean,
  stderr: string,
  durationMs: number,
): SandboxResult {
  const oom = state.OOMKilled;
  return {
    status: oom ? 'oom' : timedOutHard ? 'timeout' : 'crashed',
    exitCode: state.ExitCode ?? null,
    stdout: '',
    stderr: tail(stderr),
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs,
    artifacts: [],
    rejected: [],
    message: oom
      ? `out of memory: the code used more than ${limits.memoryMb} MB`
      : timedOutHard
        ? `killed after ${limits.timeoutSeconds} s (wall-clock limit)`
        : `the sandbox stopped without a result (exit ${state.ExitCode})`,
  };
}

/** A program that was not started because its input was unusable (the model can correct that). */
export function notRun(reason: string): SandboxResult {
  return {
    status: 'error',
    exitCode: null,
    stdout: '',
    stderr: '',
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs: 0,
    artifacts: [],
    rejected: [],
    message: `not run: ${reason}`,
  };
}

/** A program the bootstrap ran to its end (or to its time limit). */
export function resultOfRun(
  limits: SandboxLimits,
  r: BootstrapResult,
  oomKilled: boolean,
  artifacts: SandboxResult['artifacts'],
  rejected: SandboxResult['rejected'],
): SandboxResult {
  const oom = oomKilled || /MemoryError/.test(r.stderr);
  const ended = r.timedOut ? 'timeout' : oom && r.exitCode !== 0 ? 'oom' : r.exitCode === 0 ? 'ok' : 'error';
  // A program that ended well but printed nothing and kept no file computed nothing anyone can use
  // (a small model's "program" may be a bare name, `SyntaxError`): a failure the model can fix.
  const silent = ended === 'ok' && !r.stdout.trim() && !artifacts.length;
  const status: SandboxResult['status'] = silent ? 'error' : ended;
  const lastLine = r.stderr.trim().split('\n').at(-1) ?? '';
  const messages: Record<SandboxResult['status'], string> = {
    ok: `ran in ${r.durationMs} ms`,
    timeout: `killed after ${limits.timeoutSeconds} s (wall-clock limit)`,
    oom: `out of memory: the code used more than ${limits.memoryMb} MB`,
    error: silent
      ? `ran in ${r.durationMs} ms but printed nothing and saved no file: print the results (or save a chart)`
      : `exit code ${r.exitCode}: ${summarize(lastLine || 'no error output', 300)}`,
    crashed: '',
  };
  return {
    status,
    exitCode: r.exitCode,
    stdout: tail(r.stdout),
    stderr: tail(r.stderr),
    stdoutTruncated: r.stdoutBytes > r.stdout.length || r.stdout.length > HISTORY_CHARS,
    stderrTruncated: r.stderrBytes > r.stderr.length || r.stderr.length > HISTORY_CHARS,
    durationMs: r.durationMs,
    artifacts,
    rejected: rejected.slice(0, 20),
    message: messages[status],
  };
}
