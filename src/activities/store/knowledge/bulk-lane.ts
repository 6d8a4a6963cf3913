// The knowledge base's bulk writes (a document's chunks, their embeddings) go one at a time per
// store (a worker has one), each after a turn of the event loop. Ingestion is background work:
// four documents ingesting at once are some twenty activities that each write, and in `dev` the
// embedded database (PGlite) executes every statement on the thread that also serves the API, one
// session for all connections, first come first served. Let in at once, those writes filled the
// pool's queue and the session's, and another tenant's request waited behind all of them
// (seconds). Through the lane, a request waits behind at most one bulk statement, which the
// writers keep short (chunks.ts).
//
// After each write the lane rests for as long as this thread was busy during it, so that bulk
// writes take at most about half of a thread they keep busy: with PGlite in the process, the
// statement itself is what keeps it busy. Against a PostgreSQL server the thread mostly waits
// for the answer, and the lane hardly rests.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep, setImmediate as nextTurn } from 'node:timers/promises';

/** Runs a task after every task given before it has settled and the lane has rested. */
export type BulkLane = <T>(task: () => Promise<T>) => Promise<T>;

export function bulkLane(): BulkLane {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>) => {
    const run = tail.then(() => nextTurn()).then(() => timed(task));
    tail = run.then(
      ({ busyMs }) => (busyMs >= 1 ? sleep(busyMs) : undefined),
      () => undefined,
    );
    return run.then(({ value }) => value);
  };
}

/** The task's value and how long this thread was busy while it ran. */
async function timed<T>(task: () => Promise<T>): Promise<{ value: T; busyMs: number }> {
  const before = performance.eventLoopUtilization();
  const value = await task();
  return { value, busyMs: performance.eventLoopUtilization(before).active };
}
