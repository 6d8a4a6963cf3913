// The last line of defence of a long-running process (dev, worker, api). Node ends the process on
// an exception nothing caught or a rejection nothing handled; in `dev` that process is the API,
// the worker, the embedded database and the Temporal dev server of every tenant, so one bug on one
// request's path would take all of them down, and a retried activity would do it again after each
// restart. Here such an error is logged with its stack and counted, and the process keeps serving.
// Every known path handles its own errors; these handlers exist for the ones not yet known.
import type { Logger } from './logger';
import { metrics } from './metrics';

let installed = false;

export function installLastResortHandlers(log: Logger): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason) => {
    metrics.uncaughtErrors.inc({ kind: 'unhandled_rejection' });
    log.error('an unhandled promise rejection (a bug): logged, and the process keeps serving', { err: reason });
  });
  process.on('uncaughtException', (err, origin) => {
    metrics.uncaughtErrors.inc({ kind: 'uncaught_exception' });
    log.error('an uncaught exception (a bug): logged, and the process keeps serving', { err, origin });
  });
}
