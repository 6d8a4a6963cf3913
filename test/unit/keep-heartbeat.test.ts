// keep() holds a paid-for result until the database takes it. A write that neither answers nor
// fails (a database behind a silent network, until query_timeout) must not leave the attempt silent
// past its heartbeat timeout: Temporal would hand the call to another attempt, which pays again.
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { keep } from '../../src/activities/attempt';

const HEARTBEAT_TIMEOUT_MS = 300;

function inActivity<T>(fn: () => Promise<T>): { done: Promise<T>; beats: number[] } {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS });
  const beats: number[] = [];
  env.on('heartbeat', () => beats.push(Date.now()));
  return { done: env.run(fn) as Promise<T>, beats };
}

describe('keep', () => {
  afterEach(() => vi.useRealTimers());

  // On the fake clock: the beats' spacing is the code's, whatever the machine's load does to timers.
  it('heartbeats while a write hangs, and returns once it lands', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const started = Date.now();
    const { done, beats } = inActivity(() => keep(() => new Promise<void>((resolve) => setTimeout(resolve, 1_500))));
    await vi.advanceTimersByTimeAsync(1_500);
    await done;
    expect(Date.now() - started).toBe(1_500);
    // Never silent for a whole heartbeat timeout: from the start, between beats, and up to the end.
    const gaps = [started, ...beats, Date.now()].slice(1).map((t, i, all) => t - (i ? all[i - 1]! : started));
    expect(beats.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...gaps)).toBeLessThan(HEARTBEAT_TIMEOUT_MS);
  });

  it('tries a failed write again and stops beating once it is stored', async () => {
    let tries = 0;
    const { done, beats } = inActivity(() =>
      keep(async () => {
        if (++tries < 3) throw new Error('connection refused');
      }),
    );
    await done;
    expect(tries).toBe(3);
    const after = beats.length;
    await new Promise((r) => setTimeout(r, 2 * HEARTBEAT_TIMEOUT_MS));
    expect(beats.length).toBe(after);
  });
});
