// Search providers behind one interface. Each parses its API's own response shape into
// { title, url, content, score, source }. Base URLs are configurable so a mirror, a proxy or a
// test server can stand in.
import type { SearchHit, SearchProvider } from './types';
import { rateLimited } from './rate-limit';
import { searxngProvider } from './searxng';
import { leanFetch } from '../../infra/http';

export class ProviderHttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function getJson(
  url: URL | string,
  init: RequestInit & { timeoutMs: number; signal?: AbortSignal | undefined },
  provider: string,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(init.timeoutMs);
  const res = await leanFetch(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
  if (!res.ok) throw new ProviderHttpError(`${provider} answered ${res.status}`, res.status);
  return res.json();
}

const stripTags = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();

export function tavilyProvider(opts: { apiKey: string; baseUrl: string; timeoutMs: number }): SearchProvider {
  return {
    name: 'tavily',
    async search(query, { maxResults, signal }) {
      const body = (await getJson(
        new URL('/search', opts.baseUrl),
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${opts.apiKey}` },
          body: JSON.stringify({ query, max_results: maxResults, search_depth: 'basic' }),
          timeoutMs: opts.timeoutMs,
          signal,
        },
        'Tavily',
      )) as { results?: { title?: string; url?: string; content?: string; score?: number }[] };
      return (body.results ?? [])
        .filter((r) => r.url)
        .map((r) => ({ title: r.title ?? r.url!, url: r.url!, content: r.content ?? '', score: r.score ?? 0, source: 'tavily' }));
    },
  };
}

export function braveProvider(opts: { apiKey: string; baseUrl: string; timeoutMs: number }): SearchProvider {
  return {
    name: 'brave',
    async search(query, { maxResults, signal }) {
      const u = new URL('/res/v1/web/search', opts.baseUrl);
      u.searchParams.set('q', query);
      u.searchParams.set('count', String(maxResults));
      const body = (await getJson(
        u,
        { headers: { accept: 'application/json', 'x-subscription-token': opts.apiKey }, timeoutMs: opts.timeoutMs, signal },
        'Brave',
      )) as {
        web?: { results?: { title?: string; url?: string; description?: string }[] };
      };
      const results = body.web?.results ?? [];
      // Brave gives no score: rank order becomes one.
      return results
        .filter((r) => r.url)
        .map((r, i) => ({
          title: stripTags(r.title ?? r.url!),
          url: r.url!,
          content: stripTags(r.description ?? ''),
          score: 1 / (i + 1),
          source: 'brave',
        }));
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
    async search(query, { maxResults, signal }) {
      const u = new URL('/works', opts.baseUrl);
      u.searchParams.set('search', query);
      u.searchParams.set('per-page', String(maxResults));
      if (opts.mailto) u.searchParams.set('mailto', opts.mailto);
      const body = (await getJson(u, { headers: { accept: 'application/json' }, timeoutMs: opts.timeoutMs, signal }, 'OpenAlex')) as {
        results?: {
          id: string;
          doi?: string | null;
          title?: string | null;
          display_name?: string | null;
          publication_year?: number | null;
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
        return {
          title: r.display_name ?? r.title ?? r.id,
          url: r.doi ?? r.primary_location?.landing_page_url ?? r.id,
          content: [meta && `(${meta})`, invertedIndexToText(r.abstract_inverted_index)].filter(Boolean).join(' '),
          score: (r.relevance_score ?? 0) / top,
          source: 'openalex',
        } satisfies SearchHit;
      });
    },
  };
}

export function arxivProvider(opts: { baseUrl: string; timeoutMs: number }): SearchProvider {
  return {
    name: 'arxiv',
    async search(query, { maxResults, signal }) {
      const u = new URL('/api/query', opts.baseUrl);
      u.searchParams.set('search_query', `all:${query}`);
      u.searchParams.set('max_results', String(maxResults));
      const timeout = AbortSignal.timeout(opts.timeoutMs);
      const res = await leanFetch(u, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
      if (!res.ok) throw new ProviderHttpError(`arXiv answered ${res.status}`, res.status);
      const { JSDOM } = await import('jsdom'); // loaded with the first arXiv search
      const doc = new JSDOM(await res.text(), { contentType: 'text/xml' }).window.document;
      const text = (el: Element, tag: string) => el.getElementsByTagName(tag)[0]?.textContent?.replace(/\s+/g, ' ').trim() ?? '';
      return [...doc.getElementsByTagName('entry')].map((e, i) => {
        const alt = [...e.getElementsByTagName('link')].find((l) => l.getAttribute('rel') === 'alternate')?.getAttribute('href');
        return { title: text(e, 'title'), url: alt ?? text(e, 'id'), content: text(e, 'summary'), score: 1 / (i + 1), source: 'arxiv' };
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
  wikipediaUrl: string;
  openAlexUrl: string;
  openAlexMailto?: string | undefined;
  arxivUrl: string;
  timeoutMs: number;
  userAgent: string;
}

/** Builds the enabled providers; a provider named but missing its key or URL is an error. */
export function buildProviders(c: ProviderConfig): Map<string, SearchProvider> {
  const out = new Map<string, SearchProvider>();
  for (const name of c.providers) {
    switch (name) {
      case 'searxng':
        if (!c.searxngUrl) throw new Error('search provider searxng needs SEARXNG_URL');
        out.set(name, searxngProvider(c.searxngUrl, c.timeoutMs));
        break;
      case 'tavily':
        if (!c.tavily?.apiKey) throw new Error('search provider tavily needs TAVILY_API_KEY');
        out.set(name, tavilyProvider({ apiKey: c.tavily.apiKey, baseUrl: c.tavily.baseUrl, timeoutMs: c.timeoutMs }));
        break;
      case 'brave':
        if (!c.brave?.apiKey) throw new Error('search provider brave needs BRAVE_API_KEY');
        out.set(name, braveProvider({ apiKey: c.brave.apiKey, baseUrl: c.brave.baseUrl, timeoutMs: c.timeoutMs }));
        break;
      case 'wikipedia':
        out.set(name, wikipediaProvider({ baseUrl: c.wikipediaUrl, timeoutMs: c.timeoutMs, userAgent: c.userAgent }));
        break;
      case 'openalex':
        out.set(name, openAlexProvider({ baseUrl: c.openAlexUrl, timeoutMs: c.timeoutMs, mailto: c.openAlexMailto }));
        break;
      case 'arxiv':
        out.set(name, arxivProvider({ baseUrl: c.arxivUrl, timeoutMs: c.timeoutMs }));
        break;
      default:
        throw new Error(`unknown search provider "${name}" (known: searxng, tavily, brave, wikipedia, openalex, arxiv)`);
    }
    const rate = c.rateLimits?.[name];
    if (rate) out.set(name, rateLimited(out.get(name)!, rate));
  }
  return out;
}

export type Topic = 'academic' | 'encyclopedic' | 'general';

const ACADEMIC =
  /\b(paper|papers|study|studies|journal|peer[- ]reviewed|arxiv|doi|meta-analysis|preprint|citation|literature review|learning rate|empirical)\b/i;
const ENCYCLOPEDIC =
  /^(who (is|was)|what (is|are|was)|when (did|was)|where is|history of|definition of|define)\b|\b(biography|wikipedia)\b/i;

export function classifyQuery(query: string): Topic {
  if (ACADEMIC.test(query)) return 'academic';
  if (ENCYCLOPEDIC.test(query.trim())) return 'encyclopedic';
  return 'general';
}

const WEB = ['searxng', 'tavily', 'brave'];

/** Which enabled providers answer a query: academic → OpenAlex/arXiv, encyclopedic → Wikipedia. */
export function routeQuery(query: string, enabled: string[]): string[] {
  const has = (n: string) => enabled.includes(n);
  const web = WEB.filter(has);
  const topic = classifyQuery(query);
  let picked: string[];
  if (topic === 'academic') picked = ['openalex', 'arxiv'].filter(has);
  else if (topic === 'encyclopedic') picked = ['wikipedia', ...web.slice(0, 1)].filter(has);
  else picked = web.length ? web.slice(0, 1) : ['wikipedia', 'openalex'].filter(has);
  return picked.length ? picked : enabled.slice(0, 2);
}
