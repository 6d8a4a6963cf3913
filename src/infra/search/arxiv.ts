// arXiv's query API (`GET /api/query`, keyless, Atom XML): preprints with their abstracts, filtered
// by submission date. arXiv asks for no more than one request every three seconds.
import { z } from 'zod';
import { providerFetch, withDate } from './http';
import { defineProvider, fixedRate } from './provider';
import type { SearchProvider } from './types';

export function arxivProvider(opts: { baseUrl: string; timeoutMs: number }): SearchProvider {
  return {
    name: 'arxiv',
    async search(query, { maxResults, signal, timeRange }) {
      const u = new URL('/api/query', opts.baseUrl);
      // arXiv filters on submission time, `[YYYYMMDDHHMM TO YYYYMMDDHHMM]`.
      const stamp = (d: string, hhmm: string) => `${d.replace(/-/g, '')}${hhmm}`;
      const dated = timeRange?.from || timeRange?.to;
      const window = dated
        ? ` AND submittedDate:[${stamp(timeRange.from ?? '1991-01-01', '0000')} TO ${stamp(timeRange.to ?? '2999-12-31', '2359')}]`
        : '';
      u.searchParams.set('search_query', `all:${query}${window}`);
      u.searchParams.set('max_results', String(maxResults));
      const res = await providerFetch(u, { timeoutMs: opts.timeoutMs, signal }, 'arXiv');
      const { JSDOM } = await import('jsdom'); // loaded with the first arXiv search
      const doc = new JSDOM(await res.text(), { contentType: 'text/xml' }).window.document;
      const text = (el: Element, tag: string) => el.getElementsByTagName(tag)[0]?.textContent?.replace(/\s+/g, ' ').trim() ?? '';
      return [...doc.getElementsByTagName('entry')].map((e, i) => {
        const alt = [...e.getElementsByTagName('link')].find((l) => l.getAttribute('rel') === 'alternate')?.getAttribute('href');
        const hit = {
          title: text(e, 'title'),
          url: alt ?? text(e, 'id'),
          content: text(e, 'summary'),
          score: 1 / (i + 1),
          source: 'arxiv',
        };
        return withDate(hit, text(e, 'published'));
      });
    },
  };
}

export const arxiv = defineProvider({
  name: 'arxiv',
  topics: ['academic'],
  settings: {
    ARXIV_BASE_URL: z.url().default('https://export.arxiv.org').describe('arXiv (keyless)'),
  },
  onByDefault: () => true,
  rate: fixedRate(0.34),
  make: (s, c) => arxivProvider({ baseUrl: s.ARXIV_BASE_URL, timeoutMs: c.timeoutMs }),
});
