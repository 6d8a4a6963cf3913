/** One search hit, whatever the provider. */
export interface SearchHit {
  title: string;
  url: string;
  content: string;
  score: number;
  source: string;
}

export interface SearchProvider {
  name: string;
  search(query: string, opts: { maxResults: number; signal?: AbortSignal }): Promise<SearchHit[]>;
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
