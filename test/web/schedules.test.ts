// The schedules screen in a real browser against the live harness on a real Temporal server
// (Schedules: see scripts/run-tests.mjs): create one, run it now twice, the second report's "What
// changed since", pause and resume; axe-core on the screen. A schedule made with the alert "only
// when something changed" runs three times over a web that changes before the third: the third
// run has the "changed" badge naming what changed, the first two have none.
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bySchema } from '../support/llm-server';
import { planJson, researchRules, searchResults, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
const ready = Boolean(temporalAddress() && databaseUrl() && hasBrowser);
const ACME = 'acme-schedules-key-0123456789';
const NEW_PAGE = '/articles/module-prices-2025.html';
const NEW_TITLE = 'Module prices in 2025';

describe.skipIf(!ready)(`the schedules screen (${ready ? 'live' : hasBrowser ? missingReason() : `no browser at ${CHROMIUM}`})`, () => {
  let h: Harness;
  let server: http.Server;
  let base = '';
  let browser: Browser;
  const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

  beforeAll(async () => {
    h = await startHarness({ env: { API_KEYS: `${ACME}=acme`, SCHEDULE_MIN_INTERVAL: '1s' } });
    server = http.createServer(h.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    server?.close();
    await h?.close();
  });

  async function signedIn(key: string): Promise<Page & { errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const page = (await context.newPage()) as Page & { errors: string[] };
    page.errors = [];
    page.on('pageerror', (e) => page.errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && !/status of 40[149]/.test(m.text()) && page.errors.push(m.text()));
    await page.goto(base);
    await page.getByLabel('Key').fill(key);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.getByRole('heading', { name: 'Ask a research question' }).waitFor();
    return page;
  }

  /** axe-core finds nothing serious on the screen, at its width and at a phone's. */
  async function noSeriousAxeProblems(page: Page, screen: string): Promise<void> {
    const size = page.viewportSize()!;
    for (const viewport of [size, { width: 390, height: 844 }]) {
      await page.setViewportSize(viewport);
      await page.addScriptTag({ content: axe });
      const result = await page.evaluate(async () =>
        (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run(),
      );
      const serious = result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.nodes.length})`);
      expect({ screen, width: viewport.width, serious }).toEqual({ screen, width: viewport.width, serious: [] });
    }
    await page.setViewportSize(size);
  }

  it('schedules: creates one, runs it now twice, sees the second report say what changed; pauses and resumes', async () => {
    h.llm.script([
      // Other tests give this tenant collections: none is about this question.
      {
        name: 'router',
        match: bySchema('KnowledgeChoice'),
        reply: { json: { collectionIds: [], reason: 'No collection is about this.' } },
      },
      ...researchRules({}, planJson([{ id: 'a' }])),
    ]);
    const page = await signedIn(ACME);
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('heading', { name: 'Research that repeats' }).waitFor();
    await page.getByRole('textbox', { name: 'Question', exact: true }).fill('What do solar modules cost this week?');
    await page.getByLabel('Interval').fill('30d');
    await page.getByLabel('Note').fill('weekly check');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const item = page.getByRole('article', { name: 'What do solar modules cost this week?' });
    await item.getByText(/every 30d · active/).waitFor({ timeout: 15_000 });
    await noSeriousAxeProblems(page, 'schedules');

    const runs = item.getByRole('list', { name: 'Recent runs' }).getByRole('listitem');
    for (const n of [1, 2]) {
      await item.getByRole('button', { name: 'Run now' }).click();
      await expect.poll(() => runs.count(), { timeout: 30_000 }).toBe(n);
      // Finished when the run is no longer listed as running.
      await runs
        .first()
        .getByText('What changed')
        .waitFor({ timeout: 90_000 })
        .catch(async (err: Error) => {
          const list = await request(h.app).get('/v1/schedules').set('Authorization', `Bearer ${ACME}`);
          const id = list.body.schedules[0].id as string;
          const one = await request(h.app).get(`/v1/schedules/${id}`).set('Authorization', `Bearer ${ACME}`);
          const runId = one.body.recentRuns.at(-1)?.id as string;
          const run = await request(h.app).get(`/v1/research/${runId}`).set('Authorization', `Bearer ${ACME}`);
          throw new Error(`${err.message}\nschedule: ${JSON.stringify(one.body)}\nrun: ${JSON.stringify(run.body).slice(0, 800)}`);
        });
    }
    await runs.first().getByText('What changed').click();
    await runs
      .first()
      .locator('.changes')
      .getByText(/^What changed since/)
      .waitFor({ timeout: 15_000 });
    await runs.nth(1).getByText('What changed').click();
    await runs.nth(1).getByText('No comparison: the first report, or no report yet.').waitFor();

    await item.getByRole('button', { name: 'Pause' }).click();
    await item.getByText(/· paused/).waitFor();
    await item.getByRole('button', { name: 'Resume' }).click();
    await item.getByText(/· active/).waitFor();
    expect(page.errors).toEqual([]);
    await page.context().close();
  }, 240_000);

  it('schedules: an on_change schedule shows a "changed" badge on the run whose report found a change, and none on the others', async () => {
    const newUrl = `${h.site.url}${NEW_PAGE}`;
    h.site.route(NEW_PAGE, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<html><head><title>${NEW_TITLE}</title></head><body><article><h1>${NEW_TITLE}</h1><p>Modules cost 0.11 USD/W in 2025.</p></article></body></html>`,
      );
    });
    h.llm.script([
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
    const page = await signedIn(ACME);
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('heading', { name: 'Research that repeats' }).waitFor();
    const question = 'Have module prices changed since the last check?';
    await page.getByRole('textbox', { name: 'Question', exact: true }).fill(question);
    await page.getByLabel('Interval').fill('30d');
    await page.getByLabel('Alert').selectOption('on_change');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const item = page.getByRole('article', { name: question });
    await item.getByText(/alerts only on a change/).waitFor({ timeout: 15_000 });

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
      await runs.first().getByText('What changed').waitFor({ timeout: 90_000 });
    }
    // The newest run (listed first) changed; the page refreshes the schedule every 5 seconds.
    const badge = runs.first().locator('.change-note');
    await badge.waitFor({ timeout: 15_000 });
    expect(await badge.innerText()).toMatch(/changed\s*1 new source: Module prices in 2025/);
    expect(await runs.nth(1).locator('.badge.changed').count()).toBe(0);
    expect(await runs.nth(2).locator('.badge.changed').count()).toBe(0);
    await runs.first().getByText('What changed').click();
    await runs
      .first()
      .locator('.changes')
      .getByText(/^What changed since/)
      .waitFor({ timeout: 15_000 });
    await noSeriousAxeProblems(page, 'schedules with a change');
    // The docs' pictures of the screen: both schedules, the newest run with its badge.
    if (process.env.WEB_SCREENSHOTS === '1') {
      const docs = path.resolve(import.meta.dirname, '..', '..', 'docs');
      await page.screenshot({ path: path.join(docs, 'web-schedules-desktop.png'), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(docs, 'web-schedules-phone.png'), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    expect(page.errors).toEqual([]);
    await page.context().close();
  }, 240_000);
});
