// Entry of a worker thread that runs a TypeScript module of this repository: registers tsx's loader
// in the thread (a thread does not inherit the loader bin/run-ts.mjs registered), then imports the
// module named in workerData.entry. The plain JavaScript modules named in workerData.preload are
// imported first, without the loader: through it, a large ES module (pdf.js) holds about ten times
// the memory (about 90 MB more for pdf.js).
import { workerData } from 'node:worker_threads';

for (const specifier of workerData.preload ?? []) await import(specifier);
const { register } = await import('tsx/esm/api');
register();
await import(workerData.entry);
