// The report's versions on the page, in a real browser (Debian's chromium through playwright-core)
// against the live harness: a finished run's report rewritten from the page (brief, German), the
// new version shown once written, switching back to the run's own; axe-core on the screen.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest, Reply } from '../support/llm-server';
import { planJson, researchRules } from '../support/research-script';
import { seriousAxeProblems, shot, startWebHarness, webReady, webState, type WebHarness } from '../support/web-page';

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

describe.skipIf(!webReady)(`report versions on the page (${webState})`, () => {
  let h: WebHarness;

  beforeAll(async () => {
    h = await startWebHarness({ API_KEYS: `${KEY}=rewrite-web` });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('asks for a brief German version of a finished report, shows it, and switches back to the first', async () => {
    h.llm.script(researchRules({ reporter: bilingualReporter }, planJson([{ id: 'a' }])));
    const started = await request(h.app)
      .post('/v1/research')
      .set('Authorization', `Bearer ${KEY}`)
      .send({ question: 'How far did solar costs fall?', options: { autoAcceptPlan: true, memory: false } })
      .expect(202);
    const id = started.body.id as string;
    await h.client.workflow.getHandle(id).result();

    const page = await h.signedIn(KEY);
    await page.evaluate((hash) => (location.hash = hash), `#/run/${encodeURIComponent(id)}`);
    const report = page.getByRole('article', { name: 'Report' });
    await report.waitFor({ timeout: 30_000 });
    await report.getByText('Costs fell sharply').first().waitFor();

    await page.getByRole('button', { name: 'Rewrite this report' }).click();
    const form = page.getByRole('form', { name: 'Rewrite the report' });
    await form.getByLabel('Length').selectOption('brief');
    await form.getByLabel(/Language/).fill('de');
    expect(await seriousAxeProblems(page)).toEqual([]);
    await form.getByRole('button', { name: 'Write the new version' }).click();

    // Once written, the version can be chosen; the report shows it.
    const choice = page.getByLabel('Version');
    await choice.waitFor({ timeout: 30_000 });
    expect(await choice.locator('option').allTextContents()).toEqual(['1: the run’s report', '2: brief, de']);
    await choice.selectOption('2');
    await report.getByText('Die Kosten sind stark gefallen').first().waitFor();
    await shot(page, 'rewrite');
    await report.getByRole('button', { name: 'Source 1' }).first().click();
    await page
      .getByRole('complementary')
      .getByRole('heading', { name: /^\[1\] / })
      .waitFor();
    await choice.selectOption('1');
    await report.getByText('Costs fell sharply').first().waitFor();
    expect(await report.getByText('Die Kosten').count()).toBe(0);
    expect(page.errors).toEqual([]);
    await page.context().close();
  }, 120_000);
});
