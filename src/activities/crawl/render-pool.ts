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
  /** Private resident memory a host's process tree may hold while it renders. */
  maxMemoryBytes: number;
  /** Time past the page's time limit before its host is killed: the host's start and Chromium's
   *  launch (not counted in the page's limit), and taking the text. */
  graceMs?: number;
  /** A host with no page for this long is ended. */
  idleMs?: number;
}

export interface PoolRender {
  signal?: AbortSignal;
  banned: string[];
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
}

function fromWire(error: WireError): Error {
  if (error.name === 'BlockedError') return new BlockedError(error.message);
  if (error.name === 'SkippedError') return new SkippedError(error.message);
  return Object.assign(new Error(error.message), {
    ...(error.status !== undefined ? { status: error.status } : {}),
    ...(error.code !== undefined ? { code: error.code } : {}),
  });
}

/** One render host process: the page it is on, and its end (the whole process tree killed). */
class RenderHost {
  readonly child: ChildProcess;
  private pending: Pending | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  ended = false;

  constructor(limits: HostLimits, onEnd: (host: RenderHost) => void) {
    this.child = fork(RUN_TS, [HOST_ENTRY], {
      execArgv: [`--max-old-space-size=${HOST_HEAP_MB}`],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // Its own process group: a Ctrl-C at the terminal reaches the worker, which ends the host.
      detached: true,
    });
    if (this.child.pid !== undefined) {
      try {
        os.setPriority(this.child.pid, HOST_NICE);
      } catch {
        // Not allowed here: the host runs at the worker's priority.
      }
    }
    this.child.on('message', (message: FromHost) => {
      const pending = this.pending;
      if (!pending || message.id !== pending.id) return;
      this.pending = undefined;
      if (message.type === 'rendered') pending.resolve(message.page);
      else pending.reject(fromWire(message.error));
    });
    this.child.on('exit', (code, signal) => {
      this.ended = true;
      this.fail(new SkippedError(`the browser's process ended while rendering the page (${signal ?? `exit ${code}`})`));
      onEnd(this);
    });
    this.child.on('error', () => undefined);
    this.child.send({ type: 'init', limits } satisfies ToHost);
  }

  /** Asks for a page; its outcome comes through `pending`. */
  start(pending: Pending, url: string, banned: string[]): void {
    this.pending = pending;
    this.child.send({ type: 'render', id: pending.id, url, banned } satisfies ToHost);
  }

  /** Memory its whole process tree holds now. */
  memoryBytes(): number {
    return this.child.pid === undefined ? 0 : treeMemoryBytes(this.child.pid);
  }

  /** Kills the process tree; the page it was on, if any, fails with `err`. */
  end(err?: Error): void {
    if (err) this.fail(err);
    this.ended = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.child.pid !== undefined && this.child.exitCode === null && this.child.signalCode === null) killTree(this.child.pid);
  }

  private fail(err: Error): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(err);
  }
}

export function createRenderPool(limits: PoolLimits) {
  const graceMs = limits.graceMs ?? 30_000;
  const idleMs = limits.idleMs ?? 5 * 60_000;
  const idle: RenderHost[] = [];
  const hosts = new Set<RenderHost>();
  let nextId = 1;
  let closing = false;

  const forget = (host: RenderHost) => {
    hosts.delete(host);
    const at = idle.indexOf(host);
    if (at >= 0) idle.splice(at, 1);
  };
  const end = (host: RenderHost, err?: Error) => {
    forget(host);
    host.end(err);
  };

  function take(): RenderHost {
    const host = idle.pop() ?? new RenderHost(limits.host, forget);
    hosts.add(host);
    if (host.idleTimer) clearTimeout(host.idleTimer);
    return host;
  }

  function release(host: RenderHost): void {
    if (host.ended) return;
    if (closing) return end(host);
    host.idleTimer = setTimeout(() => end(host), idleMs);
    host.idleTimer.unref();
    idle.push(host);
  }

  /** The page rendered by a host, or the reason it was not; never longer than its deadline. */
  async function render(url: string, opts: PoolRender): Promise<RenderedPage> {
    if (closing) throw new Error('the worker is stopping: no page is rendered');
    opts.signal?.throwIfAborted();
    const host = take();
    const deadlineMs = limits.host.timeoutMs + graceMs;
    const mb = (n: number) => Math.round(n / 1024 / 1024);
    const watch: { timer?: NodeJS.Timeout; memory?: NodeJS.Timeout; onAbort?: () => void } = {};
    try {
      return await new Promise<RenderedPage>((resolve, reject) => {
        // The host is killed, so it answers nothing after: the first outcome is the only one.
        const stop = (err: Error) => end(host, err);
        watch.timer = setTimeout(
          () =>
            stop(
              new SkippedError(`the page was still rendering ${Math.round(deadlineMs / 1000)} s after it started: its browser was stopped`),
            ),
          deadlineMs,
        );
        watch.memory = setInterval(() => {
          const used = host.memoryBytes();
          if (used <= limits.maxMemoryBytes) return;
          stop(
            new SkippedError(
              `rendering the page took more than ${mb(limits.maxMemoryBytes)} MB of memory (${mb(used)} MB): its browser was stopped`,
            ),
          );
        }, MEMORY_CHECK_MS);
        watch.onAbort = () => stop(opts.signal?.reason instanceof Error ? opts.signal.reason : new Error('the render was cancelled'));
        opts.signal?.addEventListener('abort', watch.onAbort, { once: true });
        host.start({ id: nextId++, resolve, reject }, url, opts.banned);
      });
    } finally {
      clearTimeout(watch.timer);
      clearInterval(watch.memory);
      if (watch.onAbort) opts.signal?.removeEventListener('abort', watch.onAbort);
      release(host);
    }
  }

  /** Ends every host, busy or idle (their pages fail); the pool renders nothing after. */
  async function close(): Promise<void> {
    closing = true;
    for (const host of [...hosts]) end(host, new Error('the worker is stopping: the page was not rendered'));
  }

  return { render, close };
}
export type RenderPool = ReturnType<typeof createRenderPool>;
