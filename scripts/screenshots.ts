// Pictures for docs/: `deep-research dev` on a scratch data directory with a scripted model, one
// run waiting for review and one completed; then, in headless Chromium, the Temporal UI (the run
// list filtered by the ResearchStatus search attribute, the waiting run's current details) and
// the web page at desktop and phone width. Needs Debian's `chromium`: `npm run docs:screens`.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { findTemporalCli } from '../src/infra/temporal-cli';
import { FixtureSite } from '../test/support/fixture-site';
import { ScriptedLlmServer } from '../test/support/llm-server';
import { planJson, researchRules, searchResults } from '../test/support/research-script';
import { FakeSearxng } from '../test/support/search-server';
import { freePort, spawnCli } from '../test/support/spawn';

const DOCS = path.resolve(import.meta.dirname, '..', 'docs');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const llm = await new ScriptedLlmServer().start();
const site = await new FixtureSite().start();
const search = await new FakeSearxng({}, searchResults(site.url)).start();
llm.script(
  researchRules({}, planJson([{ id: 'costs' }, { id: 'modules' }, { id: 'calc', type: 'processing', dependsOn: ['costs', 'modules'] }])),
);
const [temporalPort, uiPort, apiPort, pglitePort] = [await freePort(), await freePort(), await freePort(), await freePort()];
const cli = findTemporalCli({ envPath: process.env.PATH, install: true });
const dev = spawnCli(['dev'], {
  DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dr-ui-')),
  ...(cli ? { TEMPORAL_CLI_PATH: cli.path } : {}),
  TEMPORAL_PORT: String(temporalPort),
  TEMPORAL_UI_PORT: String(uiPort),
  API_PORT: String(apiPort),
  PGLITE_PORT: String(pglitePort),
  OPENAI_BASE_URL: llm.url,
  OPENAI_API_KEY: 'sk-docs',
  SEARCH_PROVIDERS: 'searxng',
  SEARXNG_URL: search.url,
  CRAWL_ALLOW_HOSTS: new URL(site.url).host,
  LOG_LEVEL: 'warn',
});
try {
  await dev.waitFor(/deep-research is running/, 120_000);
  const api = `http://127.0.0.1:${apiPort}`;
  const submit = async (question: string, options: Record<string, unknown>) => {
    const r = await fetch(`${api}/v1/research`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question, options }),
    });
    return ((await r.json()) as { id: string }).id;
  };
  const status = async (id: string) => (await (await fetch(`${api}/v1/research/${id}`)).json()) as { status: string; phase: string };
  const until = async (id: string, ok: (s: { status: string; phase: string }) => boolean) => {
    for (const end = Date.now() + 60_000; !ok(await status(id));) {
      if (Date.now() > end) throw new Error(`run ${id} never got there: ${JSON.stringify(await status(id))}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  };
  const done = await submit('How much cheaper has wind power become since 2010?', { autoAcceptPlan: true });
  await until(done, (s) => s.status === 'completed');
  const waiting = await submit('How much cheaper has solar power become since 2010?', {});
  await until(waiting, (s) => s.phase === 'reviewing');
  await new Promise((r) => setTimeout(r, 1_500)); // visibility catches up

  const ui = `http://127.0.0.1:${uiPort}/namespaces/default`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
    await page.goto(`${ui}/workflows?query=${encodeURIComponent('ResearchStatus="awaiting_review"')}`);
    await page.getByText(waiting).first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(1_000);
    await page.screenshot({ path: path.join(DOCS, 'temporal-ui-list.png') });
    await page.goto(`${ui}/workflows/${encodeURIComponent(waiting)}`);
    await page.getByText('User Metadata').first().click({ timeout: 30_000 });
    await page.getByText('Current Details').first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(2_500); // the details are rendered after the section
    await page.screenshot({ path: path.join(DOCS, 'temporal-ui-run.png') });
    console.log('wrote docs/temporal-ui-list.png and docs/temporal-ui-run.png');

    // The web page, at desktop and phone width: ask and runs, a plan under review, a report with
    // a source open.
    for (const [name, viewport] of [
      ['desktop', { width: 1280, height: 900 }],
      ['phone', { width: 390, height: 844 }],
    ] as const) {
      const web = await browser.newPage({ viewport });
      await web.goto(api);
      await web.getByRole('heading', { name: 'Your runs' }).waitFor();
      await web.getByRole('link', { name: /wind power/ }).waitFor();
      await web.screenshot({ path: path.join(DOCS, `web-home-${name}.png`), fullPage: true });
      await web.goto(`${api}/#/run/${encodeURIComponent(waiting)}`);
      await web.getByRole('button', { name: 'Approve and start' }).waitFor();
      await web.waitForTimeout(500);
      await web.screenshot({ path: path.join(DOCS, `web-review-${name}.png`), fullPage: true });
      await web.goto(`${api}/#/run/${encodeURIComponent(done)}`);
      await web.getByRole('button', { name: 'Source 1' }).first().click();
      await web.getByRole('complementary').waitFor();
      await web.waitForTimeout(500);
      await web.screenshot({ path: path.join(DOCS, `web-report-${name}.png`), fullPage: true });
      await web.close();
    }
    console.log('wrote docs/web-{home,review,report}-{desktop,phone}.png');
  } finally {
    await browser.close();
  }
} finally {
  dev.child.kill('SIGINT');
  await dev.exited(60_000).catch(() => dev.child.kill('SIGKILL'));
  await llm.close();
  await search.close();
  await site.close();
}
