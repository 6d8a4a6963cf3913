// Tavily: a web search for agents (`POST /search`, key as a bearer token) with a relevance score
// and the page's publication date, filtered by date on request.
import { z } from 'zod';
import { optionalString } from '../../config/setting-kit';
import { getJson, withDate } from './http';
import { defineProvider, fixedRate } from './provider';
import type { SearchProvider } from './types';

export function tavilyProvider(opts: { apiKey: string; baseUrl: string; timeoutMs: number }): SearchProvider {
  return {
    name: 'tavily',
    async search(query, { maxResults, signal, timeRange }) {
      const request: Record<string, unknown> = { query, max_results: maxResults, search_depth: 'basic' };
      if (timeRange?.from) request.start_date = timeRange.from;
      if (timeRange?.to) request.end_date = timeRange.to;
      const body = (await getJson(
        new URL('/search', opts.baseUrl),
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${opts.apiKey}` },
          body: JSON.stringify(request),
          timeoutMs: opts.timeoutMs,
          signal,
        },
        'Tavily',
      )) as { results?: { title?: string; url?: string; content?: string; score?: number; published_date?: string }[] };
      return (body.results ?? [])
        .filter((r) => r.url)
        .map((r) =>
          withDate(
            { title: r.title ?? r.url!, url: r.url!, content: r.content ?? '', score: r.score ?? 0, source: 'tavily' },
            r.published_date,
          ),
        );
    },
  };
}

export const tavily = defineProvider({
  name: 'tavily',
  topics: ['general', 'news'],
  settings: {
    TAVILY_API_KEY: optionalString.describe("Tavily's API key"),
    TAVILY_BASE_URL: z.url().default('https://api.tavily.com').describe("Tavily's API"),
  },
  needs: { variable: 'TAVILY_API_KEY', what: 'a Tavily key' },
  onByDefault: (s) => s.TAVILY_API_KEY !== undefined,
  turnedOnBy: 'TAVILY_API_KEY',
  rate: fixedRate(5),
  make: (s, c) => tavilyProvider({ apiKey: s.TAVILY_API_KEY!, baseUrl: s.TAVILY_BASE_URL, timeoutMs: c.timeoutMs }),
});
