// Wikipedia's search (`/w/api.php?list=search`, keyless): article titles and snippets, linked to
// the articles. Wikimedia asks callers for a user agent that says who they are.
import { z } from 'zod';
import { getJson, stripTags } from './http';
import { defineProvider, fixedRate } from './provider';
import type { SearchProvider } from './types';

export function wikipediaProvider(opts: { baseUrl: string; timeoutMs: number; userAgent: string }): SearchProvider {
  return {
    name: 'wikipedia',
    async search(query, { maxResults, signal }) {
      const u = new URL('/w/api.php', opts.baseUrl);
      for (const [k, v] of Object.entries({
        action: 'query',
        list: 'search',
        srsearch: query,
        srlimit: String(maxResults),
        format: 'json',
        utf8: '1',
      }))
        u.searchParams.set(k, v);
      const body = (await getJson(u, { headers: { 'user-agent': opts.userAgent }, timeoutMs: opts.timeoutMs, signal }, 'Wikipedia')) as {
        query?: { search?: { title: string; snippet?: string }[] };
      };
      return (body.query?.search ?? []).map((r, i) => ({
        title: r.title,
        url: new URL(`/wiki/${encodeURIComponent(r.title.replace(/ /g, '_'))}`, opts.baseUrl).toString(),
        content: stripTags(r.snippet ?? ''),
        score: 1 / (i + 1),
        source: 'wikipedia',
      }));
    },
  };
}

export const wikipedia = defineProvider({
  name: 'wikipedia',
  topics: ['encyclopedic'],
  settings: {
    WIKIPEDIA_BASE_URL: z.url().default('https://en.wikipedia.org').describe('the Wikipedia searched (keyless)'),
  },
  onByDefault: () => true,
  rate: fixedRate(10),
  make: (s, c) => wikipediaProvider({ baseUrl: s.WIKIPEDIA_BASE_URL, timeoutMs: c.timeoutMs, userAgent: c.userAgent }),
});
