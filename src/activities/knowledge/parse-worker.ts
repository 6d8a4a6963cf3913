// The parse thread (see parse-thread.ts): one document at a time, bytes in, sections out, or the
// reason it could not be read. The parsers stay loaded between documents.
import { parentPort } from 'node:worker_threads';
import { parseDocument, type DocFormat } from './parse';
import type { ParseCaps } from './parse-caps';

export interface ParseJob {
  id: number;
  bytes: ArrayBuffer;
  format: DocFormat;
  name: string;
  caps: ParseCaps;
}

parentPort!.on('message', (job: ParseJob) => {
  parseDocument(Buffer.from(job.bytes), job.format, job.name, job.caps).then(
    (value) => parentPort!.postMessage({ id: job.id, value }),
    (err: unknown) => {
      const e = err instanceof Error ? err : new Error(String(err));
      parentPort!.postMessage({ id: job.id, error: { name: e.name, message: e.message } });
    },
  );
});
parentPort!.postMessage({ ready: true });
