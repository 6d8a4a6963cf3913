// Bundles the workflow code the way a worker does: a Node built-in or I/O package reached from
// src/workflows fails here, in the test command, instead of in a running worker. With --out FILE,
// writes the bundle there (src/infra/workflow-bundle.ts builds its cache this way); with --cache,
// builds the cached bundle a worker starts on (the Dockerfile does, as the image's user cannot).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { bundleWorkflows } from '../src/worker';

const { values } = parseArgs({ options: { out: { type: 'string' }, cache: { type: 'boolean' } } });
const started = Date.now();
if (values.cache) {
  const { cachedWorkflowBundle } = await import('../src/infra/workflow-bundle');
  const cached = await cachedWorkflowBundle();
  console.log(`workflow bundle cached: ${'codePath' in cached ? cached.codePath : '?'} in ${Date.now() - started} ms`);
  process.exit(0);
}
const bundle = await bundleWorkflows();
if (values.out) writeFileSync(values.out, bundle.code);
console.log(`workflow bundle ok: ${(bundle.code.length / 1024).toFixed(0)} KiB in ${Date.now() - started} ms`);
