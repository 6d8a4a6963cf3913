// Semantic Scholar's Academic Graph: relevance search over papers of every field
// (`GET /graph/v1/paper/search`). Keyless requests share one pool with everyone else and are often
// answered 429, with or without a body and without Retry-After; a key (`x-api-key`) gets a rate
// of its own. A paper links to arXiv or its DOI when it has one (pages a crawl can read, and the
// URLs OpenAlex and arXiv give the same paper), else to its Semantic Scholar page.
import { z } from 'zod';
import { optionalString } from '../../config/setting-kit';
import { getJson, isoDate } from './http';
import { defineProvider, fixedRate } from './provider';
import type { SearchHit, SearchProvider } from './types';

/** The fields asked for: `/paper/search` refuses (400) a field it does not know. */
const FIELDS = 'title,url,abstract,venue,year,publicationDate,externalIds';

interface Paper {
  paperId: string;
  title?: string | null;
  url?: string | null;
  abstract?: string | null;
  venue?: string | null;
  year?: number | null;
  publicationDate?: string | null;
  externalIds?: { DOI?: string; ArXiv?: string; PubMed?: string } | null;
}

export interface SemanticScholarOptions {
  baseUrl: string;
  timeoutMs: number;
  apiKey?: string | undefined;
}

export function paperUrl(p: Paper): string {
  const ids = p.externalIds ?? {};
  if (ids.ArXiv) return `https://arxiv.org/abs/${ids.ArXiv}`;
  // DOIs are case-insensitive; OpenAlex writes them in lower case.
  if (ids.DOI) return `https://doi.org/${ids.DOI.toLowerCase()}`;
  return p.url ?? `https://www.semanticscholar.org/paper/${p.paperId}`;
}

export function semanticScholarProvider(opts: SemanticScholarOptions): SearchProvider {
  return {
    name: 'semanticscholar',
    async search(query, { maxResults, signal, timeRange }) {
      const u = new URL('/graph/v1/paper/search', opts.baseUrl);
      u.searchParams.set('query', query);
      u.searchParams.set('limit', String(maxResults));
      u.searchParams.set('fields', FIELDS);
      // `from:to`, either end may be left open; a paper known only by its year counts by its year.
      if (timeRange?.from || timeRange?.to) u.searchParams.set('publicationDateOrYear', `${timeRange.from ?? ''}:${timeRange.to ?? ''}`);
      const headers: Record<string, string> = { accept: 'application/json' };
      if (opts.apiKey) headers['x-api-key'] = opts.apiKey;
      const body = (await getJson(u, { headers, timeoutMs: opts.timeoutMs, signal }, 'Semantic Scholar')) as { data?: Paper[] };
      return (body.data ?? [])
        .filter((p) => p.title)
        .slice(0, maxResults)
        .map((p, i) => {
          const meta = [p.year, p.venue].filter(Boolean).join(', ');
          const published = isoDate(p.publicationDate);
          return {
            title: p.title!,
            url: paperUrl(p),
            content: [meta && `(${meta})`, p.abstract ?? ''].filter(Boolean).join(' '),
            score: 1 / (i + 1),
            source: 'semanticscholar',
            ...(published ? { published } : {}),
          } satisfies SearchHit;
        });
    },
  };
}

export const semanticScholar = defineProvider({
  name: 'semanticscholar',
  topics: ['academic', 'biomedical'],
  settings: {
    SEMANTIC_SCHOLAR_BASE_URL: z.url().default('https://api.semanticscholar.org').describe("Semantic Scholar's Graph API (keyless)"),
    SEMANTIC_SCHOLAR_API_KEY: optionalString.describe(
      'a Semantic Scholar API key (`x-api-key`): a rate of its own instead of the pool keyless requests share',
    ),
  },
  onByDefault: () => true,
  rate: fixedRate(1),
  make: (s, c) =>
    semanticScholarProvider({ baseUrl: s.SEMANTIC_SCHOLAR_BASE_URL, apiKey: s.SEMANTIC_SCHOLAR_API_KEY, timeoutMs: c.timeoutMs }),
});
