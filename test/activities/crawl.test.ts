// The crawl activity on the fixture site: readable text, goal-directed extraction into a stored
// source, the page cache, robots.txt, and blocked or skipped URLs reported with their reason.
// PDFs and Office files are parsed on the parse threads, under caps (a zip bomb is skipped).
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrawlActivities, type CrawlResult } from '../../src/activities/crawl';
import { DEFAULT_PARSE_CAPS } from '../../src/activities/knowledge/parse-caps';
import { ParseSandbox } from '../../src/activities/knowledge/parse-thread';
import { createLlm } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { createPageExtractor } from '../../src/activities/roles/extractor';
import { createStore } from '../../src/activities/store';
import { sourceIdFor } from '../../src/activities/search/sources';
import { createPool } from '../../src/infra/postgres';
import { FixtureSite } from '../support/fixture-site';
import { makeDocxBomb } from '../support/hostile-files';
import { bySchema, ScriptedLlmServer } from '../support/llm-server';
import { testConfig } from '../support/harness';
import { userText } from '../support/research-script';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());

describe.skipIf(!ready)(`crawl activity (${ready ? 'live' : missingReason()})`, () => {
  const site = new FixtureSite();
  const llm = new ScriptedLlmServer();
  let crawl: ReturnType<typeof createCrawlActivities>['crawlPage'];
  let pool: ReturnType<typeof createPool>;
  const researchId = `crawl-${randomUUID()}`;
  const parser = new ParseSandbox({
    threads: 1,
    memoryMb: 256,
    timeoutMs: 30_000,
    caps: { ...DEFAULT_PARSE_CAPS, maxInflatedBytes: 20_000_000 },
  });

  const run = (url: string, goal = 'solar cost decline'): Promise<CrawlResult> =>
    new MockActivityEnvironment({ activityId: randomUUID() }).run(crawl, { researchId, url, goal });

  beforeAll(async () => {
    await site.start();
    await llm.start();
    const host = new URL(site.url).host;
    const config = testConfig(llm.url, { CRAWL_ALLOW_HOSTS: host, CRAWL_TIMEOUT_MS: '2000' });
    pool = createPool(databaseUrl()!, 4);
    const store = createStore(pool);
    const client = createLlmClient(config);
    crawl = createCrawlActivities({
      config,
      store,
      extract: createPageExtractor(createLlm({ config, calls: store.llmCalls, leases: store.llmLeases, client: () => client })),
      parser,
    }).crawlPage;
    llm.script([
      {
        match: bySchema('PageExtract'),
        reply: (req) => {
          const text = userText(req);
          // As the 0.5B model read a datasheet: nothing found, where the page states every figure.
          if (text.includes('Velmar'))
            return {
              json: { relevant: false, evidence: 'The page does not contain any relevant information.', summary: 'Nothing relevant.' },
            };
          const figure = /(\d[\d.,]* (?:US dollars per kilowatt-hour|GW))/.exec(text)?.[1] ?? 'nothing';
          return { json: { relevant: figure !== 'nothing', evidence: `The page states ${figure}.`, summary: `Reports ${figure}.` } };
        },
      },
    ]);
  });
  afterAll(async () => {
    await parser.close();
    await pool?.end();
    await site.close();
    await llm.close();
  });

  it('reads a page for a goal and stores the evidence as a source; a second read is free', async () => {
    const url = `${site.url}/articles/solar-costs.html`;
    const r = await run(url);
    expect(r).toMatchObject({
      status: 'ok',
      relevant: true,
      cached: false,
      title: 'Utility-scale solar costs fell sharply',
      summary: 'Reports 0.049 US dollars per kilowatt-hour.',
    });
    expect(r.sourceId).toMatch(/^S[0-9a-f]{8}$/);
    const { rows } = await pool.query('SELECT url, content, provider FROM sources WHERE research_id = $1 AND source_id = $2', [
      researchId,
      r.sourceId,
    ]);
    expect(rows[0]).toMatchObject({ url, provider: 'crawl' });
    expect(rows[0].content).toMatch(/The page states 0\.049 US dollars per kilowatt-hour\./);
    // The extractor saw the readable article, inside a delimited block, with the goal.
    const sent = llm.requests.at(-1)!.body;
    expect(userText(sent)).toMatch(/Goal: solar cost decline/);
    expect(userText(sent)).toMatch(/<page>[\s\S]*fell by about 89%[\s\S]*<\/page>/);

    const hitsBefore = site.hits.filter((h) => h === '/articles/solar-costs.html').length;
    const again = await run(url);
    expect(again).toMatchObject({ status: 'ok', cached: true, sourceId: r.sourceId });
    expect(site.hits.filter((h) => h === '/articles/solar-costs.html').length).toBe(hitsBefore);
  });

  it("takes a page's own figures for the goal over a reading that found nothing on it", async () => {
    const body = [
      '<p>The Velmar alloy datasheet, issued by Korsholm Metals for engineers who cast it.</p>',
      '<p>Velmar has a tensile strength of 610 MPa after ageing, and a density of 2.71 g/cm3.</p>',
      '<p>Contact the sales office for samples and the latest terms of delivery in Europe.</p>',
    ].join('');
    site.route('/velmar/datasheet.html', (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<html><head><title>Velmar datasheet</title></head><body><article>${body}</article></body></html>`);
    });
    const r = await run(`${site.url}/velmar/datasheet.html`, 'Velmar alloy tensile strength and density');
    expect(r).toMatchObject({
      status: 'ok',
      relevant: true,
      summary: 'Velmar has a tensile strength of 610 MPa after ageing, and a density of 2.71 g/cm3.',
    });
    const { rows } = await pool.query('SELECT content FROM sources WHERE research_id = $1 AND source_id = $2', [researchId, r.sourceId]);
    expect(rows[0].content).not.toContain('does not contain');
    expect(rows[0].content).toContain('- Velmar has a tensile strength of 610 MPa after ageing, and a density of 2.71 g/cm3.');
  });

  it('counts a search hit that redirected to a page the run read as read (the report may cite it); a hit never read stays a snippet', async () => {
    site.route('/moved/solar', (_req, res) => void res.writeHead(301, { location: '/articles/solar-costs.html' }).end());
    const hit = `${site.url}/moved/solar`;
    const unread = `${site.url}/never/read`;
    await createStore(pool).saveSources(researchId, [
      { sourceId: sourceIdFor(hit), url: hit, title: 'Moved', content: 'A search snippet.', provider: 'searxng' },
      { sourceId: sourceIdFor(unread), url: unread, title: 'Unread', content: 'Another snippet.', provider: 'searxng' },
    ]);
    const r = await run(hit);
    expect(r).toMatchObject({ status: 'ok', sourceId: sourceIdFor(`${site.url}/articles/solar-costs.html`) });
    const { rows } = await pool.query(
      'SELECT source_id, url, provider, content FROM sources WHERE research_id = $1 AND source_id = ANY($2)',
      [researchId, [sourceIdFor(hit), sourceIdFor(unread)]],
    );
    const byId = new Map(rows.map((row) => [row.source_id, row]));
    expect(byId.get(sourceIdFor(hit))).toMatchObject({ url: hit, provider: 'crawl' });
    expect(byId.get(sourceIdFor(hit)).content).toMatch(/The page states 0\.049 US dollars per kilowatt-hour\./);
    expect(byId.get(sourceIdFor(unread))).toMatchObject({ provider: 'searxng', content: 'Another snippet.' });
  });

  it('reads the text of a PDF', async () => {
    const r = await run(`${site.url}/reports/wind.pdf`, 'wind capacity');
    expect(r).toMatchObject({ status: 'ok', summary: 'Reports 1000 GW.' });
  });

  it('skips a DOCX from the web that inflates past the parse cap, saying so', async () => {
    const bomb = await makeDocxBomb(100);
    site.route('/reports/bomb.docx', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' }).end(bomb);
    });
    const r = await run(`${site.url}/reports/bomb.docx`, 'storage');
    expect(r.status).toBe('skipped');
    expect(r.reason).toMatch(/word\/document\.xml decompresses to more than 20 MB.*KB_PARSE_MAX_INFLATED_MB/);
  });

  it.each([
    ['robots.txt', () => `${site.url}/private/secret.html`, 'skipped', /robots\.txt disallows/],
    ['a name that resolves to loopback', () => 'http://localhost/index.html', 'blocked', /localhost resolves to 127\.0\.0\.1/],
    [
      'the fixture site on a port outside the allow list',
      () => `http://localhost:${new URL(site.url).port}/index.html`,
      'blocked',
      /port \d+ is not allowed/,
    ],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/', 'blocked', /linkLocal/],
    ['a 404', () => `${site.url}/missing.html`, 'failed', /HTTP 404/],
    ['a non-http scheme', () => 'ftp://example.com/file', 'blocked', /scheme ftp:/],
  ])('reports %s with the reason instead of failing', async (_name, url, status, reason) => {
    const r = await run(url());
    expect(r.status).toBe(status);
    expect(r.reason).toMatch(reason);
    expect(site.hits).not.toContain('/private/secret.html');
  });
});
