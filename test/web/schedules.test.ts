// The schedules screen in a real browser against the live harness on a real Temporal server
// (Schedules: see scripts/run-tests.mjs): a schedule made with a note and the alert "only when
// something changed" runs now three times over a web that changes before the third: the first run
// has no comparison, the later ones their "What changed since", the third the "changed" badge naming
// what changed and the first two none; pause and resume; axe-core on the screen.
import type { Locator } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bySchema } from '../support/llm-server';
import { planJson, researchRules, searchResults, userText } from '../support/research-script';
import { noSeriousAxeProblems, shot, startWebHarness, webReady, webState, type WebHarness } from '../support/web-page';

const ACME = 'acme-schedules-key-0123456789';
const NEW_PAGE = '/articles/module-prices-2025.html';
const NEW_TITLE = 'Module prices in 2025';

describe.skipIf(!webReady)(`the schedules screen (${webState})`, () => {
  let h: WebHarness;

  beforeAll(async () => {
    h = await startWebHarness({ API_KEYS: `${ACME}=acme`, SCHEDULE_MIN_INTERVAL: '1s' });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  /** Opens a run's "What changed" and waits for its comparison with the report before. */
  async function whatChangedSince(run: Locator): Promise<void> {
    await run.getByText('What changed').click();
    await run
      .locator('.changes')
      .getByText(/^What changed since/)
      .waitFor({ timeout: 15_000 });
  }

  it('schedules: creates one with a note and the alert "on change", runs it three times over a web that changes before the third: "What changed since" on each later run, the badge on the third only; pauses and resumes', async () => {
    const newUrl = `${h.site.url}${NEW_PAGE}`;
    h.site.route(NEW_PAGE, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<html><head><title>${NEW_TITLE}</title></head><body><article><h1>${NEW_TITLE}</h1><p>Modules cost 0.11 USD/W in 2025.</p></article></body></html>`,
      );
    });
    h.llm.script([
      // Other tests give this tenant collections: none is about this question.
      {
        name: 'router',
        match: bySchema('KnowledgeChoice'),
        reply: { json: { collectionIds: [], reason: 'No collection is about this.' } },
      },
      {
        name: 'extract-new-page',
        match: (r) => bySchema('PageExtract')(r) && userText(r).includes(NEW_PAGE),
        reply: { json: { relevant: true, evidence: 'Modules cost 0.11 USD/W in 2025.', summary: 'Modules got cheaper.' } },
      },
      ...researchRules({}, planJson([{ id: 'a' }])),
    ]);
    const page = await h.signedIn(ACME);
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('heading', { name: 'Research that repeats' }).waitFor();
    const question = 'Have module prices changed since the last check?';
    await page.getByRole('textbox', { name: 'Question', exact: true }).fill(question);
    // When the first run comes is said where the interval is set.
    await page.getByText(/An interval counts from midnight UTC: .* The first run comes at the next such time/).waitFor();
    await page.getByLabel('Interval').fill('30d');
    await page.getByLabel('Note').fill('weekly check');
    await page.getByLabel('Alert').selectOption('on_change');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const item = page.getByRole('article', { name: question });
    await item.getByText(/every 30d · active/).waitFor({ timeout: 15_000 });
    await item.getByText(/alerts only on a change/).waitFor({ timeout: 15_000 });
    await item.getByText('weekly check').waitFor();
    await noSeriousAxeProblems(page, 'schedules');

    const runs = item.getByRole('list', { name: 'Recent runs' }).getByRole('listitem');
    for (const n of [1, 2, 3]) {
      // Before the third run the web changes: a new page leads the search results.
      if (n === 3)
        h.search.setFallback((q) => [
          { url: newUrl, title: NEW_TITLE, content: 'Facts for step a. Modules cost 0.11 USD/W in 2025.' },
          ...searchResults(h.site.url)(q),
        ]);
      await item.getByRole('button', { name: 'Run now' }).click();
      await expect.poll(() => runs.count(), { timeout: 30_000 }).toBe(n);
      // Finished when the run is no longer listed as running.
      await runs
        .first()
        .getByText('What changed')
        .waitFor({ timeout: 90_000 })
        .catch(async (err: Error) => {
          const list = await request(h.app).get('/v1/schedules').set('Authorization', `Bearer ${ACME}`);
          const one = list.body.schedules.find((x: { question: string }) => x.question === question);
          const detail = await request(h.app)
            .get(`/v1/schedules/${one?.id as string}`)
            .set('Authorization', `Bearer ${ACME}`);
          const runId = detail.body.recentRuns?.at(-1)?.id as string;
          const run = await request(h.app).get(`/v1/research/${runId}`).set('Authorization', `Bearer ${ACME}`);
          throw new Error(`${err.message}\nschedule: ${JSON.stringify(detail.body)}\nrun: ${JSON.stringify(run.body).slice(0, 800)}`);
        });
    }
    // The newest run (listed first) changed; the page refreshes the schedule every 5 seconds.
    const badge = runs.first().locator('.change-note');
    await badge.waitFor({ timeout: 15_000 });
    expect(await badge.innerText()).toMatch(/changed\s*1 new source: Module prices in 2025/);
    expect(await runs.nth(1).locator('.badge.changed').count()).toBe(0);
    expect(await runs.nth(2).locator('.badge.changed').count()).toBe(0);
    // Opened oldest first: an opened section moves the runs under it, not those above.
    await runs.nth(2).getByText('What changed').click();
    await runs.nth(2).getByText('No comparison: the first report, or no report yet.').waitFor();
    await whatChangedSince(runs.nth(1));
    await whatChangedSince(runs.first());
    await noSeriousAxeProblems(page, 'schedules with a change');
    // The docs' picture of the screen: the schedule, the newest run with its badge.
    await shot(page, 'schedules');

    await item.getByRole('button', { name: 'Pause' }).click();
    await item.getByText(/· paused/).waitFor();
    await item.getByRole('button', { name: 'Resume' }).click();
    await item.getByText(/· active/).waitFor();
    expect(page.errors).toEqual([]);
    await page.context().close();
  }, 300_000);
});
