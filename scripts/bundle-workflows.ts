// Bundles the workflow code the way a worker does: a Node built-in or I/O package reached from
// src/workflows fails here, in the test command, instead of in a running worker.
import { bundleWorkflows } from '../src/worker';

const started = Date.now();
const bundle = await bundleWorkflows();
console.log(`workflow bundle ok: ${(bundle.code.length / 1024).toFixed(0)} KiB in ${Date.now() - started} ms`);
