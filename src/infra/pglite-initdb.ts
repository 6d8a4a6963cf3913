// A fresh embedded database's initdb, on a thread of its own. The PGlite instance that ran initdb
// keeps initdb's memory in its WebAssembly heap (about 250 MB), which never shrinks; closed, it is
// freed only when the collector comes around to it, and until then it stays resident. A thread
// that ends gives its whole heap back at once, so the process opens the new directory with only
// what serving needs. The thread's entry is pglite-initdb-thread.ts.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PROJECT_ROOT } from './paths';

const BOOTSTRAP = path.join(PROJECT_ROOT, 'bin', 'ts-worker.mjs');
const ENTRY = pathToFileURL(path.join(PROJECT_ROOT, 'src', 'infra', 'pglite-initdb-thread.ts')).href;

/** Runs initdb into `dataDir` on a thread that ends when it is done; rejects with the thread's error. */
export function initdbOnThread(dataDir: string, startParams: string[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const worker = new Worker(BOOTSTRAP, { workerData: { entry: ENTRY, dataDir, startParams } });
    let failed: Error | undefined;
    worker.once('message', (m: { error?: string }) => {
      if (m.error) failed = new Error(`embedded PostgreSQL could not create ${dataDir}: ${m.error}`);
    });
    worker.once('error', (err) => (failed = err));
    worker.once('exit', (code) => {
      if (failed) reject(failed);
      else if (code !== 0) reject(new Error(`embedded PostgreSQL's initdb thread exited with code ${code}`));
      else resolve();
    });
  });
}
