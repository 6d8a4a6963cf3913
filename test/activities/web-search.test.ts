// The webSearch activity against PostgreSQL and SearXNG doubles: it reads the run's bans, time
// range and provider choice with its tenant's preferences in one query, asks only the providers the
// run may use, and stores the results it keeps in the order of their relevance to the goal.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSearchActivities, type WebSearchInput, type WebSearchResult } from '../../src/activities/search';
import { searxngProvider } from '../../src/infra/search/searxng';
import type { SearchProvider } from '../../src/infra/search/types';
import { createStore, type Store } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import { ZERO_USAGE } from '../../src/shared/plain';
import { FakeSearxng, type SearxResult } from '../support/search-server';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());

describe.skipIf(!ready)(`webSearch activity (${ready ? 'live' : missingReason()})`, () => {
  let pool: ReturnType<typeof createPool>;
  let store: Store;
  // Two engines of the same kind under two names: which one was asked shows the provider choice.
  const web = new FakeSearxng();
  const other = new FakeSearxng();
  let webSearch: (input: WebSearchInput) => Promise<WebSearchResult>;
  const tenant = `ws-${randomUUID().slice(0, 8)}`;

  const results: SearxResult[] = [
    { url: 'https://farm.example/solar', title: 'Solar solar solar', content: 'Battery storage prices fell, solar too.', score: 1 },
    { url: 'https://news.example/wind', title: 'Offshore wind', content: 'Turbines at sea are getting bigger.', score: 0.9 },
    {
      url: 'https://agency.example/battery',
      title: 'Battery storage prices',
      content: 'Battery pack prices fell to 139 USD/kWh.',
      score: 0.2,
    },
    { url: 'http://www.agency.example/battery/', title: 'Battery storage prices', content: 'Battery pack prices fell.', score: 0.1 },
    {
      url: 'https://old.example/battery-2015',
      title: 'Battery prices in 2015',
      content: 'Battery storage prices were high.',
      publishedDate: '2015-06-01T00:00:00',
    },
  ];

  async function newRun(search?: { from?: string; providers?: string[] }): Promise<string> {
    const id = `ws-run-${randomUUID()}`;
    await store.runs.record({ id, tenant, question: 'q', status: 'running', usage: ZERO_USAGE, ...(search ? { search } : {}) });
    return id;
  }
  const run = (input: WebSearchInput): Promise<WebSearchResult> =>
    new MockActivityEnvironment({ activityId: randomUUID() }).run(webSearch, input);

  beforeAll(async () => {
    pool = createPool(databaseUrl()!, 3);
    store = createStore(pool);
    await web.start();
    await other.start();
    web.setFallback(() => results);
    other.setFallback(() => [{ url: 'https://encyclopedia.example/battery', title: 'Battery', content: 'A battery stores energy.' }]);
    const providers = new Map<string, SearchProvider>([
      ['searxng', searxngProvider(web.url)],
      ['wikipedia', searxngProvider(other.url)],
    ]);
    webSearch = createSearchActivities({ store, providers, maxResults: 10 }).webSearch;
  });
  afterAll(async () => {
    await pool?.query('DELETE FROM search_preferences WHERE tenant = $1', [tenant]);
    await pool?.end();
    await web.close();
    await other.close();
  });

  it('keeps one hit per document, drops the tenant-avoided domain and older results, and ranks for the goal', async () => {
    await store.searchPreferences.put(tenant, { preferDomains: ['news.example'], avoidDomains: ['farm.example'] });
    const id = await newRun({ from: '2025-01-01' });
    const r = await run({ researchId: id, query: 'battery prices', goal: 'How far did battery storage prices fall?' });
    expect(r.providers).toEqual(['searxng']);
    expect(r.route).toEqual({ topic: 'general', decidedBy: 'rules' });
    // The agency's page once (https), then the preferred news site; the 2015 result and the avoided farm are gone.
    expect(r.results.map((x) => x.url)).toEqual(['https://agency.example/battery', 'https://news.example/wind']);
    expect(r.notes).toEqual([expect.stringMatching(/1 result published outside the run's time range \(since 2025-01-01\) was dropped/)]);
    const stored = await store.getSources(id);
    expect(stored.map((s) => s.content)).toEqual([
      '(publication date unknown) Battery pack prices fell to 139 USD/kWh.',
      '(publication date unknown) Turbines at sea are getting bigger.',
    ]);
  });

  it("asks the run's providers over the tenant's, the tenant's over all configured", async () => {
    await store.searchPreferences.put(tenant, { providers: ['wikipedia'], preferDomains: [], avoidDomains: [] });
    const before = [web.queries.length, other.queries.length];
    const byTenant = await run({ researchId: await newRun(), query: 'battery prices' });
    expect(byTenant.providers).toEqual(['wikipedia']);
    const byRun = await run({ researchId: await newRun({ providers: ['searxng'] }), query: 'battery prices' });
    expect(byRun.providers).toEqual(['searxng']);
    expect([web.queries.length - before[0]!, other.queries.length - before[1]!]).toEqual([1, 1]);
    // A run without a row (a step started on its own) has no tenant: every configured provider may answer.
    const alone = await run({ researchId: `ws-alone-${randomUUID()}`, query: 'battery prices' });
    expect(alone.providers).toEqual(['searxng']);
  });

  it('keeps avoided results when nothing else is found, and says so', async () => {
    await store.searchPreferences.put(tenant, { preferDomains: [], avoidDomains: ['encyclopedia.example'] });
    const r = await run({ researchId: await newRun({ providers: ['wikipedia'] }), query: 'battery' });
    expect(r.results.map((x) => x.url)).toEqual(['https://encyclopedia.example/battery']);
    expect(r.notes).toEqual([expect.stringMatching(/every result was on a domain the tenant avoids \(encyclopedia\.example\)/)]);
  });
});
