// OpenAlex's works search (`GET /works`, keyless): scholarly works with their venue, year,
// relevance and abstract, filtered by publication date.
import { z } from 'zod';
import { optionalString } from '../../config/setting-kit';
import { getJson, withDate } from './http';
import { defineProvider, fixedRate } from './provider';
import type { SearchProvider } from './types';

/** OpenAlex stores abstracts as word → positions; this puts the words back in order. */
export function invertedIndexToText(index: Record<string, number[]> | null | undefined): string {
  if (!index) return '';
  const words: string[] = [];
  for (const [word, positions] of Object.entries(index)) for (const p of positions) words[p] = word;
  return words.filter(Boolean).join(' ');
}

export function openAlexProvider(opts: { baseUrl: string; timeoutMs: number; mailto?: string | undefined }): SearchProvider {
  return {
    name: 'openalex',
    async search(query, { maxResults, signal, timeRange }) {
      const u = new URL('/works', opts.baseUrl);
      u.searchParams.set('search', query);
      u.searchParams.set('per-page', String(maxResults));
      const filter = [timeRange?.from && `from_publication_date:${timeRange.from}`, timeRange?.to && `to_publication_date:${timeRange.to}`];
      if (filter.some(Boolean)) u.searchParams.set('filter', filter.filter(Boolean).join(','));
      if (opts.mailto) u.searchParams.set('mailto', opts.mailto);
      const body = (await getJson(u, { headers: { accept: 'application/json' }, timeoutMs: opts.timeoutMs, signal }, 'OpenAlex')) as {
        results?: {
          id: string;
          doi?: string | null;
          title?: string | null;
          display_name?: string | null;
          publication_year?: number | null;
          publication_date?: string | null;
          relevance_score?: number | null;
          primary_location?: { landing_page_url?: string | null; source?: { display_name?: string | null } | null } | null;
          abstract_inverted_index?: Record<string, number[]> | null;
        }[];
      };
      const results = body.results ?? [];
      const top = Math.max(1, ...results.map((r) => r.relevance_score ?? 0));
      return results.map((r) => {
        const venue = r.primary_location?.source?.display_name;
        const meta = [r.publication_year, venue].filter(Boolean).join(', ');
        return withDate(
          {
            title: r.display_name ?? r.title ?? r.id,
            url: r.doi ?? r.primary_location?.landing_page_url ?? r.id,
            content: [meta && `(${meta})`, invertedIndexToText(r.abstract_inverted_index)].filter(Boolean).join(' '),
            score: (r.relevance_score ?? 0) / top,
            source: 'openalex',
          },
          r.publication_date,
        );
      });
    },
  };
}

export const openalex = defineProvider({
  name: 'openalex',
  topics: ['academic'],
  settings: {
    OPENALEX_BASE_URL: z.url().default('https://api.openalex.org').describe('OpenAlex (keyless)'),
    OPENALEX_MAILTO: optionalString.describe('an email address sent to OpenAlex as `mailto` with each request'),
  },
  onByDefault: () => true,
  rate: fixedRate(10),
  make: (s, c) => openAlexProvider({ baseUrl: s.OPENALEX_BASE_URL, timeoutMs: c.timeoutMs, mailto: s.OPENALEX_MAILTO }),
});
