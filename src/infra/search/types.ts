/** What a query is about; each topic has its providers (src/activities/search/router.ts). */
export const TOPICS = ['general', 'news', 'academic', 'biomedical', 'encyclopedic'] as const;
export type Topic = (typeof TOPICS)[number];

/** One search hit, whatever the provider. */
export interface SearchHit {
  title: string;
  url: string;
  content: string;
  score: number;
  source: string;
  /** Publication date (`YYYY-MM-DD` or a full ISO time) when the provider knows it. */
  published?: string;
}

/** What a provider is asked with a query. */
export interface SearchOptions {
  maxResults: number;
  signal?: AbortSignal;
  /** Only results published in this period, as absolute dates (`YYYY-MM-DD`, inclusive); a
   *  provider that can filter by date passes it on, the activity enforces it on known dates. */
  timeRange?: { from?: string; to?: string };
}

export interface SearchProvider {
  name: string;
  search(query: string, opts: SearchOptions): Promise<SearchHit[]>;
}

/** Lower-cased scheme and host, no fragment, no trailing slash, tracking parameters dropped. */
export function normalizeUrl(raw: string): string {
  const u = new URL(raw);
  u.hash = '';
  u.hostname = u.hostname.toLowerCase();
  for (const k of [...u.searchParams.keys()]) if (/^(utm_|fbclid$|gclid$)/.test(k)) u.searchParams.delete(k);
  let s = u.toString();
  if (s.endsWith('/') && u.pathname !== '/') s = s.slice(0, -1);
  return s;
}
