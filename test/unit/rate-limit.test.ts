import { describe, expect, it } from 'vitest';
import { rateLimited } from '../../src/activities/search/rate-limit';
import type { SearchProvider } from '../../src/infra/search/types';

describe('per-provider rate limit', () => {
  it('spreads a burst out to the configured rate', async () => {
    const calls: number[] = [];
    const inner: SearchProvider = { name: 'p', search: async () => (calls.push(Date.now()), []) };
    const limited = rateLimited(inner, 5); // 5 per second, burst of 5
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 8 }, (_, i) => limited.search(`q${i}`, { maxResults: 1 })));
    // 5 at once, then 3 more at 200 ms intervals.
    expect(calls.length).toBe(8);
    expect(calls[4]! - t0).toBeLessThan(100);
    expect(calls[7]! - t0).toBeGreaterThanOrEqual(550);
  });

  it('gives up waiting when the search is cancelled', async () => {
    const limited = rateLimited({ name: 'p', search: async () => [] }, 0.5);
    await limited.search('first', { maxResults: 1 });
    const ac = new AbortController();
    const pending = limited.search('second', { maxResults: 1, signal: ac.signal });
    ac.abort(new Error('cancelled'));
    await expect(pending).rejects.toThrow('cancelled');
  });
});
