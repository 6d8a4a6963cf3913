// Search providers behind one interface. Each parses its API's own response shape into
// { title, url, content, score, source }. Base URLs are configurable so a mirror, a proxy or a
// test server can stand in.
import type { SearchHit, SearchProvider } from './types';
import { rateLimited } from './rate-limit';
import { searxngProvider } from './searxng';
import { getJson, isoDate, ProviderHttpError, providerFetch, stripTags } from './http';
import { pubmedProvider } from './pubmed';
import { semanticScholarProvider } from './semantic-scholar';
import { exaProvider } from './exa';
import { serperProvider } from './serper';

export { ProviderHttpError };
// The rules-only router, kept here for its callers; src/activities/search/router.ts has the rest.
export { classifyQuery, routeQuery, type Topic } from './router';

/** The hit with its publication date, when the API gave one. */
function withDate(hit: SearchHit, raw: string | null | undefined): SearchHit {
  const published = isoDate(raw);
  return published ? { ...hit, published } : hit;
}

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

export interface ProviderConfig {
  rateLimits?: Record<string, number>;
  providers: string[];
  searxngUrl?: string | undefined;
  tavily?: { apiKey?: string | undefined; baseUrl: string };
  brave?: { apiKey?: string | undefined; baseUrl: string };
  exa?: { apiKey?: string | undefined; baseUrl: string };
  serper?: { apiKey?: string | undefined; baseUrl: string };
  pubmed?: { apiKey?: string | undefined; baseUrl: string };
  semanticScholar?: { apiKey?: string | undefined; baseUrl: string };
  wikipediaUrl: string;
  openAlexUrl: string;
  openAlexMailto?: string | undefined;
  arxivUrl: string;
  timeoutMs: number;
  userAgent: string;
}

/** A provider named in SEARCH_PROVIDERS without the key it needs. */
function needKey(name: string, variable: string): never {
  throw new Error(`search provider ${name} needs ${variable}`);
}

/** How each provider is made from the configuration; a missing key or URL is an error. */
const MAKERS: Record<string, (c: ProviderConfig) => SearchProvider> = {
  searxng: (c) => searxngProvider(c.searxngUrl ?? needKey('searxng', 'SEARXNG_URL'), c.timeoutMs),
  tavily: (c) =>
    tavilyProvider({ apiKey: c.tavily?.apiKey ?? needKey('tavily', 'TAVILY_API_KEY'), baseUrl: c.tavily!.baseUrl, timeoutMs: c.timeoutMs }),
  brave: (c) =>
    braveProvider({ apiKey: c.brave?.apiKey ?? needKey('brave', 'BRAVE_API_KEY'), baseUrl: c.brave!.baseUrl, timeoutMs: c.timeoutMs }),
  exa: (c) => exaProvider({ apiKey: c.exa?.apiKey ?? needKey('exa', 'EXA_API_KEY'), baseUrl: c.exa!.baseUrl, timeoutMs: c.timeoutMs }),
  serper: (c) =>
    serperProvider({ apiKey: c.serper?.apiKey ?? needKey('serper', 'SERPER_API_KEY'), baseUrl: c.serper!.baseUrl, timeoutMs: c.timeoutMs }),
  wikipedia: (c) => wikipediaProvider({ baseUrl: c.wikipediaUrl, timeoutMs: c.timeoutMs, userAgent: c.userAgent }),
  openalex: (c) => openAlexProvider({ baseUrl: c.openAlexUrl, timeoutMs: c.timeoutMs, mailto: c.openAlexMailto }),
  arxiv: (c) => arxivProvider({ baseUrl: c.arxivUrl, timeoutMs: c.timeoutMs }),
  pubmed: (c) =>
    pubmedProvider({ baseUrl: c.pubmed?.baseUrl ?? 'https://eutils.ncbi.nlm.nih.gov', apiKey: c.pubmed?.apiKey, timeoutMs: c.timeoutMs }),
  semanticscholar: (c) =>
    semanticScholarProvider({
      baseUrl: c.semanticScholar?.baseUrl ?? 'https://api.semanticscholar.org',
      apiKey: c.semanticScholar?.apiKey,
      timeoutMs: c.timeoutMs,
    }),
};

/** Every provider SEARCH_PROVIDERS may name. */
export const KNOWN_PROVIDERS = Object.keys(MAKERS);

/** Builds the enabled providers; a provider named but missing its key or URL is an error. */
export function buildProviders(c: ProviderConfig): Map<string, SearchProvider> {
  const out = new Map<string, SearchProvider>();
  for (const name of c.providers) {
    const make = MAKERS[name];
    if (!make) throw new Error(`unknown search provider "${name}" (known: ${KNOWN_PROVIDERS.join(', ')})`);
    const provider = make(c);
    const rate = c.rateLimits?.[name];
    out.set(name, rate ? rateLimited(provider, rate) : provider);
  }
  return out;
}
