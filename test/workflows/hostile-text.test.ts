// Text from outside that the database refuses and links that would inject markup, through a whole
// run: search results and a page carrying NULs, lone surrogates and Markdown in their URL and title.
// The run completes (no write fails and is retried as an outage), what it stored is cleaned, and the
// reference list and the HTML export hold one link per source, with the text as text.
import { randomUUID } from 'node:crypto';
import { JSDOM } from 'jsdom';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unstorableText } from '../../src/shared/text';
import { researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`hostile text through a run (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  const tenant = `hostile-${randomUUID().slice(0, 8)}`;
  let hostileUrl: string;

  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules());
    hostileUrl = `${h.site.url}/hostile(1) [x](https://phish.example/) "q" <b>.html`;
    h.site.route(new URL(hostileUrl).pathname, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<html><head><title>Heat\u0000 pumps \ud800</title></head><body><h1>Heat pumps</h1>` +
          `<p>Heat pump sales\u0000 rose 11% in 2023 \udc00 across Europe, the association said.</p></body></html>`,
      );
    });
    h.search.setFallback(() => [
      { url: hostileUrl, title: 'Heat](https://phish.example/) **pumps**\u0000 \ud800', content: 'Sales rose 11%\u0000 in 2023 \udfff.' },
    ]);
  });
  afterAll(async () => h?.close());

  it('completes, stores the text cleaned and writes each source as one escaped link', async () => {
    const id = (
      await request(h.app)
        .post('/v1/research')
        .set('x-tenant-id', tenant)
        .send({ question: 'Heat pump sales in Europe', options: { autoAcceptPlan: true } })
        .expect(202)
    ).body.id as string;
    const outcome = await h.client.workflow.getHandle(id).result();
    expect(outcome).toMatchObject({ status: 'completed' });

    // Nothing stored for the run holds a NUL or an unpaired surrogate.
    const { rows } = await h.pool.query<{ title: string; url: string }>('SELECT title, url FROM sources WHERE research_id = $1', [id]);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(unstorableText(`${r.title}${r.url}`)).toBeUndefined();

    const json = await request(h.app).get(`/v1/research/${id}/report?format=json`).set('x-tenant-id', tenant).expect(200);
    const hostile = (json.body.references as { url: string; title: string }[]).find((r) => r.url.includes('hostile'));
    expect(hostile).toBeDefined();
    const md = json.body.markdown as string;
    const refLines = md.split('\n').filter((l) => /^(\d+\.|-) \[/.test(l));
    expect(refLines.length).toBe((json.body.references as unknown[]).length);
    // Each entry is exactly one link whose destination has no raw space, parenthesis, bracket or quote.
    for (const l of refLines) expect(l).toMatch(/^(?:\d+\.|-) \[(?:[^\]\\]|\\.)*\]\(https?:\/\/[^\s()<>"'[\]]+\)$/);

    const html = await request(h.app).get(`/v1/research/${id}/report?format=html`).set('x-tenant-id', tenant).expect(200);
    const doc = new JSDOM(html.text).window.document;
    const outside = [...doc.querySelectorAll('a')].map((a) => a.getAttribute('href') ?? '').filter((href) => !href.startsWith('#'));
    expect(outside.every((href) => href.startsWith(h.site.url))).toBe(true);
    expect(doc.querySelectorAll('b, strong, script')).toHaveLength(0);
  });
});
