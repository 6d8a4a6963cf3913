// The parse thread (see parse-thread.ts): one document at a time, bytes in, sections out (or, for
// ingestion, the chunks: tokenising a document's megabytes of text takes seconds that must not be
// the serving thread's), or the reason it could not be read. The parsers stay loaded between documents.
import { parentPort } from 'node:worker_threads';
import { chunkParsed, type ChunkOptions } from './chunk';
import { parseDocument, type DocFormat } from './parse';
import type { ParseCaps } from './parse-caps';

export interface ParseJob {
  id: number;
  bytes: ArrayBuffer;
  format: DocFormat;
  name: string;
  caps: ParseCaps;
  /** Set: the answer is the document's chunks (chunkParsed), not its sections. */
  chunking?: ChunkOptions;
}

parentPort!.on('message', (job: ParseJob) => {
  parseDocument(Buffer.from(job.bytes), job.format, job.name, job.caps)
    .then((doc) => (job.chunking ? chunkParsed(doc, job.chunking) : doc))
    .then(
      (value) => parentPort!.postMessage({ id: job.id, value }),
      (err: unknown) => {
        const e = err instanceof Error ? err : new Error(String(err));
        parentPort!.postMessage({ id: job.id, error: { name: e.name, message: e.message } });
      },
    );
});
parentPort!.postMessage({ ready: true });
