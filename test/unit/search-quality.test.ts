// What a query's hits go through before they are stored: the run's time range, one hit per
// document, the tenant's avoided and preferred domains, the order by relevance to the step's goal,
// and which providers a run may use.
import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import { publishedDate } from '../../src/activities/crawl/extract';
import { allowedProviders, bm25, dedupeHits, documentKey, dropAvoided, filterByTime, rerank } from '../../src/activities/search/quality';
import { toSources } from '../../src/activities/search/sources';
import type { SearchHit } from '../../src/infra/search/types';
import { outsideRange, publicationDay, resolveTimeRange } from '../../src/shared/time-range';
import { embedText } from '../support/embeddings';

const hit = (url: string, over: Partial<SearchHit> = {}): SearchHit => ({
  title: over.title ?? url,
  url,
  content: over.content ?? '',
  score: over.score ?? 0.5,
  source: over.source ?? 'searxng',
  ...(over.published ? { published: over.published } : {}),
});

describe('time range', () => {
  const start = new Date('2026-03-31T18:00:00Z');

  it('resolves a period against the start, with no end; dates stay as given', () => {
    expect(resolveTimeRange('day', start)).toEqual({ from: '2026-03-30' });
    expect(resolveTimeRange('week', start)).toEqual({ from: '2026-03-24' });
    // A calendar month back from the 31st of March is the 3rd of March (February has no 31st).
    expect(resolveTimeRange('month', start)).toEqual({ from: '2026-03-03' });
    expect(resolveTimeRange('year', start)).toEqual({ from: '2025-03-31' });
    expect(resolveTimeRange({ from: '2020-01-01', to: '2020-12-31' }, start)).toEqual({ from: '2020-01-01', to: '2020-12-31' });
    expect(resolveTimeRange({ to: '2020-12-31' }, start)).toEqual({ to: '2020-12-31' });
  });

  it('keeps both bounds (inclusive) and unknown dates, drops what is known to be outside', () => {
    const range = { from: '2026-01-01', to: '2026-01-31' };
    expect(outsideRange('2026-01-01', range)).toBe(false);
    expect(outsideRange('2026-01-31', range)).toBe(false);
    expect(outsideRange('2025-12-31', range)).toBe(true);
    expect(outsideRange('2026-02-01', range)).toBe(true);
    expect(outsideRange(undefined, range)).toBe(false);
    expect(outsideRange('1999-01-01', undefined)).toBe(false);
    const { kept, note } = filterByTime(
      [
        hit('https://a.example/old', { published: '2025-12-31T23:59:59Z' }),
        hit('https://a.example/first', { published: '2026-01-01' }),
        hit('https://a.example/last', { published: '2026-01-31T23:00:00Z' }),
        hit('https://a.example/undated'),
        hit('https://a.example/garbled', { published: 'last Tuesday' }),
        hit('https://a.example/new', { published: '2026-02-01' }),
      ],
      range,
    );
    expect(kept.map((h) => h.url.split('/').pop())).toEqual(['first', 'last', 'undated', 'garbled']);
    expect(note).toMatch(/2 results published outside the run's time range \(2026-01-01 to 2026-01-31\) were dropped/);
  });

  it('reads publication dates as providers give them', () => {
    expect(publicationDay('2026-01-05')).toBe('2026-01-05');
    expect(publicationDay('2026-01-05T22:00:00-05:00')).toBe('2026-01-06');
    expect(publicationDay('Mon, 05 Jan 2026 10:00:00 GMT')).toBe('2026-01-05');
    expect(publicationDay('2026-01-05T23:30:00')).toBe('2026-01-05');
    expect(publicationDay('2026')).toBeUndefined();
    expect(publicationDay('2026-13-45')).toBeUndefined();
    expect(publicationDay(null)).toBeUndefined();
  });

  it('marks each stored snippet with its date, or as undated in a run with a range', () => {
    const hits = [
      hit('https://a.example/1', { published: '2026-01-05T10:00:00Z', content: 'dated' }),
      hit('https://a.example/2', { content: 'undated' }),
    ];
    expect(toSources(hits, 5, { from: '2026-01-01' }).map((s) => [s.content, s.published])).toEqual([
      ['(published 2026-01-05) dated', '2026-01-05'],
      ['(publication date unknown) undated', undefined],
    ]);
    expect(toSources(hits, 5).map((s) => s.content)).toEqual(['(published 2026-01-05) dated', 'undated']);
  });

  it("finds a page's date in its meta tags, JSON-LD or time element", () => {
    const date = (head: string, body = '') =>
      publishedDate(parseHTML(`<html><head>${head}</head><body>${body}</body></html>`).document as unknown as Document);
    expect(date('<meta property="article:published_time" content="2026-02-03T08:00:00Z">')).toBe('2026-02-03');
    expect(date('<meta name="citation_publication_date" content="2019/7/4">')).toBe('2019-07-04');
    expect(
      date(
        '<script type="application/ld+json">{"@graph":[{"@type":"WebPage"},{"@type":"NewsArticle","datePublished":"2024-05-06"}]}</script>',
      ),
    ).toBe('2024-05-06');
    expect(
      date('<script type="application/ld+json">{broken</script>', '<article><time datetime="2023-09-10">Sept 10</time></article>'),
    ).toBe('2023-09-10');
    expect(date('<meta name="date" content="soon">', '<p>no date here</p>')).toBeUndefined();
  });
});

describe('one hit per document', () => {
  it('merges the URLs of one document: http/https, www/mobile/AMP, index.html, tracking', () => {
    const same = [
      'https://news.example.org/2026/solar-record',
      'http://www.news.example.org/2026/solar-record/',
      'https://m.news.example.org/2026/solar-record?utm_source=x',
      'https://amp.news.example.org/2026/solar-record/amp',
      'https://news.example.org/2026/solar-record/index.html#top',
    ];
    expect(new Set(same.map(documentKey)).size).toBe(1);
    const merged = dedupeHits([
      hit(same[1]!, { score: 0.9, content: 'short' }),
      hit(same[3]!, { score: 0.4, content: 'a longer snippet than the rest', published: '2026-01-02' }),
      hit(same[0]!, { score: 0.2 }),
    ]);
    expect(merged).toHaveLength(1);
    // The https, non-AMP address; the best score, the longest snippet, the known date.
    expect(merged[0]).toMatchObject({ url: same[0], score: 0.9, content: 'a longer snippet than the rest', published: '2026-01-02' });
  });

  it('merges mirrors (same title, near-identical snippet) and keeps distinct pages apart', () => {
    const snippet = 'Utility-scale solar fell to 4.9 US cents per kilowatt-hour in 2022, an 89 percent drop since 2010, the agency said.';
    const hits = [
      hit('https://irena.example/costs-2022', { title: 'Renewable power costs in 2022 - IRENA', content: snippet }),
      hit('https://mirror.example/irena/costs-2022', { title: 'Renewable power costs in 2022 | Mirror', content: `${snippet} Read more` }),
      // Same title, another text: another page.
      hit('https://other.example/costs-2022', {
        title: 'Renewable power costs in 2022',
        content: 'Wind power was the cheapest new source in Europe last year.',
      }),
      // Same site, other path: another page.
      hit('https://irena.example/costs-2021', { title: 'Renewable power costs in 2021 - IRENA', content: snippet.replace('2022', '2021') }),
    ];
    expect(dedupeHits(hits).map((h) => h.url)).toEqual([
      'https://irena.example/costs-2022',
      'https://other.example/costs-2022',
      'https://irena.example/costs-2021',
    ]);
  });
});

describe('ranking for the goal', () => {
  const goal = 'How much did battery storage prices fall?';
  const hits = [
    hit('https://a.example/solar', { title: 'Solar panel efficiency', content: 'Photovoltaic modules convert sunlight.', score: 0.9 }),
    hit('https://b.example/wind', { title: 'Offshore wind', content: 'Turbines at sea are getting bigger.', score: 0.8 }),
    hit('https://c.example/battery', { title: 'Battery storage prices', content: 'Battery pack prices fell to 139 USD/kWh.', score: 0.1 }),
  ];

  it('moves the hit about the goal up by its words (BM25), provider score breaking ties', async () => {
    expect(
      bm25(
        goal,
        hits.map((h) => `${h.title} ${h.content}`),
      )[2],
    ).toBeGreaterThan(0);
    const ranked = await rerank(hits, goal, {});
    expect(ranked.method).toBe('lexical');
    expect(ranked.hits.map((h) => h.url)).toEqual(['https://c.example/battery', 'https://a.example/solar', 'https://b.example/wind']);
  });

  it('ranks by embeddings where words do not match (synonyms), and falls back to words when they fail', async () => {
    const embed = async (texts: string[]) => texts.map((t) => embedText(t));
    const synonyms = [
      hit('https://a.example/wind', { title: 'Offshore wind', content: 'Turbines at sea are getting bigger.', score: 0.9 }),
      hit('https://b.example/pv', { title: 'Photovoltaic module output', content: 'Panels convert sunshine.', score: 0.2 }),
    ];
    const byVectors = await rerank(synonyms, 'solar generation', { embed });
    expect(byVectors.method).toBe('embeddings');
    expect(byVectors.hits[0]!.url).toBe('https://b.example/pv');
    // No word of "solar generation" is in either hit: by words they tie and the provider's order stays.
    const failing = await rerank(synonyms, 'solar generation', {
      embed: () => Promise.reject(new Error('embeddings 503')),
    });
    expect(failing).toMatchObject({ method: 'lexical', note: expect.stringMatching(/not embeddings: embeddings 503/) });
    expect(failing.hits[0]!.url).toBe('https://a.example/wind');
  });

  it('raises preferred domains and drops avoided ones unless nothing else is left', async () => {
    const preferred = await rerank(hits, goal, { prefer: ['b.example'] });
    expect(preferred.hits.map((h) => h.url)[0]).toBe('https://c.example/battery');
    // A preferred hit ties a less relevant one ahead (the solar hit: equal relevance, higher score).
    expect(preferred.hits.map((h) => h.url)[1]).toBe('https://b.example/wind');
    expect(dropAvoided(hits, ['c.example']).kept.map((h) => h.url)).toEqual(['https://a.example/solar', 'https://b.example/wind']);
    const only = dropAvoided([hit('https://www.c.example/x')], ['c.example']);
    expect(only.kept).toHaveLength(1);
    expect(only.note).toMatch(/every result was on a domain the tenant avoids \(c\.example\)/);
  });
});

describe('provider choice', () => {
  const configured = ['searxng', 'wikipedia', 'openalex'];
  it("takes the run's choice over the tenant's over every configured one", () => {
    expect(allowedProviders(configured, {})).toEqual({ names: configured });
    expect(allowedProviders(configured, { tenantProviders: ['wikipedia'] })).toEqual({ names: ['wikipedia'] });
    expect(allowedProviders(configured, { runProviders: ['openalex'], tenantProviders: ['wikipedia'] })).toEqual({ names: ['openalex'] });
  });

  it('leaves out names this worker does not have, and says so', () => {
    expect(allowedProviders(configured, { runProviders: ['openalex', 'brave'] })).toEqual({
      names: ['openalex'],
      note: expect.stringMatching(/run's searchProviders name providers this worker does not have \(brave\): left out/),
    });
    expect(allowedProviders(configured, { tenantProviders: ['brave'] })).toMatchObject({
      names: configured,
      note: expect.stringMatching(/tenant's search preferences .* \(brave\): all configured ones were used/),
    });
  });
});
