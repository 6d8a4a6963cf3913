// Large HTML pages are turned into Markdown on a worker thread, not on the thread that runs the
// worker's activities and hands workflow tasks to the workflow thread: a 300 KB article takes about
// half a second to parse (bench/extract.ts), time in which nothing else of the worker would move,
// heartbeats and workflow tasks included. Small pages (most of them, a few milliseconds each) stay
// on the calling thread. The thread starts with the first large page and ends after a minute
// without one; a page that takes longer than PAGE_TIMEOUT_MS ends it, failing that page (and the
// pages queued behind it) with an error its activity retries.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PROJECT_ROOT } from '../../infra/paths';
import type { Readable } from './readable';

/** Pages at least this large (bytes of HTML) are parsed off the calling thread. */
export const OFF_THREAD_BYTES = 64 * 1024;
const IDLE_MS = 60_000;
const PAGE_TIMEOUT_MS = 60_000;

const BOOTSTRAP = path.join(PROJECT_ROOT, 'bin', 'ts-worker.mjs');
const ENTRY = pathToFileURL(path.join(PROJECT_ROOT, 'src', 'activities', 'crawl', 'extract-worker.ts')).href;

interface Pending {
  resolve: (r: Readable) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

class ExtractThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private idle: NodeJS.Timeout | undefined;
  /** Threads started so far (for tests). */
  started = 0;

  htmlToMarkdown(html: string, url: string): Promise<Readable> {
    const worker = this.worker ?? this.start();
    if (this.idle) clearTimeout(this.idle);
    const id = this.nextId++;
    return new Promise<Readable>((resolve, reject) => {
      const timer = setTimeout(
        () => this.stop(worker, new Error(`page extraction took longer than ${PAGE_TIMEOUT_MS / 1000} s: ${url}`)),
        PAGE_TIMEOUT_MS,
      );
      this.pending.set(id, { resolve, reject, timer });
      worker.postMessage({ id, html, url });
    });
  }

  private start(): Worker {
    const worker = new Worker(BOOTSTRAP, { workerData: { entry: ENTRY } });
    this.started++;
    worker.on('message', (m: { id: number; value?: Readable; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.value) p.resolve(m.value);
      else p.reject(new Error(`page extraction failed: ${m.error}`));
      if (this.pending.size === 0) this.idle = setTimeout(() => this.stop(worker), IDLE_MS).unref();
    });
    worker.on('error', (err) => this.stop(worker, new Error(`page extraction thread failed: ${err.message}`)));
    worker.on('exit', (code) => this.stop(worker, new Error(`page extraction thread exited (${code})`)));
    // After the listeners, which would ref the thread's port again: an idle thread must not keep a
    // stopping process alive.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  /** Ends the thread; what it still had to do fails with `reason`. */
  private stop(worker: Worker, reason = new Error('page extraction thread stopped')): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    if (this.idle) clearTimeout(this.idle);
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(reason);
    }
    void worker.terminate();
  }
}

export const extractThread = new ExtractThread();
