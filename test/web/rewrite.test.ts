// The report's versions on the page, in a real browser (Debian's chromium through playwright-core)
// against the live harness: a finished run's report rewritten from the page (brief, German), the
// new version shown once written, switching back to the run's own; axe-core on the screen.
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest, Reply } from '../support/llm-server';
import { planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
const ready = Boolean(temporalAddress() && databaseUrl() && hasBrowser);
const KEY = 'rewrite-web-key-0123456789';

const bilingualReporter = (req: ChatRequest): Reply =>
  /report, in German/.test(String(req.messages[0]?.content ?? ''))
    ? {
        json: {
          title: 'Solarkosten im Überblick',
          markdown: '## Kernpunkte\n\n- Die Kosten sind stark gefallen [1].\n- Batterien auch [2].',
        },
      }
    : { json: { title: 'Solar costs', markdown: '## Key points\n\n- Costs fell sharply [1].\n- Batteries too [2].' } };

describe.skipIf(!ready)(
  `report versions on the page (${ready ? 'live' : hasBrowser ? missingReason() : `no browser at ${CHROMIUM}`})`,
  () => {
    let h: Harness;
    let server: http.Server;
    let base = '';
    let browser: Browser;
    const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

    beforeAll(async () => {
      h = await startHarness({ env: { API_KEYS: `${KEY}=rewrite-web` } });
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

    async function noSeriousAxeProblems(page: Page): Promise<void> {
      await page.addScriptTag({ content: axe });
      const result = await page.evaluate(async () =>
        (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run(),
      );
      const serious = result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.nodes.length})`);
      expect(serious).toEqual([]);
    }

    it('asks for a brief German version of a finished report, shows it, and switches back to the first', async () => {
      h.llm.script(researchRules({ reporter: bilingualReporter }, planJson([{ id: 'a' }])));
      const started = await request(h.app)
        .post('/v1/research')
        .set('Authorization', `Bearer ${KEY}`)
        .send({ question: 'How far did solar costs fall?', options: { autoAcceptPlan: true, memory: false } })
        .expect(202);
      const id = started.body.id as string;
      await h.client.workflow.getHandle(id).result();

      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => m.type() === 'error' && !/status of 40[149]/.test(m.text()) && errors.push(m.text()));
      await page.goto(base);
      await page.getByLabel('Key').fill(KEY);
      await page.getByRole('button', { name: 'Use this key' }).click();
      await page.getByRole('heading', { name: 'Ask a research question' }).waitFor();
      await page.evaluate((hash) => (location.hash = hash), `#/run/${encodeURIComponent(id)}`);
      const report = page.getByRole('article', { name: 'Report' });
      await report.waitFor({ timeout: 30_000 });
      await report.getByText('Costs fell sharply').first().waitFor();

      await page.getByRole('button', { name: 'Rewrite this report' }).click();
      const form = page.getByRole('form', { name: 'Rewrite the report' });
      await form.getByLabel('Length').selectOption('brief');
      await form.getByLabel(/Language/).fill('de');
      await noSeriousAxeProblems(page);
      await form.getByRole('button', { name: 'Write the new version' }).click();

      // Once written, the version can be chosen; the report shows it.
      const choice = page.getByLabel('Version');
      await choice.waitFor({ timeout: 30_000 });
      expect(await choice.locator('option').allTextContents()).toEqual(['1: the run’s report', '2: brief, de']);
      await choice.selectOption('2');
      await report.getByText('Die Kosten sind stark gefallen').first().waitFor();
      await report.getByRole('button', { name: 'Source 1' }).first().click();
      await page
        .getByRole('complementary')
        .getByRole('heading', { name: /^\[1\] / })
        .waitFor();
      await choice.selectOption('1');
      await report.getByText('Costs fell sharply').first().waitFor();
      expect(await report.getByText('Die Kosten').count()).toBe(0);
      expect(errors).toEqual([]);
      await context.close();
    }, 120_000);
  },
);
