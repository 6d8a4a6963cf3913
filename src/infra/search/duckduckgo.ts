// DuckDuckGo's HTML results page (`POST /html/`, the form its no-JavaScript page submits): the
// keyless web search of the defaults. It is a page for people, not an API, so what it gives is read
// the way the page is built:
// - each organic result is a `.result` block with its link in `a.result__a` and its text in
//   `.result__snippet`; ads are `.result--ad` blocks whose links go through `duckduckgo.com/y.js`;
// - links go through DuckDuckGo's redirect (`//duckduckgo.com/l/?uddg=<the page>&rut=…`), which is
//   unwrapped to the page itself;
// - titles and snippets carry `<b>` around the query's words and HTML entities;
// - a result may end its address line with the page's date (`2024-03-05T00:00:00.0000000`);
// - about ten results a page whatever was asked, and nothing to filter by an exact date range:
//   only the last day, week, month or year (`df=d|w|m|y`);
// - too many requests in a short time are answered `202` with a bot check instead of results
//   (kept as a rate limit: transient, waited out and asked again).
import { parseHTML } from 'linkedom';
import { z } from 'zod';
import { isoDate, providerFetch, ProviderHttpError, stripTags } from './http';
import { defineProvider } from './provider';
import { searxTimeRange } from './searxng';
import type { SearchHit, SearchProvider } from './types';

/** The page's bot check, whatever status it came with. */
const BOT_CHECK = /anomaly-modal|id="challenge-form"|anomaly\.js/;

/** The page a result's link leads to: DuckDuckGo's redirect unwrapped; undefined for an ad or a
 *  link that is not to a web page. */
export function resultUrl(href: string | null | undefined): string | undefined {
  if (!href) return undefined;
  let u: URL;
  try {
    u = new URL(href, 'https://duckduckgo.com/');
  } catch {
    return undefined;
  }
  if (/(^|\.)duckduckgo\.com$/.test(u.hostname)) {
    if (u.pathname !== '/l/') return undefined; // y.js (ads) and the site's own pages
    const target = u.searchParams.get('uddg');
    return target ? resultUrl(target) : undefined;
  }
  return /^https?:$/.test(u.protocol) ? u.toString() : undefined;
}

/** The organic results of one results page, in its order. */
export function parseResultsPage(html: string): { title: string; url: string; content: string; published?: string }[] {
  const { document } = parseHTML(html);
  const out: { title: string; url: string; content: string; published?: string }[] = [];
  for (const block of document.querySelectorAll('.result')) {
    if (block.classList.contains('result--ad')) continue;
    const link = block.querySelector('a.result__a');
    const url = resultUrl(link?.getAttribute('href'));
    if (!link || !url) continue;
    const extras = block.querySelector('.result__extras__url')?.textContent ?? '';
    const published = isoDate(/\b\d{4}-\d{2}-\d{2}T[\d:.]+/.exec(extras)?.[0]);
    out.push({
      title: stripTags(link.innerHTML) || url,
      url,
      content: stripTags(block.querySelector('.result__snippet')?.innerHTML ?? ''),
      ...(published ? { published } : {}),
    });
  }
  return out;
}

export function duckduckgoProvider(opts: { baseUrl: string; region: string; timeoutMs: number; userAgent: string }): SearchProvider {
  return {
    name: 'duckduckgo',
    async search(query, { maxResults, signal, timeRange }) {
      const form = new URLSearchParams({ q: query, b: '', kl: opts.region });
      const period = searxTimeRange(timeRange, new Date());
      if (period) form.set('df', period[0]!);
      const res = await providerFetch(
        new URL('/html/', opts.baseUrl),
        {
          method: 'POST',
          body: form.toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', 'user-agent': opts.userAgent },
          timeoutMs: opts.timeoutMs,
          signal,
        },
        'DuckDuckGo',
      );
      const html = await res.text();
      if (res.status === 202 || BOT_CHECK.test(html))
        throw new ProviderHttpError(`DuckDuckGo answered ${res.status} with its bot check instead of results (too many requests)`, 429);
      return parseResultsPage(html)
        .slice(0, maxResults)
        .map<SearchHit>((r, i) => ({ ...r, score: 1 / (i + 1), source: 'duckduckgo' }));
    },
  };
}

export const duckduckgo = defineProvider({
  name: 'duckduckgo',
  topics: ['general', 'news'],
  settings: {
    DUCKDUCKGO_BASE_URL: z.url().default('https://html.duckduckgo.com').describe("DuckDuckGo's no-JavaScript results page (keyless)"),
    DUCKDUCKGO_REGION: z
      .string()
      .regex(/^[a-z]{2}-[a-z]{2}$/, 'a DuckDuckGo region such as us-en, de-de or wt-wt (no region)')
      .default('wt-wt')
      .describe('the region results are ranked for (`wt-wt`: none)'),
  },
  onByDefault: () => true,
  standsIn: true,
  // A page for people: one request a second from a worker, or the bot check answers instead.
  rate: { of: () => 1, note: 'more and it answers with a bot check' },
  make: (s, c) =>
    duckduckgoProvider({ baseUrl: s.DUCKDUCKGO_BASE_URL, region: s.DUCKDUCKGO_REGION, timeoutMs: c.timeoutMs, userAgent: c.userAgent }),
});
