// A double of DuckDuckGo's no-JavaScript results page (`/html/`, GET or the form's POST), built the
// way the real page is: an ad block first (its link through `duckduckgo.com/y.js`), organic results
// whose links go through the `//duckduckgo.com/l/?uddg=…&rut=…` redirect, the query's words in
// `<b>`, HTML entities in titles and snippets, a date at the end of some address lines, ten results
// at most whatever was asked, "No results." when there are none, and — when a test asks for it —
// the bot check it answers with a 202 instead of results. Every request is recorded.
import { listen, readBody, type RunningServer } from './http';

export interface DdgResult {
  url: string;
  title: string;
  content: string;
  /** Shown after the address as the real page does (`2024-03-05T00:00:00.0000000`). */
  date?: string;
}

export interface DdgRequest {
  method: string;
  form: Record<string, string>;
  userAgent: string | undefined;
}

const escape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');

/** The query's words in bold, as the page marks them. */
function bold(text: string, query: string): string {
  const words = query
    .split(/\s+/)
    .filter((w) => w.length > 2)
    .map((w) => w.replace(/[^\p{L}\p{N}]/gu, ''));
  let out = escape(text);
  for (const w of words.filter(Boolean)) out = out.replace(new RegExp(`\\b(${w})\\b`, 'gi'), '<b>$1</b>');
  return out;
}

const redirect = (url: string) => `//duckduckgo.com/l/?uddg=${encodeURIComponent(url)}&amp;rut=${'9f'.repeat(16)}`;

function resultBlock(r: DdgResult, query: string): string {
  const shown = r.url.replace(/^https?:\/\//, '').replace(/\/$/, '');
  return `
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="${redirect(r.url)}">${bold(r.title, query)}</a>
      </h2>
      <div class="result__extras">
        <div class="result__extras__url">
          <span class="result__icon"><a rel="nofollow" href="${redirect(r.url)}"><img class="result__icon__img" width="16" height="16" alt="" src="//external-content.duckduckgo.com/ip3/${escape(new URL(r.url).hostname)}.ico" name="i15" /></a></span>
          <a class="result__url" href="${redirect(r.url)}">${escape(shown)}</a>
          ${r.date ? `<span>&nbsp; &nbsp; ${r.date}</span>` : ''}
        </div>
      </div>
      <a class="result__snippet" href="${redirect(r.url)}">${bold(r.content, query)}</a>
      <div class="clear"></div>
    </div>
  </div>`;
}

const AD = `
  <div class="result results_links results_links_deep result--ad  result--ad--small">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;ad_provider=bingv7aa&amp;ad_type=txad&amp;u3=x">Best Prices Today - Shop Now</a>
      </h2>
      <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;ad_provider=bingv7aa">Free shipping on every order. Ad</a>
      <div class="clear"></div>
    </div>
  </div>`;

function resultsPage(query: string, results: DdgResult[], region: string): string {
  const body = results.length
    ? results
        .slice(0, 10)
        .map((r) => resultBlock(r, query))
        .join('')
    : `<div class="result results_links results_links_deep result--no-result"><div class="no-results">No results.</div></div>`;
  return `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
  <meta http-equiv="content-type" content="text/html; charset=UTF-8" />
  <meta name="referrer" content="origin" />
  <title>${escape(query)} at DuckDuckGo</title>
  <link rel="stylesheet" href="/dist/h.css" type="text/css" />
</head>
<body class="body--html">
  <div class="header__form"><form id="search_form" name="x" action="/html/" method="post"><input type="text" name="q" class="search__input" value="${escape(query)}" /><input type="hidden" name="kl" value="${escape(region)}" /></form></div>
  <div class="serp__results">
  <div id="links" class="results">
  ${results.length ? AD : ''}
  ${body}
  <div class="nav-link"><form action="/html/" method="post"><input type="submit" class="btn btn--alt" value="Next" /><input type="hidden" name="q" value="${escape(query)}" /><input type="hidden" name="s" value="10" /><input type="hidden" name="vqd" value="4-1234567890" /><input type="hidden" name="kl" value="${escape(region)}" /></form></div>
  </div>
  </div>
</body>
</html>`;
}

const BOT_CHECK = `<!DOCTYPE html><html><head><title>DuckDuckGo</title></head><body>
<div class="anomaly-modal__mask"><div class="anomaly-modal__modal" data-testid="anomaly-modal">
<div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
<div class="anomaly-modal__description">Please complete the following challenge to confirm this search was made by a human.</div>
<form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=botnet" method="POST"></form>
</div></div></body></html>`;

export class FakeDuckDuckGo {
  readonly requests: DdgRequest[] = [];
  private readonly botChecks: number[] = [];
  private server: RunningServer | undefined;

  /** `results`: what a query finds (by default nothing). */
  constructor(private readonly results: (query: string) => DdgResult[] = () => []) {}

  get url(): string {
    if (!this.server) throw new Error('FakeDuckDuckGo not started');
    return this.server.url;
  }

  /** The next request gets the bot check instead of results (with a 202, as seen; a 200 also tried). */
  botCheckNext(status = 202): this {
    this.botChecks.push(status);
    return this;
  }

  async start(): Promise<this> {
    this.server = await listen(async (req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const body = await readBody(req);
      const form = Object.fromEntries(req.method === 'POST' ? new URLSearchParams(body) : u.searchParams);
      this.requests.push({ method: req.method ?? 'GET', form, userAgent: req.headers['user-agent'] });
      const send = (status: number, html: string) => {
        res.writeHead(status, { 'content-type': 'text/html; charset=UTF-8', 'content-length': Buffer.byteLength(html) });
        res.end(html);
      };
      if (u.pathname !== '/html/' && u.pathname !== '/html') return send(404, '<html><body>Not Found</body></html>');
      const check = this.botChecks.shift();
      if (check) return send(check, BOT_CHECK);
      // An empty query shows the home page of the HTML version: no results block at all.
      if (!form.q?.trim()) return send(200, '<html><body class="body--html"><form action="/html/" method="post"></form></body></html>');
      send(200, resultsPage(form.q, this.results(form.q), form.kl ?? 'wt-wt'));
    });
    return this;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}
