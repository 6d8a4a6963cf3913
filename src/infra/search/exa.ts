// Exa: a neural web search (`POST /search`, key in `x-api-key`) that returns the passages of each
// page that best answer the query (highlights) with the page's publication date, and filters by
// that date. Its errors are JSON `{ requestId, error, tag }` (401 INVALID_API_KEY, 402
// NO_MORE_CREDITS, 400 for a bad request); a 429 has only `error`.
import { z } from 'zod';
import { optionalString } from '../../config/setting-kit';
import { getJson, isoDate } from './http';
import { defineProvider, fixedRate } from './provider';
import type { SearchHit, SearchProvider } from './types';

interface ExaResult {
  id?: string;
  url?: string;
  title?: string | null;
  publishedDate?: string | null;
  author?: string | null;
  text?: string;
  highlights?: string[];
  summary?: string;
}

export interface ExaOptions {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
}

/** The longest text kept from one result when Exa sends the page's text instead of highlights. */
const MAX_TEXT = 1_500;

export function exaProvider(opts: ExaOptions): SearchProvider {
  return {
    name: 'exa',
    async search(query, { maxResults, signal, timeRange }) {
      const request: Record<string, unknown> = { query, numResults: maxResults, type: 'auto', contents: { highlights: true } };
      // Whole days, inclusive: from the first millisecond of `from` to the last of `to`.
      if (timeRange?.from) request.startPublishedDate = `${timeRange.from}T00:00:00.000Z`;
      if (timeRange?.to) request.endPublishedDate = `${timeRange.to}T23:59:59.999Z`;
      const body = (await getJson(
        new URL('/search', opts.baseUrl),
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': opts.apiKey },
          body: JSON.stringify(request),
          timeoutMs: opts.timeoutMs,
          signal,
        },
        'Exa',
      )) as { results?: ExaResult[] };
      return (body.results ?? [])
        .filter((r) => typeof r.url === 'string' && /^https?:/.test(r.url))
        .slice(0, maxResults)
        .map((r, i) => {
          const published = isoDate(r.publishedDate);
          const content = r.highlights?.length ? r.highlights.join(' … ') : (r.text ?? r.summary ?? '').slice(0, MAX_TEXT);
          return {
            title: r.title || r.url!,
            url: r.url!,
            content: content.replace(/\s+/g, ' ').trim(),
            score: 1 / (i + 1),
            source: 'exa',
            ...(published ? { published } : {}),
          } satisfies SearchHit;
        });
    },
  };
}

export const exa = defineProvider({
  name: 'exa',
  topics: ['general', 'news'],
  settings: {
    EXA_API_KEY: optionalString.describe("Exa's API key"),
    EXA_BASE_URL: z.url().default('https://api.exa.ai').describe("Exa's API"),
  },
  needs: { variable: 'EXA_API_KEY', what: 'an Exa key' },
  onByDefault: (s) => s.EXA_API_KEY !== undefined,
  turnedOnBy: 'EXA_API_KEY',
  rate: fixedRate(5),
  make: (s, c) => exaProvider({ apiKey: s.EXA_API_KEY!, baseUrl: s.EXA_BASE_URL, timeoutMs: c.timeoutMs }),
});
