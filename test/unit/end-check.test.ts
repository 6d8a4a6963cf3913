// When a quiet event stream asks Temporal whether its run ended: after the first wait, then each
// "still running" doubles the wait up to the cap, and an event starts over.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EndCheck } from '../../src/api/events';

describe('EndCheck', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['Date'] }));
  afterEach(() => vi.useRealTimers());

  /** The quiet milliseconds until the check is due, to the nearest 100 ms. */
  function untilDue(c: EndCheck): number {
    let waited = 0;
    while (!c.due()) {
      vi.advanceTimersByTime(100);
      waited += 100;
      if (waited > 60 * 60_000) throw new Error('never due');
    }
    return waited;
  }

  it('waits 1×, 2×, 4× … the first wait while the run goes on, capped', () => {
    const c = new EndCheck(1_000, 5_000);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      waits.push(untilDue(c));
      c.stillRunning();
    }
    expect(waits).toEqual([1_100, 2_100, 4_100, 5_100, 5_100]);
  });

  it('starts over when the log grows', () => {
    const c = new EndCheck(1_000, 8_000);
    untilDue(c);
    c.stillRunning();
    untilDue(c);
    c.stillRunning();
    vi.advanceTimersByTime(3_000);
    c.heard();
    expect(c.due()).toBe(false);
    expect(untilDue(c)).toBe(1_100);
  });

  it('caps at five minutes by default, and never below the first wait', () => {
    const c = new EndCheck(60_000);
    for (let i = 0; i < 6; i++) {
      untilDue(c);
      c.stillRunning();
    }
    expect(untilDue(c)).toBe(300_100);
    expect(untilDue(new EndCheck(600_000))).toBe(600_100);
  });
});
