// One `deep-research dev` per data directory, and nothing left over from one that was killed.
// A lock file beside the data names the dev process and the Temporal dev server it started. A new
// `dev` refuses while the named dev process lives; when it is gone (kill -9, a crash), the
// Temporal server it left running on the same SQLite file is stopped before a new one starts.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from './logger';

const LOCK_FILE = 'dev.lock';

interface LockContent {
  devPid: number;
  temporalPid?: number;
}

export interface DevLock {
  /** Records the Temporal dev server this `dev` started, for a successor to clean up. */
  setTemporalPid(pid: number): void;
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The command line of a process (Linux); undefined where /proc is not available. */
function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return undefined;
  }
}

/** Alive, and (where the command line can be read) the kind of process the lock says it was. */
function stillThere(pid: number, looksLike: RegExp): boolean {
  if (!alive(pid)) return false;
  const cmd = commandLine(pid);
  return cmd === undefined || looksLike.test(cmd);
}

async function stopProcess(pid: number, graceMs: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (const end = Date.now() + graceMs; Date.now() < end;) {
    if (!alive(pid)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  for (const end = Date.now() + 5_000; alive(pid) && Date.now() < end;) await new Promise((r) => setTimeout(r, 50));
}

export async function acquireDevLock(dataDir: string, log: Logger): Promise<DevLock> {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  let previous: LockContent | undefined;
  try {
    previous = JSON.parse(readFileSync(file, 'utf8')) as LockContent;
  } catch {
    previous = undefined;
  }
  if (previous && previous.devPid !== process.pid && stillThere(previous.devPid, /deep-research|node/)) {
    throw new Error(
      `another \`deep-research dev\` (pid ${previous.devPid}) is using the data directory ${dataDir}; stop it first, ` +
        'or give this one its own DATA_DIR (and ports)',
    );
  }
  if (
    previous?.temporalPid &&
    stillThere(previous.temporalPid, new RegExp(`start-dev.*${escape(dataDir)}|${escape(dataDir)}.*start-dev`))
  ) {
    log.warn(`stopping the Temporal dev server (pid ${previous.temporalPid}) that a killed \`deep-research dev\` left running`);
    await stopProcess(previous.temporalPid, 10_000);
  }
  const content: LockContent = { devPid: process.pid };
  const write = () => writeFileSync(file, `${JSON.stringify(content)}\n`);
  write();
  return {
    setTemporalPid(pid) {
      content.temporalPid = pid;
      write();
    },
    release() {
      rmSync(file, { force: true });
    },
  };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
