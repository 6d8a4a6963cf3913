// Brave Search's web API (`GET /res/v1/web/search`, key in `x-subscription-token`): no score, so
// rank order becomes one; it filters by a custom date range.
import { z } from 'zod';
import { optionalString } from '../../config/setting-kit';
import { getJson, stripTags, withDate } from './http';
import { defineProvider, fixedRate } from './provider';
import type { SearchProvider } from './types';

export function braveProvider(opts: { apiKey: string; baseUrl: string; timeoutMs: number }): SearchProvider {
  return {
    name: 'brave',
    async search(query, { maxResults, signal, timeRange }) {
      const u = new URL('/res/v1/web/search', opts.baseUrl);
      u.searchParams.set('q', query);
      u.searchParams.set('count', String(maxResults));
      // Brave's custom range is both ends, `YYYY-MM-DDtoYYYY-MM-DD`.
      if (timeRange?.from || timeRange?.to)
        u.searchParams.set('freshness', `${timeRange.from ?? '1970-01-01'}to${timeRange.to ?? new Date().toISOString().slice(0, 10)}`);
      const body = (await getJson(
        u,
        { headers: { accept: 'application/json', 'x-subscription-token': opts.apiKey }, timeoutMs: opts.timeoutMs, signal },
        'Brave',
      )) as {
        web?: { results?: { title?: string; url?: string; description?: string; page_age?: string }[] };
      };
      const results = body.web?.results ?? [];
      // Brave gives no score: rank order becomes one.
      return results
        .filter((r) => r.url)
        .map((r, i) =>
          withDate(
            {
              title: stripTags(r.title ?? r.url!),
              url: r.url!,
              content: stripTags(r.description ?? ''),
              score: 1 / (i + 1),
              source: 'brave',
            },
            r.page_age,
          ),
        );
    },
  };
}

export const brave = defineProvider({
  name: 'brave',
  topics: ['general', 'news'],
  settings: {
    BRAVE_API_KEY: optionalString.describe("Brave Search's API key"),
    BRAVE_BASE_URL: z.url().default('https://api.search.brave.com').describe("Brave Search's API"),
  },
  needs: { variable: 'BRAVE_API_KEY', what: 'a Brave key' },
  onByDefault: (s) => s.BRAVE_API_KEY !== undefined,
  turnedOnBy: 'BRAVE_API_KEY',
  rate: fixedRate(1),
  make: (s, c) => braveProvider({ apiKey: s.BRAVE_API_KEY!, baseUrl: s.BRAVE_BASE_URL, timeoutMs: c.timeoutMs }),
});
