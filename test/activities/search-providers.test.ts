// Each provider parsed from its API's real response shape, served from recorded fixtures by a
// local server that also checks the request each provider makes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeHits } from '../../src/activities/search/sources';
import { buildProviders } from '../../src/activities/search/providers';
import { describeSearch } from '../../src/config/search';
import { classifyQuery, routeQuery } from '../../src/activities/search/router';
import { arxivProvider } from '../../src/infra/search/arxiv';
import { braveProvider } from '../../src/infra/search/brave';
import { invertedIndexToText, openAlexProvider } from '../../src/infra/search/openalex';
import { tavilyProvider } from '../../src/infra/search/tavily';
import { wikipediaProvider } from '../../src/infra/search/wikipedia';
import { searxngProvider, searxTimeRange } from '../../src/infra/search/searxng';
import { FakeSearxng } from '../support/search-server';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/shared/errors';
import { listen, readBody, type RunningServer } from '../support/http';
import { ROOT } from '../support/spawn';

const fixture = (name: string) => readFileSync(path.join(ROOT, 'test', 'fixtures', 'search', name), 'utf8');
const seen: { path: string; query: Record<string, string>; headers: Record<string, string | string[] | undefined>; body: string }[] = [];
let server: RunningServer;

beforeAll(async () => {
  server = await listen(async (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    seen.push({ path: u.pathname, query: Object.fromEntries(u.searchParams), headers: req.headers, body: await readBody(req) });
    const routes: Record<string, [string, string]> = {
      '/search': req.method === 'POST' ? ['tavily.json', 'application/json'] : ['', ''],
      '/res/v1/web/search': ['brave.json', 'application/json'],
      '/w/api.php': ['wikipedia.json', 'application/json'],
      '/works': ['openalex.json', 'application/json'],
      '/api/query': ['arxiv.xml', 'application/atom+xml'],
    };
    const [file, type] = routes[u.pathname] ?? ['', ''];
    if (!file) {
      res.writeHead(u.pathname === '/search' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          results: [
            { url: 'https://example.org/a', title: 'A', content: 'searx', score: 2 },
            { url: 'ftp://bad', title: 'x' },
          ],
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': type });
    res.end(fixture(file));
  });
});
afterAll(() => server.close());

const opts = { maxResults: 5 };
const last = () => seen.at(-1)!;

describe('search providers', () => {
  it('Tavily', async () => {
    const hits = await tavilyProvider({ apiKey: 'tvly-secret', baseUrl: server.url, timeoutMs: 2_000 }).search('solar cost decline', opts);
    expect(hits).toEqual([
      {
        title: 'Solar PV costs fell 90% in a decade - IRENA',
        url: 'https://www.irena.org/news/solar-costs',
        content: 'The global weighted-average LCOE of utility-scale solar PV fell by 89% between 2010 and 2022.',
        score: 0.92,
        source: 'tavily',
      },
      {
        title: 'Why did renewables become so cheap so fast? - Our World in Data',
        url: 'https://ourworldindata.org/cheap-renewables-growth#section',
        content: 'Electricity from solar became 89% cheaper in the 2010s.',
        score: 0.81,
        source: 'tavily',
      },
    ]);
    expect(last().headers.authorization).toBe('Bearer tvly-secret');
    expect(JSON.parse(last().body)).toMatchObject({ query: 'solar cost decline', max_results: 5 });
  });

  it('Brave', async () => {
    const hits = await braveProvider({ apiKey: 'brave-secret', baseUrl: server.url, timeoutMs: 2_000 }).search('solar cost decline', opts);
    expect(hits[0]).toEqual({
      title: 'Solar PV costs fell 90% in a decade',
      url: 'https://www.irena.org/news/solar-costs?utm_source=brave',
      content: 'The global weighted-average LCOE of utility-scale solar PV fell by 89%.',
      score: 1,
      source: 'brave',
      published: '2023-08-29',
    });
    expect(hits).toHaveLength(2);
    expect(last().headers['x-subscription-token']).toBe('brave-secret');
    expect(last().query).toMatchObject({ q: 'solar cost decline', count: '5' });
  });

  it('Wikipedia', async () => {
    const hits = await wikipediaProvider({ baseUrl: server.url, timeoutMs: 2_000, userAgent: 'ua' }).search('solar cost', opts);
    expect(hits[0]).toEqual({
      title: 'Cost of electricity by source',
      url: `${server.url}/wiki/Cost_of_electricity_by_source`,
      content: 'Levelized cost of electricity (LCOE) of solar fell & kept falling',
      score: 1,
      source: 'wikipedia',
    });
    expect(last().query).toMatchObject({ action: 'query', list: 'search', srsearch: 'solar cost', format: 'json', srlimit: '5' });
  });

  it('OpenAlex, with the abstract rebuilt from its inverted index', async () => {
    const hits = await openAlexProvider({ baseUrl: server.url, timeoutMs: 2_000, mailto: 'ops@example.org' }).search(
      'solar learning rate',
      opts,
    );
    expect(hits[0]).toEqual({
      title: 'Drivers of the decline in solar photovoltaic costs',
      url: 'https://doi.org/10.1038/s41560-023-01234-5',
      content: '(2023, Nature Energy) Module costs fell sharply; balance-of-system balance-of-system costs too.',
      score: 1,
      source: 'openalex',
      published: '2023-05-11',
    });
    expect(hits[1]).toMatchObject({ title: 'Learning curves for solar PV', url: 'https://openalex.org/W2000000001', content: '(2018)' });
    expect(last().query).toMatchObject({ search: 'solar learning rate', 'per-page': '5', mailto: 'ops@example.org' });
  });

  it('arXiv (Atom XML)', async () => {
    const hits = await arxivProvider({ baseUrl: server.url, timeoutMs: 2_000 }).search('solar cost', opts);
    expect(hits).toEqual([
      {
        title: 'Experience Curves of Photovoltaic Modules',
        url: 'http://arxiv.org/abs/2301.01234v2',
        content: 'We estimate learning rates for PV modules and find that costs fall by about 20% per doubling of cumulative capacity.',
        score: 1,
        source: 'arxiv',
        published: '2023-01-04',
      },
      {
        title: 'Storage and Solar Costs',
        url: 'http://arxiv.org/abs/2205.05678v1',
        content: 'Battery storage costs fell alongside solar.',
        score: 0.5,
        source: 'arxiv',
      },
    ]);
    expect(last().query).toMatchObject({ search_query: 'all:solar cost', max_results: '5' });
  });

  it('SearXNG, dropping non-http results', async () => {
    const hits = await searxngProvider(server.url).search('q', opts);
    expect(hits).toEqual([{ title: 'A', url: 'https://example.org/a', content: 'searx', score: 2, source: 'searxng' }]);
    expect(last().query).toMatchObject({ q: 'q', format: 'json' });
  });

  it("SearXNG: a recent range as its time_range, results' dates kept, and its 403 without the JSON format", async () => {
    const searx = await new FakeSearxng({}, () => [
      { url: 'https://example.org/new', title: 'New', content: 'c', publishedDate: '2024-03-01T08:00:00' },
      { url: 'https://example.org/old', title: 'Old', content: 'c', publishedDate: null },
    ]).start();
    try {
      const from = new Date(Date.now() - 20 * 86_400_000).toISOString().slice(0, 10);
      const hits = await searxngProvider(searx.url).search('q', { ...opts, timeRange: { from } });
      expect(hits.map((h) => h.published)).toEqual(['2024-03-01', undefined]);
      await searxngProvider(server.url).search('q', { ...opts, timeRange: { from } });
      expect(last().query).toMatchObject({ q: 'q', format: 'json', time_range: 'month' });
      const now = new Date('2024-03-20T00:00:00Z');
      expect(searxTimeRange({ from: '2024-03-19' }, now)).toBe('day');
      expect(searxTimeRange({ from: '2024-03-01' }, now)).toBe('month');
      expect(searxTimeRange({ from: '2020-01-01' }, now)).toBeUndefined();
      expect(searxTimeRange({ from: '2024-03-01', to: '2024-03-10' }, now)).toBeUndefined();
    } finally {
      await searx.close();
    }
    const noJson = await listen((_req, res) => void res.writeHead(403, { 'content-type': 'text/html' }).end('<h1>Forbidden</h1>'));
    const err = await searxngProvider(noJson.url)
      .search('q', opts)
      .catch((e: unknown) => e);
    await noJson.close();
    expect(err).toMatchObject({ status: 403, message: 'SearXNG answered 403' });
  });

  it('passes a time range to the providers that filter by date', async () => {
    const range = { ...opts, timeRange: { from: '2023-01-01', to: '2023-12-31' } };
    await tavilyProvider({ apiKey: 'k', baseUrl: server.url, timeoutMs: 2_000 }).search('q', range);
    expect(JSON.parse(last().body)).toMatchObject({ start_date: '2023-01-01', end_date: '2023-12-31' });
    await braveProvider({ apiKey: 'k', baseUrl: server.url, timeoutMs: 2_000 }).search('q', range);
    expect(last().query.freshness).toBe('2023-01-01to2023-12-31');
    await openAlexProvider({ baseUrl: server.url, timeoutMs: 2_000 }).search('q', range);
    expect(last().query.filter).toBe('from_publication_date:2023-01-01,to_publication_date:2023-12-31');
    await arxivProvider({ baseUrl: server.url, timeoutMs: 2_000 }).search('q', { ...opts, timeRange: { from: '2023-01-01' } });
    expect(last().query.search_query).toBe('all:q AND submittedDate:[202301010000 TO 299912312359]');
    await openAlexProvider({ baseUrl: server.url, timeoutMs: 2_000 }).search('q', opts);
    expect(last().query.filter).toBeUndefined();
  });

  it('reports an HTTP error with its status', async () => {
    const failing = await listen((_req, res) => void res.writeHead(503).end());
    const err = await openAlexProvider({ baseUrl: failing.url, timeoutMs: 2_000 })
      .search('x', opts)
      .catch((e: unknown) => e);
    await failing.close();
    expect(err).toMatchObject({ message: 'OpenAlex answered 503', status: 503 });
  });
});

describe('merging, routing and configuration', () => {
  it('de-duplicates by normalised URL, keeping the best score and the longest text', () => {
    const merged = mergeHits(
      [
        { title: 'IRENA', url: 'https://www.irena.org/news/solar-costs', content: 'short', score: 0.5, source: 'tavily' },
        {
          title: 'IRENA',
          url: 'https://WWW.irena.org/news/solar-costs/?utm_source=brave#top',
          content: 'a longer snippet',
          score: 0.9,
          source: 'brave',
        },
        { title: 'Other', url: 'https://example.org/', content: 'x', score: 0.7, source: 'brave' },
        { title: 'Bad', url: 'not a url', content: '', score: 1, source: 'brave' },
      ],
      5,
    );
    expect(merged.map((m) => [m.url, m.content])).toEqual([
      ['https://www.irena.org/news/solar-costs', 'a longer snippet'],
      ['https://example.org/', 'x'],
    ]);
  });

  it('routes academic queries to OpenAlex/arXiv and encyclopedic ones to Wikipedia', () => {
    const all = ['searxng', 'wikipedia', 'openalex', 'arxiv'];
    expect(classifyQuery('peer-reviewed study of PV learning rates')).toBe('academic');
    expect(routeQuery('peer-reviewed study of PV learning rates', all)).toEqual(['openalex', 'arxiv']);
    expect(routeQuery('what is a levelized cost of electricity', all)).toEqual(['wikipedia', 'searxng']);
    expect(routeQuery('solar prices 2024', all)).toEqual(['searxng']);
    expect(routeQuery('solar prices 2024', ['wikipedia', 'openalex', 'arxiv'])).toEqual(['wikipedia', 'openalex']);
  });

  it('uses the keyless providers by default and names what a chosen provider needs', () => {
    const keyless = ['wikipedia', 'openalex', 'arxiv', 'pubmed', 'semanticscholar'];
    // DuckDuckGo stands in for the web until another web provider is on.
    expect(loadConfig({}).search.providers).toEqual(['duckduckgo', ...keyless]);
    expect(loadConfig({ SEARXNG_URL: 'http://searx.local' }).search.providers).toEqual(['searxng', ...keyless]);
    // A provider's key alone turns it on; SEARCH_PROVIDERS still decides when it is set.
    expect(loadConfig({ TAVILY_API_KEY: 'tvly-x', SERPER_API_KEY: 's-x' }).search.providers).toEqual(['tavily', 'serper', ...keyless]);
    expect(loadConfig({ BRAVE_API_KEY: 'b-x', EXA_API_KEY: 'e-x' }).search.providers).toEqual(['brave', 'exa', ...keyless]);
    expect(loadConfig({ TAVILY_API_KEY: 'tvly-x', SEARCH_PROVIDERS: 'wikipedia' }).search.providers).toEqual(['wikipedia']);
    expect(loadConfig({ SEARCH_PROVIDERS: 'duckduckgo,serper', SERPER_API_KEY: 's-x' }).search.providers).toEqual(['duckduckgo', 'serper']);
    // The banner says which are on, and how to add the web (or a search API for it).
    expect(describeSearch(loadConfig({}).search.providers)).toBe(
      "duckduckgo, wikipedia, openalex, arxiv, pubmed, semanticscholar; the web from duckduckgo's results page, keyless and rate-limited: set SEARXNG_URL, TAVILY_API_KEY, BRAVE_API_KEY, EXA_API_KEY or SERPER_API_KEY for a search API",
    );
    expect(describeSearch(keyless)).toBe(
      `${keyless.join(', ')}; no general web search: set SEARXNG_URL, TAVILY_API_KEY, BRAVE_API_KEY, EXA_API_KEY or SERPER_API_KEY`,
    );
    expect(describeSearch(loadConfig({ TAVILY_API_KEY: 'tvly-x' }).search.providers)).toBe(
      'tavily, wikipedia, openalex, arxiv, pubmed, semanticscholar',
    );
    let err: unknown;
    try {
      loadConfig({ SEARCH_PROVIDERS: 'tavily,bing' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues).toEqual([
      { variable: 'TAVILY_API_KEY', reason: 'SEARCH_PROVIDERS includes tavily, which needs a Tavily key' },
      {
        variable: 'SEARCH_PROVIDERS',
        reason:
          'unknown provider "bing" (known: searxng, tavily, brave, exa, serper, duckduckgo, wikipedia, openalex, arxiv, pubmed, semanticscholar)',
      },
    ]);
    expect([...buildProviders({ ...loadConfig({}).search, userAgent: 'ua' }).keys()]).toEqual(['duckduckgo', ...keyless]);
    expect(invertedIndexToText(null)).toBe('');
  });
});
