// PubMed, Semantic Scholar, Exa, Serper and DuckDuckGo's results page against doubles that answer in each API's real shapes
// (test/support/provider-apis.ts, test/support/duckduckgo.ts): the hits parsed from their answers with publication dates,
// the requests they make (keys, time ranges), and their error and rate-limit answers kept as a
// ProviderHttpError with the status (and Retry-After) the webSearch activity decides on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duckduckgoProvider, parseResultsPage, resultUrl } from '../../src/infra/search/duckduckgo';
import { exaProvider } from '../../src/infra/search/exa';
import { ProviderHttpError } from '../../src/infra/search/http';
import { buildProviders } from '../../src/activities/search/providers';
import { pubmedProvider } from '../../src/infra/search/pubmed';
import { semanticScholarProvider } from '../../src/infra/search/semantic-scholar';
import { googleDate, serperProvider, serperTbs } from '../../src/infra/search/serper';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/shared/errors';
import { FakeDuckDuckGo } from '../support/duckduckgo';
import { FakeProviderApi } from '../support/provider-apis';

const opts = { maxResults: 5 };
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as ProviderHttpError,
  );

const apis = {
  pubmed: new FakeProviderApi('pubmed'),
  semanticscholar: new FakeProviderApi('semanticscholar'),
  exa: new FakeProviderApi('exa'),
  serper: new FakeProviderApi('serper'),
};
beforeAll(async () => void (await Promise.all(Object.values(apis).map((a) => a.start()))));
afterAll(async () => void (await Promise.all(Object.values(apis).map((a) => a.close()))));

describe('PubMed (E-utilities)', () => {
  const pubmed = (apiKey?: string) => pubmedProvider({ baseUrl: apis.pubmed.url, timeoutMs: 2_000, apiKey });

  it('finds PMIDs with esearch, reads them with esummary, and skips a record esummary could not give', async () => {
    const hits = await pubmed('ncbi-key').search('statins primary prevention', opts);
    expect(hits).toEqual([
      {
        title: 'Statins for primary prevention in adults aged 70 years and older: a nationwide cohort study.',
        url: 'https://pubmed.ncbi.nlm.nih.gov/38127545/',
        content: '(European heart journal; 2024 Jan; Journal Article) Mortensen MB, Nordestgaard BG, Tybjærg-Hansen A et al.',
        score: 1,
        source: 'pubmed',
        published: '2024-01-22',
      },
      {
        title: 'Statin Use for the Primary Prevention of Cardiovascular Disease in Adults: Recommendation Statement.',
        url: 'https://pubmed.ncbi.nlm.nih.gov/37462312/',
        content: '(JAMA; 2023 Aug 1; Practice Guideline, Journal Article) Mangione CM',
        score: 0.5,
        source: 'pubmed',
        published: '2023-08-01',
      },
    ]);
    const [search, summary] = apis.pubmed.requests.slice(-2);
    expect(search).toMatchObject({ path: '/entrez/eutils/esearch.fcgi' });
    expect(search!.query).toMatchObject({
      db: 'pubmed',
      term: 'statins primary prevention',
      retmode: 'json',
      retmax: '5',
      api_key: 'ncbi-key',
    });
    expect(search!.query.datetype).toBeUndefined();
    expect(summary).toMatchObject({ path: '/entrez/eutils/esummary.fcgi' });
    expect(summary!.query).toMatchObject({ db: 'pubmed', id: '38127545,37462312,36250412', retmode: 'json' });
  });

  it('passes a time range as publication dates (both ends, as NCBI needs), and works without a key', async () => {
    await pubmed().search('statins', { ...opts, timeRange: { from: '2023-01-01' } });
    const search = apis.pubmed.requests.at(-2)!;
    expect(search.query).toMatchObject({ datetype: 'pdat', mindate: '2023/01/01', maxdate: '3000/12/31' });
    expect(search.query.api_key).toBeUndefined();
    await pubmed().search('statins', { ...opts, timeRange: { from: '2020-02-01', to: '2020-12-31' } });
    expect(apis.pubmed.requests.at(-2)!.query).toMatchObject({ mindate: '2020/02/01', maxdate: '2020/12/31' });
  });

  it('turns the ERROR of a 200 answer into a permanent refusal', async () => {
    const before = apis.pubmed.requests.length;
    const err = await failure(pubmed().search('  ', opts));
    expect(err).toBeInstanceOf(ProviderHttpError);
    expect(err).toMatchObject({ status: 400, message: 'PubMed refused the query: Empty term and query_key - nothing todo' });
    expect(apis.pubmed.requests.length).toBe(before + 1); // no esummary after a refused search
  });

  it("keeps NCBI's rate limit as a 429 with its Retry-After", async () => {
    apis.pubmed.failNext('rate-limit');
    const err = await failure(pubmed().search('statins', opts));
    expect(err).toMatchObject({ status: 429, retryAfterMs: 2_000, message: 'PubMed answered 429: API rate limit exceeded' });
    apis.pubmed.failNext('rate-limit-as-200');
    expect(await failure(pubmed().search('statins', opts))).toMatchObject({
      status: 429,
      message: 'PubMed esearch answered: API rate limit exceeded',
    });
  });
});

describe('Semantic Scholar (Graph API)', () => {
  const s2 = (apiKey?: string) => semanticScholarProvider({ baseUrl: apis.semanticscholar.url, timeoutMs: 2_000, apiKey });

  it('links a paper to arXiv or its DOI (lower case) before its Semantic Scholar page, with its date', async () => {
    const hits = await s2('semanticscholar-test-key').search('mRNA vaccine efficacy', opts);
    expect(hits.map((h) => [h.url, h.published, h.score])).toEqual([
      ['https://doi.org/10.1056/nejmoa2034577', '2020-12-10', 1],
      ['https://arxiv.org/abs/1706.03762', '2017-06-12', 0.5],
      ['https://www.semanticscholar.org/paper/f1e2d3c4b5a69788a7b6c5d4e3f2a1b0c9d8e7f6', undefined, 1 / 3],
    ]);
    expect(hits[0]).toMatchObject({
      title: 'Safety and Efficacy of the BNT162b2 mRNA Covid-19 Vaccine',
      content: expect.stringMatching(/^\(2020, New England Journal of Medicine\) Severe acute respiratory syndrome/),
      source: 'semanticscholar',
    });
    expect(hits[1]!.content).toBe('(2017, Neural Information Processing Systems)');
    expect(hits[2]).not.toHaveProperty('published');
    expect(apis.semanticscholar.last.headers['x-api-key']).toBe('semanticscholar-test-key');
    expect(apis.semanticscholar.last.query).toMatchObject({ query: 'mRNA vaccine efficacy', limit: '5' });
  });

  it('passes a time range as publicationDateOrYear, open ends left empty; keyless sends no key', async () => {
    await s2().search('x', { ...opts, timeRange: { from: '2020-01-01' } });
    expect(apis.semanticscholar.last.query.publicationDateOrYear).toBe('2020-01-01:');
    expect(apis.semanticscholar.last.headers['x-api-key']).toBeUndefined();
    await s2().search('x', { ...opts, timeRange: { from: '2019-03-05', to: '2020-06-06' } });
    expect(apis.semanticscholar.last.query.publicationDateOrYear).toBe('2019-03-05:2020-06-06');
  });

  it('keeps a 429 transient with or without its body (no Retry-After), and a refused key permanent', async () => {
    apis.semanticscholar.failNext('rate-limit').failNext('rate-limit-without-body');
    const withBody = await failure(s2().search('x', opts));
    expect(withBody).toMatchObject({ status: 429, retryAfterMs: undefined });
    expect(withBody!.message).toMatch(/^Semantic Scholar answered 429: Too Many Requests/);
    expect(await failure(s2().search('x', opts))).toMatchObject({ status: 429, message: 'Semantic Scholar answered 429' });
    expect(await failure(s2('wrong').search('x', opts))).toMatchObject({
      status: 403,
      message: 'Semantic Scholar answered 403: Forbidden',
    });
  });
});

describe('Exa', () => {
  const exa = (apiKey = 'exa-test-key') => exaProvider({ apiKey, baseUrl: apis.exa.url, timeoutMs: 2_000 });

  it('keeps the highlights (or the text) and the publication date of each result', async () => {
    const hits = await exa().search('solar capacity additions 2023', opts);
    expect(hits).toEqual([
      {
        title: 'Renewables 2023 – Analysis - IEA',
        url: 'https://www.iea.org/reports/renewables-2023',
        content:
          'Global annual renewable capacity additions increased by almost 50% to nearly 510 gigawatts (GW) in 2023. … Solar PV alone accounted for three-quarters of additions worldwide.',
        score: 1,
        source: 'exa',
        published: '2024-01-11',
      },
      {
        title: 'https://www.pv-magazine.com/2024/03/05/module-prices',
        url: 'https://www.pv-magazine.com/2024/03/05/module-prices',
        content: 'Module prices fell to record lows in early 2024.',
        score: 0.5,
        source: 'exa',
      },
    ]);
    expect(apis.exa.last.headers['x-api-key']).toBe('exa-test-key');
    const body = JSON.parse(apis.exa.last.body) as Record<string, unknown>;
    expect(body).toMatchObject({ query: 'solar capacity additions 2023', numResults: 5, contents: { highlights: true } });
    expect(body).not.toHaveProperty('startPublishedDate');
  });

  it('passes a time range as whole days of publication', async () => {
    await exa().search('x', { ...opts, timeRange: { from: '2024-01-01', to: '2024-03-31' } });
    expect(JSON.parse(apis.exa.last.body)).toMatchObject({
      startPublishedDate: '2024-01-01T00:00:00.000Z',
      endPublishedDate: '2024-03-31T23:59:59.999Z',
    });
  });

  it('answers a bad key 401, spent credits 402 (permanent) and its rate limit 429 (transient)', async () => {
    expect(await failure(exa('wrong').search('x', opts))).toMatchObject({ status: 401, message: 'Exa answered 401: Invalid API key' });
    apis.exa.failNext('no-credits').failNext('rate-limit');
    expect(await failure(exa().search('x', opts))).toMatchObject({ status: 402, message: 'Exa answered 402: You are out of credits' });
    const limited = await failure(exa().search('x', opts));
    expect(limited).toMatchObject({ status: 429 });
    expect(limited!.message).toMatch(/exceeded your Exa rate limit/);
  });
});

describe('Serper', () => {
  const now = () => new Date('2024-03-20T12:00:00Z');
  const serper = (apiKey = 'serper-test-key') => serperProvider({ apiKey, baseUrl: apis.serper.url, timeoutMs: 2_000, now });

  it("parses Google's organic results, with their dates in words", async () => {
    const hits = await serper().search('solar module prices', opts);
    expect(hits.map((h) => [h.url, h.score, h.published])).toEqual([
      ['https://www.pv-magazine.com/2024/03/05/module-prices', 1, '2024-03-05'],
      ['https://www.iea.org/data-and-statistics/charts/solar-pv-prices', 0.5, '2024-03-17'],
      ['https://www.energysage.com/local-data/solar-panel-cost/', 1 / 3, undefined],
    ]);
    expect(hits[0]).toMatchObject({
      title: 'Solar module prices hit record low - pv magazine',
      content: expect.stringMatching(/^Module prices/),
    });
    expect(apis.serper.last.headers['x-api-key']).toBe('serper-test-key');
    expect(JSON.parse(apis.serper.last.body)).toEqual({ q: 'solar module prices', num: 5 });
  });

  it('sends a recent open-ended range as qdr and any other as a custom date range', async () => {
    await serper().search('x', { ...opts, timeRange: { from: '2024-02-25' } });
    expect(JSON.parse(apis.serper.last.body)).toMatchObject({ tbs: 'qdr:m' });
    await serper().search('x', { ...opts, timeRange: { from: '2023-01-01', to: '2023-06-30' } });
    expect(JSON.parse(apis.serper.last.body)).toMatchObject({ tbs: 'cdr:1,cd_min:1/1/2023,cd_max:6/30/2023' });
    const today = now();
    expect(serperTbs({ from: '2024-03-19' }, today)).toBe('qdr:d');
    expect(serperTbs({ from: '2024-03-14' }, today)).toBe('qdr:w');
    expect(serperTbs({ from: '2023-06-01' }, today)).toBe('qdr:y');
    expect(serperTbs({ from: '2020-01-01' }, today)).toBe('cdr:1,cd_min:1/1/2020,cd_max:3/20/2024');
    expect(serperTbs({ to: '2021-12-31' }, today)).toBe('cdr:1,cd_max:12/31/2021');
    expect(serperTbs(undefined, today)).toBeUndefined();
    expect(googleDate('2 hours ago', today)).toBe('2024-03-20');
    expect(googleDate('12 Feb 2023', today)).toBe('2023-02-12');
    expect(googleDate('sometime', today)).toBeUndefined();
  });

  it('answers a bad key 403 and spent credits 400 (both permanent), its rate limit 429', async () => {
    expect(await failure(serper('wrong').search('x', opts))).toMatchObject({ status: 403, message: 'Serper answered 403: Unauthorized.' });
    apis.serper.failNext('no-credits').failNext('rate-limit');
    expect(await failure(serper().search('x', opts))).toMatchObject({ status: 400, message: 'Serper answered 400: Not enough credits' });
    expect(await failure(serper().search('x', opts))).toMatchObject({ status: 429 });
  });
});

describe('configuration of the new providers', () => {
  it('builds them from the environment, keyless ones by default, and names a missing key', () => {
    const config = loadConfig({
      SEARCH_PROVIDERS: 'exa,serper,pubmed,semanticscholar',
      EXA_API_KEY: 'e',
      SERPER_API_KEY: 's',
      NCBI_API_KEY: 'n',
    }).search;
    expect([...buildProviders({ ...config, userAgent: 'ua' }).keys()]).toEqual(['exa', 'serper', 'pubmed', 'semanticscholar']);
    expect(config.rateLimits).toMatchObject({ pubmed: 4, semanticscholar: 1, exa: 5, serper: 5 });
    expect(loadConfig({}).search.rateLimits.pubmed).toBe(1);
    expect(loadConfig({}).search.providers).toEqual(['duckduckgo', 'wikipedia', 'openalex', 'arxiv', 'pubmed', 'semanticscholar']);
    expect(loadConfig({}).search.rateLimits.duckduckgo).toBe(1);
    expect(() => loadConfig({ DUCKDUCKGO_REGION: 'English' })).toThrow(/DUCKDUCKGO_REGION/);
    let err: unknown;
    try {
      loadConfig({ SEARCH_PROVIDERS: 'exa,serper' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues).toEqual([
      { variable: 'EXA_API_KEY', reason: 'SEARCH_PROVIDERS includes exa, which needs an Exa key' },
      { variable: 'SERPER_API_KEY', reason: 'SEARCH_PROVIDERS includes serper, which needs a Serper key' },
    ]);
    expect(() =>
      buildProviders({ ...config, settings: { ...config.settings, exa: { EXA_BASE_URL: 'https://api.exa.ai' } }, userAgent: 'ua' }),
    ).toThrow('search provider exa needs EXA_API_KEY');
  });
});

describe("DuckDuckGo (the HTML results page, the defaults' keyless web)", () => {
  const ddg = new FakeDuckDuckGo((q) =>
    q === 'nothing at all'
      ? []
      : Array.from({ length: 12 }, (_, i) => ({
          url: `https://example.org/solar/${i}?ref=ddg&x=1`,
          title: `Solar prices & panels #${i}`,
          content: `Module prices fell to 0.11 USD/W in 2024 (page ${i}), said "the report".`,
          ...(i === 0 ? { date: '2024-03-05T00:00:00.0000000' } : {}),
        })),
  );
  beforeAll(async () => void (await ddg.start()));
  afterAll(() => ddg.close());
  const provider = () => duckduckgoProvider({ baseUrl: ddg.url, region: 'uk-en', timeoutMs: 2_000, userAgent: 'deep-research-test' });

  it('reads the organic results: the redirect unwrapped, the ad left out, bold and entities gone, the date kept', async () => {
    const hits = await provider().search('solar module prices', {
      maxResults: 3,
      timeRange: { from: new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10) },
    });
    expect(hits).toEqual([
      {
        title: 'Solar prices & panels #0',
        url: 'https://example.org/solar/0?ref=ddg&x=1',
        content: 'Module prices fell to 0.11 USD/W in 2024 (page 0), said "the report".',
        score: 1,
        source: 'duckduckgo',
        published: '2024-03-05',
      },
      expect.objectContaining({ url: 'https://example.org/solar/1?ref=ddg&x=1', score: 0.5 }),
      expect.objectContaining({ url: 'https://example.org/solar/2?ref=ddg&x=1' }),
    ]);
    // The form the page itself posts, the region, the last-week filter (a 3-day range), the agent.
    expect(ddg.requests.at(-1)).toEqual({
      method: 'POST',
      form: { q: 'solar module prices', b: '', kl: 'uk-en', df: 'w' },
      userAgent: 'deep-research-test',
    });
    // Ten a page, whatever is asked.
    expect(await provider().search('solar module prices', { maxResults: 20 })).toHaveLength(10);
    expect(await provider().search('nothing at all', opts)).toEqual([]);
  });

  it('takes the bot check (a 202, or the page that carries it) as a rate limit, never as no results', async () => {
    ddg.botCheckNext();
    const err = await failure(provider().search('solar', opts));
    expect(err).toBeInstanceOf(ProviderHttpError);
    expect(err!.status).toBe(429);
    expect(err!.message).toBe('DuckDuckGo answered 202 with its bot check instead of results (too many requests)');
    ddg.botCheckNext(200);
    expect((await failure(provider().search('solar', opts)))!.status).toBe(429);
    expect(await provider().search('solar', opts)).toHaveLength(5);
  });

  it('reads a redirect, a direct link, and refuses an ad or a link that is no web page', () => {
    expect(resultUrl('//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2Fp%3Fq%3D1&rut=ab')).toBe('https://a.example/p?q=1');
    expect(resultUrl('https://b.example/x')).toBe('https://b.example/x');
    expect(resultUrl('https://duckduckgo.com/y.js?ad_domain=ads.example')).toBeUndefined();
    expect(resultUrl('//duckduckgo.com/l/?uddg=javascript%3Aalert(1)')).toBeUndefined();
    expect(resultUrl('/html/?q=next')).toBeUndefined();
    expect(parseResultsPage('<div class="result"><a class="result__a" href="mailto:x@y">x</a></div>')).toEqual([]);
  });
});
