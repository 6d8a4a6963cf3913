// The container a program runs in. The code is hostile: no network, read-only root, small tmpfs
// dirs, memory (= memory + swap), CPU and process limits, nofile/fsize ulimits, all capabilities
// dropped, no-new-privileges, a non-root user, no host mounts, no Docker socket, no secrets in the
// environment. Labels name the run, step and activity, and when the container may be swept.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import type { SandboxInput, SandboxLimits } from './types';

const BOOTSTRAP = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'bootstrap.py'), 'utf8');
export const SANDBOX_LABEL = 'org.deep-research.sandbox';

export function containerSpec(
  limits: SandboxLimits,
  input: SandboxInput,
  callKey: string,
  expiresAt: number,
): Docker.ContainerCreateOptions {
  return {
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
      [`${SANDBOX_LABEL}.expires`]: String(expiresAt),
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
  };
}

/** What the bootstrap reads on stdin: the program, its input files, the time limit and the caps. */
export function bootstrapInput(limits: SandboxLimits, input: SandboxInput): string {
  return JSON.stringify({
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
}

/** Force-removes every container matching `filters`; returns how many there were. */
export async function removeContainers(
  docker: Docker,
  filters: Record<string, string[]>,
  keep: (c: Docker.ContainerInfo) => boolean = () => false,
): Promise<number> {
  const list = (await docker.listContainers({ all: true, filters: JSON.stringify(filters) })).filter((c) => !keep(c));
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
