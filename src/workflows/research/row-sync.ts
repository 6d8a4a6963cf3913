// Keeps the run's row in PostgreSQL, and with it the run's event log, up with the run's state:
// after each change the state publishes, one write that takes every change made while the last
// one was in flight. The writes are numbered, so a late one never replaces a newer one. Each write
// carries the run's status view, which the API answers GET /v1/research/:id from.
import { condition, isCancellation, log } from '@temporalio/workflow';

/**
 * A woken loop lets the rest of the workflow task's work run before it writes, so that the changes
 * of one task (a step's end and the phase that follows it) are one write, not two the task waits
 * for one after the other. The changes of the status view that the run does not publish and
 * nothing else soon writes (a step's next attempt, an ignored signal) are written too, so that the
 * row's view is what the status query would answer, but for the notes and usage an activity adds
 * until the run's next write (at most that of the next activity; more writes would cost a local
 * activity each).
 */
export class RowSync {
  private seq = 0;
  /** The state changed since the row's last write. */
  private behind = false;
  private stopped = false;
  private loop?: Promise<void>;

  /** The state changed: the loop writes the row again. */
  changed(): void {
    this.behind = true;
  }

  /** The status view changed without a change the run publishes (a step's next attempt, an
   *  ignored signal): the loop writes the row again all the same. */
  viewChanged(): void {
    this.behind = true;
  }

  /** The number of the next write of the row. */
  nextSeq(): number {
    return ++this.seq;
  }

  /** Writes of the row so far (an execution the run continues in numbers its writes after them). */
  get writes(): number {
    return this.seq;
  }

  /** The run continues an earlier execution that wrote the row `writes` times. */
  continueAfter(writes: number): void {
    this.seq = Math.max(this.seq, writes);
  }

  /** Runs `write` after every change until stop(). */
  start(write: () => Promise<unknown>): void {
    const loop = (async () => {
      for (;;) {
        await condition(() => this.behind || this.stopped);
        if (!this.stopped) await afterOtherWork();
        if (this.stopped) return;
        this.behind = false;
        await write();
      }
    })();
    // Ended by stop; a write that failed for good leaves the last write to say so.
    this.loop = loop.catch((err: unknown) => {
      if (!isCancellation(err)) log.warn('the run row is no longer kept up to date', { error: String(err) });
    });
  }

  /** Ends the loop, after the write in flight (a change not yet written is the caller's to write). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

/**
 * Resolves once the workflow code that other conditions woke in this pass has run: a condition
 * that is false when asked first is checked again in the next pass, after their continuations.
 */
function afterOtherWork(): Promise<void> {
  let asked = false;
  return condition(() => {
    if (asked) return true;
    asked = true;
    return false;
  });
}
