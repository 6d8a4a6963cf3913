// robots.txt, fetched through the same guarded fetcher and cached per origin for a while.
import robotsParser from 'robots-parser';
import type { SafeFetcher } from './safe-fetch';

const TTL_MS = 10 * 60_000;

export function createRobotsChecker(fetcher: SafeFetcher, userAgent: string) {
  const cache = new Map<string, { at: number; robots: ReturnType<typeof robotsParser> | null }>();
  return async function allowed(url: string, signal?: AbortSignal): Promise<boolean> {
    const origin = new URL(url).origin;
    let entry = cache.get(origin);
    if (!entry || Date.now() - entry.at > TTL_MS) {
      let robots: ReturnType<typeof robotsParser> | null = null;
      try {
        const res = await fetcher.get(`${origin}/robots.txt`, { accept: 'text/plain', ...(signal ? { signal } : {}) });
        robots = robotsParser(`${origin}/robots.txt`, res.body.toString('utf8'));
      } catch {
        // No readable robots.txt (404, wrong type, unreachable): nothing is disallowed.
        robots = null;
      }
      entry = { at: Date.now(), robots };
      cache.set(origin, entry);
    }
    return entry.robots?.isAllowed(url, userAgent) ?? true;
  };
}
