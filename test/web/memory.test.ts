// The Memory screen in a real browser (Debian's chromium through playwright-core) against the live
// harness: the facts remembered about the page's key's user, each with the quote it came from; one
// corrected, one deleted (and gone from the API); another user's facts never shown; axe-core on it.
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/api/auth';
import { createStore } from '../../src/activities/store';
import type { LearnedFact } from '../../src/shared/memory';
import { mergeFacts } from '../../src/shared/memory';
import { newFactId } from '../../src/activities/store/memory';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
const ready = Boolean(temporalAddress() && databaseUrl() && hasBrowser);
const TENANT = `memory-page-${Date.now().toString(36)}`;
const KEY = 'memory-page-key-0123456789abcdef';
/** The default user of a key from API_KEYS: a prefix of its hash (src/api/auth.ts). */
const ME = `env-${hashKey(KEY).slice(0, 12)}`;

const fact = (text: string, category: LearnedFact['category'], quote: string, researchId = 'research-page-1'): LearnedFact => ({
  category,
  text,
  evidence: [{ researchId, kind: 'question', quote, at: '2026-11-01T09:00:00.000Z' }],
});

describe.skipIf(!ready)(`the memory screen (${ready ? 'live' : hasBrowser ? missingReason() : `no browser at ${CHROMIUM}`})`, () => {
  let h: Harness;
  let server: http.Server;
  let base = '';
  let browser: Browser;
  const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

  beforeAll(async () => {
    h = await startHarness({ env: { API_KEYS: `${KEY}=${TENANT}` } });
    server = http.createServer(h.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    server?.close();
    if (h) await createStore(h.pool).memory.purge(TENANT);
    await h?.close();
  });

  it("lists the key's user's facts with their quotes, corrects one and deletes another", async () => {
    const memory = createStore(h.pool).memory;
    const teach = (userId: string, learned: LearnedFact[]) =>
      memory.learn({ tenant: TENANT, userId }, (known) => mergeFacts(known, learned, new Date().toISOString(), newFactId));
    await teach(ME, [
      fact('The user is a hydrologist.', 'field', 'As a hydrologist'),
      fact('The user prefers peer-reviewed sources.', 'sources', 'I prefer peer-reviewed sources'),
    ]);
    await teach('someone-else', [fact('The user is a baker.', 'field', 'As a baker')]);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && !/status of 40[149]/.test(m.text()) && errors.push(m.text()));
    page.on('dialog', (d) => void d.accept());
    await page.goto(base);
    await page.getByLabel('Key').fill(KEY);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.getByRole('heading', { name: 'Ask a research question' }).waitFor();
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Memory' }).click();
    await page.getByRole('heading', { name: 'Memory' }).waitFor();

    const facts = page.locator('.facts > li');
    await facts.filter({ hasText: 'The user is a hydrologist.' }).waitFor();
    expect(await facts.count()).toBe(2);
    await page
      .getByRole('list', { name: 'Where “The user is a hydrologist.” comes from' })
      .getByText('“As a hydrologist” — your question')
      .waitFor();
    expect(await page.locator('main').textContent()).not.toContain('baker');

    for (const viewport of [
      { width: 1280, height: 900 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(viewport);
      await page.addScriptTag({ content: axe });
      const result = await page.evaluate(async () =>
        (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run(),
      );
      const serious = result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.nodes.length})`);
      expect({ width: viewport.width, serious }).toEqual({ width: viewport.width, serious: [] });
    }

    // Correct the field fact, then delete the sources fact.
    await page.getByRole('button', { name: 'Edit “The user is a hydrologist.”' }).click();
    await page.getByLabel('Fact', { exact: true }).fill('The user is a hydrogeologist.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Fact corrected.').waitFor();
    await facts.filter({ hasText: 'The user is a hydrogeologist.' }).waitFor();
    await page.getByRole('button', { name: 'Delete “The user prefers peer-reviewed sources.”' }).click();
    await page.getByRole('status').getByText('Fact deleted.').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.facts > li').length === 1);

    const stored = await request(h.app).get('/v1/memory').set('Authorization', `Bearer ${KEY}`).expect(200);
    expect(stored.body.userId).toBe(ME);
    expect(stored.body.facts.map((f: { text: string }) => f.text)).toEqual(['The user is a hydrogeologist.']);
    // The other user's fact is untouched.
    const other = await request(h.app)
      .get('/v1/memory')
      .query({ userId: 'someone-else' })
      .set('Authorization', `Bearer ${KEY}`)
      .expect(200);
    expect(other.body.facts.map((f: { text: string }) => f.text)).toEqual(['The user is a baker.']);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
