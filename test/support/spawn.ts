import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where the kernel hands out ports of its own choosing (bind to 0, outgoing connections): a port a
 *  test picks there can be handed to another process (a Temporal dev server's HTTP port) before
 *  the process it was picked for listens on it, and two binds to 0 in a row can return the same
 *  port (3 sets of four in 2,000 here). */
function ephemeralStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}
const LOWEST_PORT = 20_000;
const handedOut = new Set<number>();

/** A port free now, below the kernel's ephemeral range, never handed out before by this process. */
export async function freePort(): Promise<number> {
  const top = ephemeralStart() - 1;
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (top - LOWEST_PORT + 1));
    if (handedOut.has(port) || !(await portIsFree(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${LOWEST_PORT} and ${top} after 100 tries`);
}

export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

export interface Spawned {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  exited(timeoutMs: number): Promise<number | null>;
}

/** Runs `node [nodeArgs] bin/deep-research.mjs <args>` with the given environment, collecting its
 *  output; `root`: another copy of the project to run. */
export function spawnCli(args: string[], env: Record<string, string>, nodeArgs: string[] = [], root = ROOT): Spawned {
  const child = spawn(process.execPath, [...nodeArgs, path.join(root, 'bin', 'deep-research.mjs'), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watched(child);
}

/** A child process's output collected, what it printed waited for, and its end. */
export function watched(child: ChildProcess): Spawned {
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exitPromise = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    async waitFor(pattern, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = out.match(pattern);
        if (m) return m;
        if (child.exitCode !== null) throw new Error(`process exited (${child.exitCode}) before ${pattern}:\n${out}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async exited(timeoutMs) {
      const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), timeoutMs));
      const r = await Promise.race([exitPromise, timer]);
      if (r === 'timeout') {
        child.kill('SIGKILL');
        throw new Error(`process did not exit in ${timeoutMs} ms:\n${out}`);
      }
      return r;
    },
  };
}
