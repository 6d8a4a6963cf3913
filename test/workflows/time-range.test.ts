// A run with options.timeRange on the real dev server with the scripted model: search results
// known to be older are dropped, a page whose markup dates it before the range is not read as a
// source (the crawl says why), and the report cites only the recent pages.
import type http from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReportJson } from '../../src/api/contract';
import type { ResearchResult } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { planJson, researchRules, stepTitleOf } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

const DAY_MS = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString();

/** An article as news sites mark it up: the date in the head (meta or JSON-LD), the text in <article>. */
function article(title: string, head: string, text: string) {
  return (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html><head><title>${title}</title>${head}</head><body><article><h1>${title}</h1>` +
        `<p>${text} Analysts compared utility-scale solar auctions, module prices and financing costs across regions.</p>` +
        `<p>${text} The figures come from the tenders published by grid operators and energy ministries.</p>` +
        `<p>Bids were compared in US cents per kilowatt-hour over the life of each plant, with land, grid connection and ` +
        `operating costs included, so that tenders of different sizes and terms can be read side by side.</p></article></body></html>`,
    );
  };
}

describe.skipIf(!ready)(`time range (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  const page = (path: string) => `${h.site.url}/news/${path}`;

  beforeAll(async () => {
    h = await startHarness();
    h.site
      .route(
        '/news/fresh.html',
        article(
          'Solar auction prices this month',
          `<meta property="article:published_time" content="${daysAgo(3)}">`,
          'Solar fell to 2.1 cents.',
        ),
      )
      .route(
        '/news/fresh-ld.html',
        article(
          'Record-low solar tender',
          `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'NewsArticle', datePublished: daysAgo(10).slice(0, 10) })}</script>`,
          'A tender closed at 1.9 cents.',
        ),
      )
      .route(
        '/news/stale.html',
        article('Solar prices in 2019', '<meta name="citation_publication_date" content="2019/05/01">', 'Solar cost 5 cents.'),
      )
      .route('/news/archive.html', article('Solar prices in 2018', '', 'Solar cost 6 cents.'));
    // The search engine dates two results; the stale page's date is only in its markup.
    h.search.setFallback((q) => [
      {
        url: page('fresh.html'),
        title: `Solar auction prices this month (${q})`,
        content: 'Solar fell to 2.1 cents.',
        publishedDate: daysAgo(3),
      },
      {
        url: page('archive.html'),
        title: `Solar prices in 2018 (${q})`,
        content: 'Solar cost 6 cents.',
        publishedDate: '2018-03-01T00:00:00',
      },
      { url: page('stale.html'), title: `Solar prices in 2019 (${q})`, content: 'Solar cost 5 cents.' },
      {
        url: page('fresh-ld.html'),
        title: `Record-low solar tender (${q})`,
        content: 'A tender closed at 1.9 cents.',
        publishedDate: null,
      },
    ]);
  });
  afterAll(async () => h?.close());

  /** Searches once, reads every page the search shows, then answers. */
  const readEverything = (req: ChatRequest): Reply => {
    const tools = req.messages.filter((m) => m.role === 'tool');
    if (tools.length === 0) return { toolCalls: [{ name: 'web_search', arguments: { queries: [stepTitleOf(req)] } }] };
    if (tools.length === 1) {
      const urls = [...new Set([...String(tools[0]!.content ?? '').matchAll(/— (http\S+)/g)].map((m) => m[1]!))];
      return { toolCalls: [{ name: 'crawl', arguments: { urls, goal: stepTitleOf(req) } }] };
    }
    return { content: 'I have what I need.' };
  };

  it('drops older results, does not read a page dated before the range, and cites only recent sources', async () => {
    h.llm.script(researchRules({ react: readEverything }, planJson([{ id: 'a' }])));
    const started = await request(h.app)
      .post('/v1/research')
      .send({ question: 'How cheap did solar get this month?', options: { autoAcceptPlan: true, timeRange: 'month' } })
      .expect(202);
    const id = started.body.id as string;
    const result = (await h.client.workflow.getHandle(id).result()) as ResearchResult;
    expect(result.status).toBe('completed');

    // The run's row holds the range, resolved against the workflow's start.
    const start = (await h.client.workflow.getHandle(id).describe()).startTime;
    const monthBefore = new Date(start);
    monthBefore.setUTCMonth(monthBefore.getUTCMonth() - 1);
    const row = (await h.pool.query('SELECT search_from::text AS from, search_to FROM research_runs WHERE id = $1', [id])).rows[0];
    expect(row).toEqual({ from: monthBefore.toISOString().slice(0, 10), search_to: null });

    // The result the search engine dated 2018 never became a source; the others carry their dates.
    const sources = (
      await h.pool.query<{ url: string; published: string | null; content: string; provider: string }>(
        'SELECT url, published::text AS published, content, provider FROM sources WHERE research_id = $1',
        [id],
      )
    ).rows;
    const byPage = (name: string) => sources.filter((s) => s.url === page(name));
    expect(byPage('archive.html')).toEqual([]);
    expect(byPage('fresh.html')[0]).toMatchObject({ published: daysAgo(3).slice(0, 10) });
    // Dated by its markup when it was read (JSON-LD), though the engine gave no date.
    expect(byPage('fresh-ld.html')[0]).toMatchObject({ published: daysAgo(10).slice(0, 10), provider: 'crawl' });
    // The stale page's snippet was kept (its date was unknown at search time, and said so), and
    // dated when its page was read.
    expect(byPage('stale.html')[0]).toMatchObject({ published: '2019-05-01', provider: 'searxng' });
    expect(byPage('stale.html')[0]!.content).toMatch(/^\(publication date unknown\) Solar cost 5 cents\./);

    // The crawl told the researcher why the stale page was not read.
    const toolMessages = h.llm.requests
      .filter((r) => r.rule === 'react')
      .flatMap((r) => r.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content)));
    expect(toolMessages.join('\n')).toMatch(
      new RegExp(
        `stale\\.html: skipped \\(published 2019-05-01, outside the run's time range \\(since ${row.from}\\): not used as a source\\)`,
      ),
    );
    expect(toolMessages.join('\n')).toMatch(/Solar auction prices this month \(published \d{4}-\d{2}-\d{2}\)/);
    // The search told it that a result was dropped as too old.
    expect(toolMessages.join('\n')).toMatch(
      /Search "[^"]+": \(\d results? published outside the run's time range \(since [\d-]+\) (was|were) dropped\)/,
    );

    // The report cites the recent pages only.
    const report = (await request(h.app).get(`/v1/research/${id}/report?format=json`).expect(200)).body as ReportJson;
    const cited = report.references.map((r) => r.url);
    expect(cited.length).toBeGreaterThan(0);
    for (const url of cited) expect([page('fresh.html'), page('fresh-ld.html')]).toContain(url);
  });
});
