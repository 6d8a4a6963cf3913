// The sandbox activity: runs model-written Python in a locked-down Docker container. Treat the
// code as hostile: no network, read-only root, small tmpfs dirs, memory (= memory+swap), CPU and
// process limits, nofile/fsize ulimits, all capabilities dropped, no-new-privileges, a non-root
// user, no host mounts, no Docker socket, no secrets in the environment, a wall-clock kill, capped
// output. Every container is labelled with its run, step and activity; orphans are swept.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type Docker from 'dockerode';
import { z } from 'zod';
import { ErrorType } from '../../shared/errors';
import { summarize } from '../../shared/schemas';
import { activityCallKey } from '../call-key';
import type { Store } from '../store';

const BOOTSTRAP = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'bootstrap.py'), 'utf8');
export const SANDBOX_LABEL = 'org.deep-research.sandbox';

export interface SandboxLimits {
  image: string;
  memoryMb: number;
  cpus: number;
  pids: number;
  timeoutSeconds: number;
  /** Bytes of stdout and of stderr kept; the rest is counted and dropped. */
  outputBytes: number;
  artifactFiles: number;
  artifactFileBytes: number;
  artifactTotalBytes: number;
}

export interface SandboxInput {
  researchId: string;
  stepId: string;
  attempt: number;
  code: string;
  /** Data files for the code, written to /work (e.g. CSV from earlier steps). */
  files?: { name: string; content: string }[];
}

export interface ArtifactRef {
  artifactId: string;
  name: string;
  contentType: string;
  bytes: number;
}

export interface SandboxResult {
  status: 'ok' | 'error' | 'timeout' | 'oom' | 'crashed';
  exitCode: number | null;
  /** Short, for the workflow history; the full capped output is stored with the run. */
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
  artifacts: ArtifactRef[];
  rejected: { name: string; reason: string }[];
  /** What went wrong, in words the model and a reader understand. */
  message: string;
}

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

const HISTORY_CHARS = 4_000;
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

function tail(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(-max)}`;
}

function artifactType(name: string, data: Buffer): string | undefined {
  const type = TYPES[path.extname(name).toLowerCase()];
  if (type === 'image/png' && !data.subarray(0, 8).equals(PNG_MAGIC)) return undefined;
  return type;
}

export function createSandboxActivities(deps: { docker: Docker; store: Store; limits: SandboxLimits }) {
  const { docker, store, limits } = deps;

  async function removeContainers(filters: Record<string, string[]>): Promise<number> {
    const list = await docker.listContainers({ all: true, filters: JSON.stringify(filters) });
    await Promise.all(
      list.map((c) =>
        docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined),
      ),
    );
    return list.length;
  }

  async function storeArtifacts(
    input: SandboxInput,
    items: { name: string; data: Buffer }[],
    rejected: SandboxResult['rejected'],
  ): Promise<ArtifactRef[]> {
    const refs: ArtifactRef[] = [];
    for (const it of items) {
      const safeName = it.name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
      const type = artifactType(safeName, it.data);
      if (!type) {
        rejected.push({ name: it.name, reason: 'type not kept (png, jpg, svg, csv, json, txt, md)' });
        continue;
      }
      const artifactId = `${input.stepId}-${input.attempt}-${safeName}`;
      await store.saveArtifact(input.researchId, { artifactId, stepId: input.stepId, name: safeName, contentType: type, bytes: it.data });
      refs.push({ artifactId, name: safeName, contentType: type, bytes: it.data.length });
    }
    return refs;
  }

  async function runCode(input: SandboxInput): Promise<SandboxResult> {
    const ctx = Context.current();
    const callKey = activityCallKey();
    // Recorded once: a retry after the container finished returns what was stored.
    const stored = await store.sandboxRuns.find<SandboxResult>(callKey);
    if (stored) return stored;
    // An earlier attempt of this activity (on a worker that died) may have left its container.
    await removeContainers({ label: [`${SANDBOX_LABEL}.activity=${callKey}`] });

    const bundle = JSON.stringify({
      code: input.code,
      files: (input.files ?? []).map((f) => ({ name: f.name, b64: Buffer.from(f.content).toString('base64') })),
      timeout: limits.timeoutSeconds,
      caps: {
        output: limits.outputBytes,
        files: limits.artifactFiles,
        fileBytes: limits.artifactFileBytes,
        totalBytes: limits.artifactTotalBytes,
      },
    });
    const expires = Date.now() + (limits.timeoutSeconds + 60) * 1000;
    let container: Docker.Container;
    try {
      container = await docker.createContainer({
        Image: limits.image,
        Cmd: ['python3', '-c', BOOTSTRAP],
        User: '10001:10001',
        WorkingDir: '/work',
        Env: ['HOME=/work', 'MPLCONFIGDIR=/tmp/mpl', 'MPLBACKEND=Agg', 'PYTHONDONTWRITEBYTECODE=1', 'PYTHONUNBUFFERED=1'],
        OpenStdin: true,
        StdinOnce: true,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        NetworkDisabled: true,
        Labels: {
          [SANDBOX_LABEL]: '1',
          [`${SANDBOX_LABEL}.run`]: input.researchId,
          [`${SANDBOX_LABEL}.step`]: `${input.stepId}/${input.attempt}`,
          [`${SANDBOX_LABEL}.activity`]: callKey,
          [`${SANDBOX_LABEL}.expires`]: String(expires),
        },
        HostConfig: {
          NetworkMode: 'none',
          ReadonlyRootfs: true,
          Tmpfs: {
            '/work': 'rw,nosuid,nodev,size=64m,uid=10001,gid=10001,mode=0700',
            '/output': 'rw,nosuid,nodev,noexec,size=32m,uid=10001,gid=10001,mode=0700',
            '/tmp': 'rw,nosuid,nodev,noexec,size=16m,uid=10001,gid=10001,mode=1777',
          },
          Memory: limits.memoryMb * 1024 * 1024,
          MemorySwap: limits.memoryMb * 1024 * 1024,
          NanoCpus: Math.round(limits.cpus * 1e9),
          PidsLimit: limits.pids,
          Ulimits: [
            { Name: 'nofile', Soft: 256, Hard: 256 },
            { Name: 'fsize', Soft: 64 * 1024 * 1024, Hard: 64 * 1024 * 1024 },
          ],
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          Privileged: false,
          AutoRemove: false,
        },
      });
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode;
      if (status === 404)
        throw ApplicationFailure.nonRetryable(
          `sandbox image ${limits.image} is missing: build it with sandbox/build-offline.sh`,
          ErrorType.SandboxImageMissing,
        );
      throw err;
    }

    const started = Date.now();
    const out: Buffer[] = [];
    let outBytes = 0;
    let tooLarge = false;
    const errChunks: Buffer[] = [];
    let errBytes = 0;
    const maxResult = Math.ceil(limits.artifactTotalBytes * 1.4) + 4 * limits.outputBytes + 1_000_000;
    const stdoutSink = new PassThrough();
    const stderrSink = new PassThrough();
    stdoutSink.on('data', (c: Buffer) => {
      outBytes += c.length;
      if (outBytes > maxResult) tooLarge = true;
      else out.push(c);
    });
    stderrSink.on('data', (c: Buffer) => {
      errBytes += c.length;
      if (errBytes <= 16_384) errChunks.push(c);
    });
    const beat = setInterval(() => ctx.heartbeat({ elapsedMs: Date.now() - started }), 5_000);
    const kill = () => container.kill().catch(() => undefined);
    ctx.cancellationSignal.addEventListener('abort', kill, { once: true });
    let timedOutHard = false;
    try {
      const stream = await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true });
      container.modem.demuxStream(stream, stdoutSink, stderrSink);
      await container.start();
      stream.end(bundle);
      // The bootstrap kills the code at the time limit; this is the guard against the bootstrap.
      const hard = setTimeout(
        () => {
          timedOutHard = true;
          void kill();
        },
        (limits.timeoutSeconds + 15) * 1000,
      );
      try {
        await container.wait();
      } finally {
        clearTimeout(hard);
      }
      if (tooLarge) throw new Error('result too large');
      const state = (await container.inspect()).State;
      const raw = Buffer.concat(out).toString('utf8');
      const parsed = BootstrapResult.safeParse(safeJson(raw));
      let result: SandboxResult;
      if (ctx.cancellationSignal.aborted)
        throw ApplicationFailure.create({ message: 'sandbox run cancelled', type: ErrorType.SandboxCancelled, nonRetryable: true });
      if (!parsed.success) {
        const oom = state.OOMKilled;
        result = {
          status: oom ? 'oom' : timedOutHard ? 'timeout' : 'crashed',
          exitCode: state.ExitCode ?? null,
          stdout: '',
          stderr: tail(Buffer.concat(errChunks).toString('utf8'), HISTORY_CHARS),
          stdoutTruncated: false,
          stderrTruncated: false,
          durationMs: Date.now() - started,
          artifacts: [],
          rejected: [],
          message: oom
            ? `out of memory: the code used more than ${limits.memoryMb} MB`
            : timedOutHard
              ? `killed after ${limits.timeoutSeconds} s (wall-clock limit)`
              : `the sandbox stopped without a result (exit ${state.ExitCode})`,
        };
      } else {
        const r = parsed.data;
        const rejected = [...r.rejected];
        const artifacts = await storeArtifacts(
          input,
          r.artifacts.map((a) => ({ name: a.name, data: Buffer.from(a.b64, 'base64') })),
          rejected,
        );
        const oom = state.OOMKilled || /MemoryError/.test(r.stderr);
        const status: SandboxResult['status'] = r.timedOut
          ? 'timeout'
          : oom && r.exitCode !== 0
            ? 'oom'
            : r.exitCode === 0
              ? 'ok'
              : 'error';
        const lastLine = r.stderr.trim().split('\n').at(-1) ?? '';
        result = {
          status,
          exitCode: r.exitCode,
          stdout: tail(r.stdout, HISTORY_CHARS),
          stderr: tail(r.stderr, HISTORY_CHARS),
          stdoutTruncated: r.stdoutBytes > r.stdout.length || r.stdout.length > HISTORY_CHARS,
          stderrTruncated: r.stderrBytes > r.stderr.length || r.stderr.length > HISTORY_CHARS,
          durationMs: r.durationMs,
          artifacts,
          rejected: rejected.slice(0, 20),
          message:
            status === 'ok'
              ? `ran in ${r.durationMs} ms`
              : status === 'timeout'
                ? `killed after ${limits.timeoutSeconds} s (wall-clock limit)`
                : status === 'oom'
                  ? `out of memory: the code used more than ${limits.memoryMb} MB`
                  : `exit code ${r.exitCode}: ${summarize(lastLine || 'no error output', 300)}`,
        };
      }
      await store.sandboxRuns.record({
        callKey,
        researchId: input.researchId,
        stepId: input.stepId,
        attempt: input.attempt,
        status: result.status,
        result,
      });
      return result;
    } finally {
      clearInterval(beat);
      ctx.cancellationSignal.removeEventListener('abort', kill);
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  /** Removes sandbox containers past their expiry: what a crashed worker left behind. */
  async function sweepSandboxes(now = Date.now()): Promise<number> {
    const list = await docker.listContainers({ all: true, filters: JSON.stringify({ label: [SANDBOX_LABEL] }) });
    const stale = list.filter((c) => Number(c.Labels[`${SANDBOX_LABEL}.expires`] ?? 0) < now);
    await Promise.all(
      stale.map((c) =>
        docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined),
      ),
    );
    return stale.length;
  }

  return { runCode, sweepSandboxes };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
