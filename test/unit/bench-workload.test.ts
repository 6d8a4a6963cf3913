// The load bench's `users` workload: the mix it promises holds over any 20 runs in a row.
import { describe, expect, it } from 'vitest';
import { judgeFailsFirst, stepCrawls, usersPlan, usersRun } from '../../bench/support/workload';

const window = (start: number) => Array.from({ length: 20 }, (_, k) => start + k);

describe('users workload', () => {
  it.each([0, 7, 113])('runs %i to +19: 2.3 steps, 45 % processing, 10 % gap loops, about 10 % of steps judged twice', (start) => {
    const runs = window(start).map((i) => ({ i, ...usersRun(i, true) }));
    expect(runs.reduce((a, r) => a + r.steps, 0) / 20).toBeCloseTo(2.3, 5);
    expect(runs.filter((r) => r.processing).length).toBe(9);
    expect(runs.filter((r) => r.gapLoop).length).toBe(2);
    // Steps of the plans, and gap reflection's follow-up steps.
    const steps = runs.reduce((a, r) => a + r.steps + (r.gapLoop ? 1 : 0), 0);
    const failed = runs.reduce((a, r) => a + Array.from({ length: r.steps }, (_, k) => judgeFailsFirst(r.i, k)).filter(Boolean).length, 0);
    expect(failed / steps).toBeGreaterThan(0.09);
    expect(failed / steps).toBeLessThan(0.12);
  });

  it('fails only steps a plan has, and reads a page in a quarter of the steps', () => {
    for (const i of window(0)) {
      for (let k = 0; k < 3; k++) if (judgeFailsFirst(i, k)) expect(k).toBeLessThan(usersRun(i, true).steps);
    }
    const cells = window(40).flatMap((i) => [0, 1, 2].map((k) => stepCrawls(i, k)));
    expect(cells.filter(Boolean).length / cells.length).toBeCloseTo(0.25, 5);
  });

  it('ends a plan with a processing step that depends on the others, and has none without the sandbox', () => {
    const i = window(0).find((n) => usersRun(n, true).processing && usersRun(n, true).steps === 3)!;
    expect(usersPlan(i, true)).toEqual([{ id: 's1' }, { id: 's2' }, { id: 's3', type: 'processing', dependsOn: ['s1', 's2'] }]);
    expect(usersPlan(i, false).every((s) => s.type === undefined)).toBe(true);
    expect(window(0).some((n) => usersRun(n, false).processing)).toBe(false);
  });
});
