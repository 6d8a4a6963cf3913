// The worker's side of rendering: render hosts (render-host.ts), each a process of its own with
// its own Chromium, one page at a time each (the worker takes at most BROWSER_CONCURRENCY at once). The worker
// bounds every render from outside, where nothing the page does can reach: a wall-clock deadline
// for the whole render (the page's time limit and a grace to take its text) and the memory of the
// host's whole process tree. A render past either bound, a host that crashed, and a cancelled
// render end the same way: the host's process tree is killed (process-tree.ts), the page fails
// with its reason, and the next page gets a fresh host. Hosts run at a lower CPU priority, so a
// page that spins cannot starve the worker (and in `dev` the API and database) of the cores.
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../infra/paths';
import type { RenderedPage } from './browser';
import { killTree, treeMemoryBytes } from './process-tree';
import type { FromHost, HostLimits, ToHost, WireError } from './render-protocol';
import { SkippedError } from './safe-fetch';
import { BlockedError } from './ssrf';

export interface PoolLimits {
  host: HostLimits;
  /** Memory (proportional set size) a host's process tree may hold while it renders. */
  maxMemoryBytes: number;
  /** Time past the page's time limit before its host is killed. */
  graceMs?: number;
  /** A host with no page for this long is ended. */
  idleMs?: number;
}

export interface PoolRender {
  signal?: AbortSignal;
  banned: string[];
  onProgress?: (stage: string) => void;
}

const RUN_TS = path.join(PROJECT_ROOT, 'bin', 'run-ts.mjs');
const HOST_ENTRY = path.join(PROJECT_ROOT, 'src', 'activities', 'crawl', 'render-host.ts');
const MEMORY_CHECK_MS = 250;
/** The host's own heap (the page's HTML crosses it once); Chromium's memory is bounded from outside. */
const HOST_HEAP_MB = 384;
const HOST_NICE = 10;

interface Pending {
  id: number;
  resolve: (page: RenderedPage) => void;
  reject: (err: Error) => void;
  onProgress: (stage: string) => void;
}

interface Host {
  child: ChildProcess;
  pending: Pending | undefined;
  idleTimer: NodeJS.Timeout | undefined;
}

function fromWire(error: WireError): Error {
  if (error.name === 'BlockedError') return new BlockedError(error.message);
  if (error.name === 'SkippedError') return new SkippedError(error.message);
  return Object.assign(new Error(error.message), {
    ...(error.status !== undefined ? { status: error.status } : {}),
    ...(error.code !== undefined ? { code: error.code } : {}),
  });
}

export function createRenderPool(limits: PoolLimits) {
  const graceMs = limits.graceMs ?? 15_000;
  const idleMs = limits.idleMs ?? 5 * 60_000;
  const idle: Host[] = [];
  const hosts = new Set<Host>();
  let nextId = 1;
  let closing = false;

  function end(host: Host): void {
    hosts.delete(host);
    const at = idle.indexOf(host);
    if (at >= 0) idle.splice(at, 1);
    if (host.idleTimer) clearTimeout(host.idleTimer);
    if (host.child.pid !== undefined && host.child.exitCode === null && host.child.signalCode === null) killTree(host.child.pid);
  }

  function spawnHost(): Host {
    const child = fork(RUN_TS, [HOST_ENTRY], {
      execArgv: [`--max-old-space-size=${HOST_HEAP_MB}`],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // Its own process group: a Ctrl-C at the terminal reaches the worker, which ends the host.
      detached: true,
    });
    const host: Host = { child, pending: undefined, idleTimer: undefined };
    hosts.add(host);
    if (child.pid !== undefined) {
      try {
        os.setPriority(child.pid, HOST_NICE);
      } catch {
        // Not allowed here: the host runs at the worker's priority.
      }
    }
    child.on('message', (message: FromHost) => {
      const pending = host.pending;
      if (!pending || message.id !== pending.id) return;
      if (message.type === 'progress') return pending.onProgress(message.stage);
      host.pending = undefined;
      if (message.type === 'rendered') pending.resolve(message.page);
      else pending.reject(fromWire(message.error));
    });
    child.on('exit', (code, signal) => {
      const pending = host.pending;
      host.pending = undefined;
      end(host);
      pending?.reject(new SkippedError(`the browser's process ended while rendering the page (${signal ?? `exit ${code}`})`));
    });
    child.on('error', () => undefined);
    child.send({ type: 'init', limits: limits.host } satisfies ToHost);
    return host;
  }

  function release(host: Host): void {
    if (!hosts.has(host)) return;
    if (closing) return end(host);
    host.idleTimer = setTimeout(() => end(host), idleMs);
    host.idleTimer.unref();
    idle.push(host);
  }

  /** The page rendered by a host, or the reason it was not; never longer than its deadline. */
  async function render(url: string, opts: PoolRender): Promise<RenderedPage> {
    if (closing) throw new Error('the worker is stopping: no page is rendered');
    opts.signal?.throwIfAborted();
    const host = idle.pop() ?? spawnHost();
    if (host.idleTimer) clearTimeout(host.idleTimer);
    const id = nextId++;
    const deadlineMs = limits.host.timeoutMs + graceMs;
    let timer: NodeJS.Timeout | undefined;
    let memory: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await new Promise<RenderedPage>((resolve, reject) => {
        // The host is killed, so it answers nothing after: the first outcome is the only one.
        const stop = (err: Error) => {
          host.pending = undefined;
          end(host);
          reject(err);
        };
        host.pending = { id, resolve, reject, onProgress: opts.onProgress ?? (() => undefined) };
        timer = setTimeout(
          () =>
            stop(
              new SkippedError(`the page was still rendering ${Math.round(deadlineMs / 1000)} s after it started: its browser was stopped`),
            ),
          deadlineMs,
        );
        memory = setInterval(() => {
          const pid = host.child.pid;
          const used = pid === undefined ? 0 : treeMemoryBytes(pid);
          if (used > limits.maxMemoryBytes) {
            const mb = (n: number) => Math.round(n / 1024 / 1024);
            stop(
              new SkippedError(
                `rendering the page took more than ${mb(limits.maxMemoryBytes)} MB of memory (${mb(used)} MB): its browser was stopped`,
              ),
            );
          }
        }, MEMORY_CHECK_MS);
        onAbort = () => stop(opts.signal?.reason instanceof Error ? opts.signal.reason : new Error('the render was cancelled'));
        opts.signal?.addEventListener('abort', onAbort, { once: true });
        host.child.send({ type: 'render', id, url, banned: opts.banned } satisfies ToHost);
      });
    } finally {
      clearTimeout(timer);
      clearInterval(memory);
      if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
      release(host);
    }
  }

  /** Ends every host, busy or idle (their pages fail); the pool renders nothing after. */
  async function close(): Promise<void> {
    closing = true;
    for (const host of [...hosts]) {
      const pending = host.pending;
      host.pending = undefined;
      end(host);
      pending?.reject(new Error('the worker is stopping: the page was not rendered'));
    }
  }

  return { render, close, hostCount: () => hosts.size };
}
export type RenderPool = ReturnType<typeof createRenderPool>;
