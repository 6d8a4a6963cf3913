// One build of a tool at a time: `.ci/run` starts the slow builds in the background while it
// provisions the rest, and the tests that need a tool ask for it again; the second caller waits for
// the first build to end (and then finds the tool built) instead of starting another.
//
// The lock is a directory made atomically, holding the owner's pid. A lock whose owner is gone (a
// build killed with -9) is taken over.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { processTree } from '../src/activities/crawl/process-tree';

type Log = (line: string) => void;

function ownerAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryTake(lockDir: string): boolean {
  try {
    mkdirSync(lockDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    let pid = NaN;
    try {
      pid = Number(readFileSync(path.join(lockDir, 'pid'), 'utf8'));
    } catch {
      // The owner has made the directory and not yet written its pid: it is alive.
      return false;
    }
    if (ownerAlive(pid)) return false;
    rmSync(lockDir, { recursive: true, force: true });
    return tryTake(lockDir);
  }
  writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
  return true;
}

/** The lock owner's pid, or undefined. */
function ownerOf(lockDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(lockDir, 'pid'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A build started in the background at the lowest priority (.ci/run) is, once someone waits for
 * it, the slowest thing there is: its processes (and so the compilers they start next) go back to
 * the normal priority. Lowering a niceness needs the privilege to (root in CI); without it the
 * build goes on as it was, and the caller is told.
 */
function raisePriority(owner: number, log: Log): void {
  let raised = 0;
  for (const pid of processTree(owner)) {
    try {
      if (os.getPriority(pid) > 0) {
        os.setPriority(pid, 0);
        raised++;
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Gone meanwhile: a compiler that ended.
      if (code !== 'ESRCH') log(`could not raise the build's priority (${code ?? (err as Error).message}); it goes on at its own`);
      if (code === 'EACCES' || code === 'EPERM') return;
    }
  }
  if (raised) log(`raised ${raised} process(es) of the build to the normal priority`);
}

/** Runs build under the lock at lockDir, waiting (and saying so every minute) while another process holds it. */
export async function withBuildLock<T>(lockDir: string, what: string, log: Log, build: () => Promise<T>): Promise<T> {
  mkdirSync(path.dirname(lockDir), { recursive: true });
  const started = Date.now();
  let said = 0;
  let raisedAt = 0;
  while (!tryTake(lockDir)) {
    const minutes = Math.floor((Date.now() - started) / 60_000);
    if (said === 0 || minutes > said) {
      log(`waiting for another process building ${what} (${lockDir})`);
      said = Math.max(1, minutes);
    }
    // Again every 20 s: compilers the build started before it was raised.
    if (Date.now() - raisedAt > 20_000) {
      const owner = ownerOf(lockDir);
      if (owner !== undefined && owner !== process.pid) raisePriority(owner, log);
      raisedAt = Date.now();
    }
    await sleep(2_000);
  }
  if (said) log(`the other build of ${what} ended after ${((Date.now() - started) / 1000).toFixed(0)} s`);
  try {
    return await build();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}
