// The benchmark's measured LLM critical path: the longest chain of calls that follow each other.
import { describe, expect, it } from 'vitest';
import { llmCriticalPath } from '../../bench/critical-path';

describe('LLM critical path', () => {
  it('follows the longest chain of calls that start after the previous one ended', () => {
    // a (0-100) → three parallel calls (110-210, 110-400, 120-220) → z (410-500); the slow middle call is on the path.
    const calls = [
      { startedAt: 0, endedAt: 100 },
      { startedAt: 110, endedAt: 210 },
      { startedAt: 110, endedAt: 400 },
      { startedAt: 120, endedAt: 220 },
      { startedAt: 230, endedAt: 300 }, // follows the fast one: 100 + 100 + 70 = 270 < 390
      { startedAt: 410, endedAt: 500 },
    ];
    expect(llmCriticalPath(calls)).toEqual({ ms: 100 + 290 + 90, calls: 3, chain: [calls[0], calls[2], calls[5]] });
  });

  it('ignores calls that never ended and is zero without calls', () => {
    expect(llmCriticalPath([])).toEqual({ ms: 0, calls: 0, chain: [] });
    expect(llmCriticalPath([{ startedAt: 0 }, { startedAt: 5, endedAt: 15 }])).toEqual({
      ms: 10,
      calls: 1,
      chain: [{ startedAt: 5, endedAt: 15 }],
    });
  });
});
