// A worker for the watchdog workflows alone, as a process of its own (a workflow stopped by the
// isolate watchdog can take the process down with it, see test/workflows/watchdog.test.ts):
//   node bin/run-ts.mjs test/support/workflows/watchdog-worker.ts <temporal address> <task queue>
// Prints "ready" once it polls; the isolate execution timeout is one second.
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';

const [address, taskQueue] = process.argv.slice(2);
if (!address || !taskQueue) throw new Error('usage: watchdog-worker.ts <temporal address> <task queue>');
Runtime.install({ logger: new DefaultLogger('ERROR') });
const quiet = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
const workflowBundle = await bundleWorkflowCode({ workflowsPath: path.join(import.meta.dirname, 'watchdog.ts'), logger: quiet });
// The SDK takes the isolate timeout though its option type leaves it out (the default is 5 s).
const options: WorkerOptions & { isolateExecutionTimeout: string } = {
  connection: await NativeConnection.connect({ address }),
  taskQueue,
  workflowBundle,
  isolateExecutionTimeout: '1s',
};
const worker = await Worker.create(options);
const running = worker.run();
console.log('ready');
await running;
