// The knowledge base's bulk lane: writes run one at a time in the order given, and one that fails
// fails only its caller.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { bulkLane } from '../../src/activities/store/knowledge/bulk-lane';

describe('bulk lane', () => {
  it('runs tasks one at a time, in the order given; a failed task fails only its caller', async () => {
    const lane = bulkLane();
    const events: string[] = [];
    let running = 0;
    let most = 0;
    const task = (name: string, fail = false) =>
      lane(async () => {
        most = Math.max(most, ++running);
        events.push(`start ${name}`);
        await sleep(name === 'a' ? 30 : 1); // the first is the slowest: the others still wait for it
        events.push(`end ${name}`);
        running--;
        if (fail) throw new Error(`${name} failed`);
        return name;
      });
    const results = await Promise.allSettled([task('a'), task('b', true), task('c')]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['a', 'b failed', 'c']);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(most).toBe(1);
  });
});
