// A worker that polls its task queue only while what its activities need is there (the sandbox
// queue's: this machine's Docker engine with the sandbox image). A worker that cannot run a task
// must not take it: another worker with a free slot would have run it at once, while the task
// taken here fails, waits out its retry backoff and may come back to the same worker.
import type { State } from '@temporalio/worker';

/** What the gate needs of a Temporal worker (`Worker` from @temporalio/worker). */
export interface GatedInner {
  run(): Promise<void>;
  shutdown(): void;
  getState(): State;
  getStatus(): { numInFlightActivities: number };
}

export interface GateOptions {
  /** How often `usable` is asked again while the worker polls. */
  intervalMs: number;
  /** How often while it does not (sooner: a worker that could serve should not stay idle long). */
  retryMs: number;
  /** Failed checks in a row after which a polling worker stops (one slow answer is not an outage). */
  downChecks: number;
  /** Told when the worker starts or stops polling. */
  onChange?: (polling: boolean) => void;
}

export class GatedWorker {
  private inner: GatedInner | undefined;
  private innerRun: Promise<void> | undefined;
  /** Rejects when the inner worker fails; never settles otherwise. */
  private innerFailure: Promise<never> | undefined;
  private state: 'INITIALIZED' | 'RUNNING' | 'STOPPING' | 'STOPPED' = 'INITIALIZED';
  private wake: (() => void) | undefined;

  /** `create` makes a fresh worker each time the gate opens (a stopped worker cannot run again). */
  constructor(
    private readonly create: () => Promise<GatedInner>,
    private readonly usable: () => Promise<boolean>,
    private readonly opts: GateOptions,
  ) {}

  /** Whether the worker polls now. */
  get polling(): boolean {
    return this.inner !== undefined;
  }

  async run(): Promise<void> {
    this.state = 'RUNNING';
    let failed = 0;
    let checks = 0;
    try {
      while (this.state === 'RUNNING') {
        const ok = await this.usable().catch(() => false);
        failed = ok ? 0 : failed + 1;
        // A worker that cannot serve from the start says so once.
        if (checks++ === 0 && !ok) this.opts.onChange?.(false);
        // A worker that stopped by itself (not failed: that ends this run) is made again.
        if (this.inner?.getState() === 'STOPPED') this.forget();
        if (ok && !this.inner && this.state === 'RUNNING') await this.open();
        else if (this.inner && failed >= this.opts.downChecks) await this.close();
        await this.pause();
      }
    } finally {
      try {
        await this.close();
      } finally {
        this.state = 'STOPPED';
      }
    }
  }

  shutdown(): void {
    if (this.state !== 'RUNNING') return;
    this.state = 'STOPPING';
    this.wake?.();
  }

  getState(): State {
    return this.state;
  }

  getStatus(): { numInFlightActivities: number } {
    return { numInFlightActivities: this.inner?.getStatus().numInFlightActivities ?? 0 };
  }

  private async open(): Promise<void> {
    const inner = await this.create();
    this.inner = inner;
    this.innerRun = inner.run();
    // The inner worker's own failure ends the gate's run with it (the group then stops the rest).
    this.innerFailure = this.innerRun.then(
      () => new Promise<never>(() => undefined),
      (err: unknown) => {
        throw err;
      },
    );
    this.innerFailure.catch(() => undefined);
    this.opts.onChange?.(true);
  }

  private async close(): Promise<void> {
    const { inner, innerRun } = this;
    if (!inner || !innerRun) return;
    if (inner.getState() === 'RUNNING') inner.shutdown();
    this.forget();
    // Activities in flight finish (within the worker's shutdown grace time) before this returns.
    await innerRun;
  }

  private forget(): void {
    this.inner = undefined;
    this.innerRun = undefined;
    this.innerFailure = undefined;
    // Stopping with the process is not news; stopping while it runs is.
    if (this.state === 'RUNNING') this.opts.onChange?.(false);
  }

  /** Waits for the next check, a shutdown, or the inner worker's failure (which it rethrows). */
  private async pause(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const woken = new Promise<void>((resolve) => {
      this.wake = resolve;
      timer = setTimeout(resolve, this.inner ? this.opts.intervalMs : this.opts.retryMs);
    });
    try {
      await (this.innerFailure ? Promise.race([woken, this.innerFailure]) : woken);
    } finally {
      clearTimeout(timer);
      this.wake = undefined;
    }
  }
}
