// SearXNG's JSON API (`GET /search?format=json`; an instance answers 403 until `json` is in its
// `search.formats`). It filters by time only as "the last day, week, month or year", so an
// open-ended recent range goes as the smallest of those that holds it and any other is left to
// the activity's check of publication dates.
import { optionalUrl } from '../../config/setting-kit';
import { isoDate, providerFetch } from './http';
import { defineProvider, fixedRate } from './provider';
import type { SearchHit, SearchOptions, SearchProvider } from './types';

interface SearxResponse {
  results?: { url?: string; title?: string; content?: string; score?: number; engine?: string; publishedDate?: string | null }[];
}

const DAY_MS = 86_400_000;

/** SearXNG's `time_range` for a range, when one of its periods holds it. */
export function searxTimeRange(range: SearchOptions['timeRange'], now: Date): string | undefined {
  const today = now.toISOString().slice(0, 10);
  if (!range?.from || (range.to && range.to < today)) return undefined;
  const days = (Date.parse(today) - Date.parse(range.from)) / DAY_MS;
  return (
    [
      [1, 'day'],
      [7, 'week'],
      [31, 'month'],
      [366, 'year'],
    ] as const
  ).find(([n]) => days <= n)?.[1];
}

export function searxngProvider(baseUrl: string, timeoutMs = 15_000): SearchProvider {
  return {
    name: 'searxng',
    async search(query, { maxResults, signal, timeRange }) {
      const u = new URL('/search', baseUrl);
      u.searchParams.set('q', query);
      u.searchParams.set('format', 'json');
      const period = searxTimeRange(timeRange, new Date());
      if (period) u.searchParams.set('time_range', period);
      const res = await providerFetch(u, { headers: { accept: 'application/json' }, timeoutMs, signal }, 'SearXNG');
      const body = (await res.json()) as SearxResponse;
      return (body.results ?? [])
        .filter((r) => typeof r.url === 'string' && /^https?:/.test(r.url))
        .slice(0, maxResults)
        .map<SearchHit>((r) => {
          const published = isoDate(r.publishedDate);
          return {
            title: r.title ?? r.url!,
            url: r.url!,
            content: r.content ?? '',
            score: r.score ?? 0,
            source: 'searxng',
            ...(published ? { published } : {}),
          };
        });
    },
  };
}

export const searxng = defineProvider({
  name: 'searxng',
  topics: ['general', 'news'],
  settings: {
    SEARXNG_URL: optionalUrl.describe('a SearXNG instance'),
  },
  needs: { variable: 'SEARXNG_URL', what: 'a SearXNG URL' },
  onByDefault: (s) => s.SEARXNG_URL !== undefined,
  turnedOnBy: 'SEARXNG_URL',
  rate: fixedRate(5),
  make: (s, c) => searxngProvider(s.SEARXNG_URL!, c.timeoutMs),
});
