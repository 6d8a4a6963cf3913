// The sandbox queue's worker polls only while its Docker engine can run sandboxes
// (src/infra/gated-worker.ts): it starts when the check passes, stops after failed checks in a
// row (not after one), starts again as a fresh worker, and fails with its inner worker.
import { describe, expect, it } from 'vitest';
import type { State } from '@temporalio/worker';
import { GatedWorker, type GatedInner } from '../../src/infra/gated-worker';

/** A stand-in for a Temporal worker: runs until shut down, or fails when told to. */
class FakeWorker implements GatedInner {
  state: State = 'INITIALIZED';
  private end: ((err?: Error) => void) | undefined;
  run(): Promise<void> {
    this.state = 'RUNNING';
    return new Promise((resolve, reject) => {
      this.end = (err) => {
        this.state = err ? 'FAILED' : 'STOPPED';
        if (err) reject(err);
        else resolve();
      };
    });
  }
  shutdown(): void {
    this.state = 'STOPPING';
    setTimeout(() => this.end?.(), 5);
  }
  fail(err: Error): void {
    this.end?.(err);
  }
  getState(): State {
    return this.state;
  }
  getStatus() {
    return { numInFlightActivities: this.state === 'RUNNING' ? 1 : 0 };
  }
}

/** Waits until `cond` holds (checks every few ms; the gate's interval is a few ms here). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

function gate(answers: boolean[]) {
  const made: FakeWorker[] = [];
  const changes: boolean[] = [];
  /** Whether it polled when each check was made. */
  const pollingAtCheck: boolean[] = [];
  let checks = 0;
  const g: GatedWorker = new GatedWorker(
    async () => {
      const w = new FakeWorker();
      made.push(w);
      return w;
    },
    async () => {
      pollingAtCheck.push(g.polling);
      return answers[Math.min(checks++, answers.length - 1)]!;
    },
    { intervalMs: 2, retryMs: 2, downChecks: 3, onChange: (p) => changes.push(p) },
  );
  return { g, made, changes, pollingAtCheck, checks: () => checks };
}

describe('a worker gated on what its activities need', () => {
  it('polls once the check passes, keeps polling through fewer failed checks than the limit, stops after that many, and starts a fresh worker when it passes again', async () => {
    //            not yet       up    one slow answer, two    down for three checks  up again
    const answers = [false, false, true, false, false, true, false, false, false, false, true];
    const { g, made, changes, pollingAtCheck } = gate(answers);
    const running = g.run();
    await until(() => made.length === 2);
    // Two failed checks in a row did not stop it; the third in a row did; the next pass started it.
    expect(pollingAtCheck.slice(0, 11)).toEqual([false, false, false, true, true, true, true, true, true, false, false]);
    expect(made[0]!.state).toBe('STOPPED');
    expect(g.polling).toBe(true);
    expect(made[1]!.state).toBe('RUNNING');
    expect(g.getStatus().numInFlightActivities).toBe(1);
    g.shutdown();
    await running;
    expect(made[1]!.state).toBe('STOPPED');
    // Not polling at first (said once), then on, off and on; the shutdown is not reported.
    expect(changes).toEqual([false, true, false, true]);
    expect(g.getState()).toBe('STOPPED');
  });

  it('never makes a worker while the check fails, and stops at once when shut down', async () => {
    const { g, made, checks, changes } = gate([false]);
    const running = g.run();
    await until(() => checks() >= 5);
    g.shutdown();
    await running;
    expect(made).toHaveLength(0);
    expect(changes).toEqual([false]);
    expect(g.getStatus().numInFlightActivities).toBe(0);
  });

  it("fails with its worker's failure", async () => {
    const { g, made } = gate([true]);
    const running = g.run();
    await until(() => made.length === 1);
    made[0]!.fail(new Error('the connection to Temporal is gone'));
    await expect(running).rejects.toThrow('the connection to Temporal is gone');
    expect(g.getState()).toBe('STOPPED');
  });
});
