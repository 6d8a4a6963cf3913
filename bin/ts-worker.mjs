// Entry of a worker thread that runs a TypeScript module of this repository: registers tsx's loader
// in the thread (a thread does not inherit the loader bin/run-ts.mjs registered), then imports the
// module named in workerData.entry.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
