import { leanFetch } from '../../infra/http';
import type { SearchHit, SearchProvider } from './types';

interface SearxResponse {
  results?: { url?: string; title?: string; content?: string; score?: number; engine?: string }[];
}

export function searxngProvider(baseUrl: string, timeoutMs = 15_000): SearchProvider {
  return {
    name: 'searxng',
    async search(query, { maxResults, signal }) {
      const u = new URL('/search', baseUrl);
      u.searchParams.set('q', query);
      u.searchParams.set('format', 'json');
      const timeout = AbortSignal.timeout(timeoutMs);
      const res = await leanFetch(u, {
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        headers: { accept: 'application/json' },
      });
      if (!res.ok) throw Object.assign(new Error(`SearXNG answered ${res.status} for "${query}"`), { status: res.status });
      const body = (await res.json()) as SearxResponse;
      return (body.results ?? [])
        .filter((r) => typeof r.url === 'string' && /^https?:/.test(r.url))
        .slice(0, maxResults)
        .map<SearchHit>((r) => ({
          title: r.title ?? r.url!,
          url: r.url!,
          content: r.content ?? '',
          score: r.score ?? 0,
          source: 'searxng',
        }));
    },
  };
}
