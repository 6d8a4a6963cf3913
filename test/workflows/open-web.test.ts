// A run on the defaults with nothing configured but an LLM: no SEARCH_PROVIDERS, no SEARXNG_URL, no
// search key. The web comes from DuckDuckGo's results page (a double built like the real page:
// an ad, redirect-wrapped links, bold query words, a bot check on the first request), and the
// report cites the web pages it found there. Only the keyless APIs' addresses are set, to a port
// that refuses, so that no test reaches the internet.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeDuckDuckGo } from '../support/duckduckgo';
import { planJson, researchRules, searchResults } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { runToReport } from '../support/run-to-report';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const REFUSED = 'http://127.0.0.1:9';

describe.skipIf(!ready)(`the open web by default (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  let ddg: FakeDuckDuckGo;
  beforeAll(async () => {
    let siteUrl = '';
    ddg = await new FakeDuckDuckGo((q) => searchResults(siteUrl)(q)).start();
    h = await startHarness({
      env: {
        SEARCH_PROVIDERS: undefined,
        SEARXNG_URL: undefined,
        DUCKDUCKGO_BASE_URL: ddg.url,
        WIKIPEDIA_BASE_URL: REFUSED,
        OPENALEX_BASE_URL: REFUSED,
        ARXIV_BASE_URL: REFUSED,
        PUBMED_BASE_URL: REFUSED,
        SEMANTIC_SCHOLAR_BASE_URL: REFUSED,
        RESEARCHER_PYTHON: 'false',
      },
    });
    siteUrl = h.site.url;
  });
  afterAll(async () => {
    await h?.close();
    await ddg?.close();
  });

  it('searches the web through DuckDuckGo and cites the pages it found there', async () => {
    expect(h.config.search.providers).toEqual(['duckduckgo', 'wikipedia', 'openalex', 'arxiv', 'pubmed', 'semanticscholar']);
    // The first request meets the bot check: waited out and asked again, not read as "no results".
    ddg.botCheckNext();
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    const res = await runToReport(h);
    expect(ddg.requests.length).toBeGreaterThan(1);
    expect(h.search.queries).toEqual([]);
    const md = (await request(h.app).get(`/v1/research/${res.body.id}/report`).expect(200)).text;
    const references = md.split('\n## References\n')[1] ?? '';
    // The pages themselves (the redirect unwrapped), cited in the body.
    expect(references).toContain(`${h.site.url}/articles/solar-costs.html?q=`);
    expect(references).not.toMatch(/duckduckgo\.com|ads\.example/);
    expect(md.split('\n## References\n')[0]).toMatch(/\[\d+\]/);
    // And the sources are recorded as DuckDuckGo's.
    const { rows } = await h.pool.query('SELECT DISTINCT provider FROM sources WHERE research_id = $1', [res.body.id]);
    expect(rows.map((r) => r.provider)).toContain('duckduckgo');
  });
});
