// Uploaded documents are parsed on threads of their own, never on the thread that runs the
// worker's activities (and, in `dev`, the API and the embedded database): a hostile file may take
// a parser minutes and gigabytes, and an honest one of megabytes takes seconds to chunk (the
// tokenizer), so ingestion has its chunks made there too (parseChunks). Each thread runs one document at a time under
//  - a memory cap: V8's heap limit for the thread (resourceLimits), and the thread's heap plus its
//    buffers (external memory), measured while it parses and stopped past the cap;
//  - a wall-time cap: a parse that takes longer ends its thread;
//  - the document caps of parse-caps.ts, which the parsers check as they go.
// A document that breaks a cap, or whose parse crashes its thread, fails with the reason; the
// thread is replaced for the next one. Threads stay up between documents (the parsers loaded)
// and end after a while without work.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PROJECT_ROOT } from '../../infra/paths';
import type { ChunkedDocument, ChunkOptions } from './chunk';
import type { DocFormat, ParsedDocument } from './parse';
import { DocumentTooLarge, DocumentUnreadable, tooLarge, type ParseCaps } from './parse-caps';
import type { ParseJob } from './parse-worker';

export interface ParseSandboxSettings {
  /** Documents parsed at once (one thread each). */
  threads: number;
  /** Heap plus buffers a parse thread may hold, in MB. */
  memoryMb: number;
  /** Wall time one document's parse may take. */
  timeoutMs: number;
  caps: ParseCaps;
}

const BOOTSTRAP = path.join(PROJECT_ROOT, 'bin', 'ts-worker.mjs');
const ENTRY = pathToFileURL(path.join(PROJECT_ROOT, 'src', 'activities', 'knowledge', 'parse-worker.ts')).href;
/** pdf.js, loaded before tsx's loader (see bin/ts-worker.mjs); its worker half first, so the fake
 *  worker pdf.js runs in Node finds it on globalThis instead of importing it again. */
const PRELOAD = ['pdfjs-dist/legacy/build/pdf.worker.mjs', 'pdfjs-dist/legacy/build/pdf.mjs'];
const IDLE_MS = 5 * 60_000;
const MEMORY_POLL_MS = 100;
const MB = 1024 * 1024;

interface Job {
  id: number;
  bytes: ArrayBuffer;
  format: DocFormat;
  name: string;
  caps: ParseCaps;
  chunking: ChunkOptions | undefined;
  resolve: (doc: ParsedDocument | ChunkedDocument) => void;
  reject: (err: Error) => void;
  /** Ends the job's timers. */
  done?: () => void;
}

interface Slot {
  worker: Worker;
  job?: Job | undefined;
  idle?: NodeJS.Timeout;
  /** The thread has loaded its parsers: a document's time runs from then, not from the thread's start. */
  ready?: boolean;
  onReady?: (() => void) | undefined;
}

/** The most a new thread may take to load its parsers before its first document's time starts. */
const BOOT_ALLOWANCE_MS = 30_000;

type Reply =
  { ready: true } | { id: number; value: ParsedDocument | ChunkedDocument } | { id: number; error: { name: string; message: string } };

/** What parses documents: the parse threads, or (in tests) parseDocument on the calling thread. */
export type DocumentParser = Pick<ParseSandbox, 'parse'>;
/** What parses and chunks documents for ingestion: the parse threads, or (in tests) chunkParsed
 *  on the calling thread. */
export type DocumentChunker = Pick<ParseSandbox, 'parseChunks'>;

export class ParseSandbox {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  /** The most memory (heap and buffers, bytes) a parse thread was measured to hold. */
  peakBytes = 0;
  /** Threads started so far (a crashed or stopped one is replaced). */
  threadsStarted = 0;

  constructor(readonly settings: ParseSandboxSettings) {}

  /** The document parsed on a parse thread; DocumentUnreadable / DocumentTooLarge say why not.
   *  `caps` narrows the configured ones for this document (the crawler keeps less text). */
  parse(bytes: Buffer, format: DocFormat, name: string, caps: Partial<ParseCaps> = {}): Promise<ParsedDocument> {
    return this.submit(bytes, format, name, caps, undefined) as Promise<ParsedDocument>;
  }

  /** The document parsed and chunked on a parse thread (within the same caps, the wall-time cap
   *  counting the chunking too). */
  parseChunks(bytes: Buffer, format: DocFormat, name: string, chunking: ChunkOptions): Promise<ChunkedDocument> {
    return this.submit(bytes, format, name, {}, chunking) as Promise<ChunkedDocument>;
  }

  private submit(
    bytes: Buffer,
    format: DocFormat,
    name: string,
    caps: Partial<ParseCaps>,
    chunking: ChunkOptions | undefined,
  ): Promise<ParsedDocument | ChunkedDocument> {
    // A copy of its own, handed over to the thread without another copy.
    const own = new Uint8Array(bytes).buffer;
    return new Promise<ParsedDocument | ChunkedDocument>((resolve, reject) => {
      const label = format.toUpperCase();
      const prefixed = (err: Error) => {
        if (!err.message.startsWith(`${label}: `)) err.message = `${label}: ${err.message}`;
        reject(err);
      };
      const all = { ...this.settings.caps, ...caps };
      this.queue.push({ id: this.nextId++, bytes: own, format, name, caps: all, chunking, resolve, reject: prefixed });
      this.dispatch();
    });
  }

  /** Ends every thread; documents still being parsed fail. */
  async close(): Promise<void> {
    for (const slot of [...this.slots]) this.stop(slot, new DocumentUnreadable('the parser was shut down'));
    for (const job of this.queue.splice(0)) job.reject(new DocumentUnreadable('the parser was shut down'));
    await Promise.resolve();
  }

  private dispatch(): void {
    while (this.queue.length) {
      const slot = this.slots.find((s) => !s.job) ?? (this.slots.length < this.settings.threads ? this.startSlot() : undefined);
      if (!slot) return;
      this.run(slot, this.queue.shift()!);
    }
  }

  private startSlot(): Slot {
    const worker = new Worker(BOOTSTRAP, {
      workerData: { entry: ENTRY, preload: PRELOAD },
      resourceLimits: { maxOldGenerationSizeMb: this.settings.memoryMb, stackSizeMb: 4 },
    });
    this.threadsStarted++;
    const slot: Slot = { worker };
    worker.on('message', (m: Reply) => this.answer(slot, m));
    worker.on('error', (err: Error & { code?: string }) =>
      this.stop(
        slot,
        err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? this.outOfMemory() : new DocumentUnreadable(`the parser crashed: ${err.message}`),
      ),
    );
    worker.on('exit', (code) => this.stop(slot, new DocumentUnreadable(`the parser stopped (exit code ${code})`)));
    // After the listeners: a 'message' listener refs the thread's port again, and a thread kept
    // for the next document must not keep a stopping process alive.
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  private run(slot: Slot, job: Job): void {
    slot.job = job;
    if (slot.idle) clearTimeout(slot.idle);
    const seconds = Math.round(this.settings.timeoutMs / 100) / 10;
    const expire = () => this.stop(slot, tooLarge(`parsing took longer than ${seconds} s`, 'KB_PARSE_TIMEOUT_MS'));
    // A new thread loads its parsers first (seconds on a loaded machine): the document's time starts
    // when it is ready, and a thread that never gets ready is ended after the boot allowance.
    let timer = setTimeout(expire, this.settings.timeoutMs + (slot.ready ? 0 : BOOT_ALLOWANCE_MS));
    if (!slot.ready) {
      slot.onReady = () => {
        clearTimeout(timer);
        timer = setTimeout(expire, this.settings.timeoutMs);
      };
    }
    const poll = setInterval(() => void this.measure(slot, job), MEMORY_POLL_MS);
    job.done = () => {
      clearTimeout(timer);
      clearInterval(poll);
      slot.onReady = undefined;
    };
    const message: ParseJob = {
      id: job.id,
      bytes: job.bytes,
      format: job.format,
      name: job.name,
      caps: job.caps,
      ...(job.chunking ? { chunking: job.chunking } : {}),
    };
    slot.worker.postMessage(message, [job.bytes]);
  }

  /** The thread's heap and buffers, against the memory cap. */
  private async measure(slot: Slot, job: Job): Promise<void> {
    let held: number;
    try {
      const stats = await slot.worker.getHeapStatistics();
      held = stats.used_heap_size + stats.external_memory;
    } catch {
      return; // the thread is gone: its exit says why
    }
    if (slot.job !== job) return;
    this.peakBytes = Math.max(this.peakBytes, held);
    if (held > this.settings.memoryMb * MB) this.stop(slot, this.outOfMemory());
  }

  private outOfMemory(): DocumentTooLarge {
    return tooLarge(`the parser needed more than ${this.settings.memoryMb} MB of memory`, 'KB_PARSE_MEMORY_MB');
  }

  private answer(slot: Slot, m: Reply): void {
    if ('ready' in m) {
      slot.ready = true;
      slot.onReady?.();
      slot.onReady = undefined;
      return;
    }
    if (slot.job?.id !== m.id) return;
    const job = slot.job;
    job.done?.();
    slot.job = undefined;
    if ('value' in m) job.resolve(m.value);
    else job.reject(m.error.name === 'DocumentTooLarge' ? new DocumentTooLarge(m.error.message) : new DocumentUnreadable(m.error.message));
    slot.idle = setTimeout(() => this.stop(slot), IDLE_MS).unref();
    this.dispatch();
  }

  /** Ends the slot's thread; its document, if any, fails with `reason`. Queued documents go on. */
  private stop(slot: Slot, reason?: Error): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    this.slots.splice(at, 1);
    if (slot.idle) clearTimeout(slot.idle);
    const job = slot.job;
    slot.job = undefined;
    if (job) {
      job.done?.();
      job.reject(reason ?? new DocumentUnreadable('the parser stopped'));
    }
    void slot.worker.terminate();
    this.dispatch();
  }
}
