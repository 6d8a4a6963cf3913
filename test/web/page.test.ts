// The web page in a real browser (Debian's chromium through playwright-core): ask a question, see
// the plan appear live, revise it, approve it, watch the steps finish, open a citation's source,
// download the PDF and the slides; reload mid-run and get the whole timeline; another tenant's key sees nothing;
// axe-core finds no serious accessibility problem.
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultReact, planJson, researchRules, stepTitleOf } from '../support/research-script';
import { readPptx } from '../support/pptx-reader';
import {
  DESKTOP,
  PHONE,
  seriousAxeProblems,
  startWebHarness,
  webReady,
  webState,
  type WebHarness,
  type WebPage,
} from '../support/web-page';

const ACME = 'acme-web-key-0123456789';
const GLOBEX = 'globex-web-key-0123456789';

describe.skipIf(!webReady)(`the web page (${webState})`, () => {
  let h: WebHarness;

  beforeAll(async () => {
    h = await startWebHarness({ API_KEYS: `${ACME}=acme,${GLOBEX}=globex` });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  /** The numbers of a run's events the timeline shows: all but the report's draft pieces (drawn as the draft). */
  const shownEvents = async (id: string) =>
    (
      await h.pool.query<{ seq: string }>("SELECT seq FROM run_events WHERE research_id = $1 AND type <> 'draft' ORDER BY seq", [id])
    ).rows.map((r) => Number(r.seq));

  /** The run the first test starts, opened again from another run's page by the second. */
  let solarRunId: string | undefined;

  /** A page with the tenant's key entered once, under the page's own CSP, loading nothing from anywhere but this server. */
  const signedIn = (key: string): Promise<WebPage> =>
    h.signedIn(key, { context: { bypassCSP: false, acceptDownloads: true }, onlyThisServer: true });

  it('asks, shows the plan live, revises, approves, reads the report with its sources, downloads the PDF and slides', async () => {
    // Set once signed in: the scripted reporter waits on what this page draws.
    const pageRef: { page?: WebPage } = {};
    // The report is held mid-stream until the page has drawn its draft once, twice, three times.
    const renders = async () => (await pageRef.page!.evaluate(() => (window as { drafts?: string[] }).drafts?.length)) ?? 0;
    const rendered = async (n: number) => {
      const end = Date.now() + 20_000;
      while ((await renders()) < n && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    };
    const markdown =
      '## Key points\n\n- Costs fell sharply [1].\n- Batteries too [2].\n\n## Overview\n\n' +
      Array.from({ length: 10 }, (_, i) => `Module prices fell again in ${2012 + i}, by a measured share [1].`).join(' ');
    h.llm.script(
      researchRules({
        planner: (_req, n) => ({ json: n === 0 ? planJson([{ id: 'a' }, { id: 'b' }]) : planJson([{ id: 'c' }]) }),
        reporter: {
          json: { title: 'Solar costs', markdown },
          beforeChunk: (c) => (c % 12 === 0 && c > 0 && c <= 36 ? rendered(c / 12) : undefined),
        },
      }),
    );
    const page = (pageRef.page = await signedIn(ACME));
    await page.getByLabel('Question', { exact: true }).fill('How much cheaper has solar power become?');
    await page.getByRole('radio', { name: 'quick' }).check();
    expect(await page.getByLabel('Steps in the plan (at most)').inputValue()).toBe('2');
    expect(await page.getByLabel('Report length').inputValue()).toBe('brief');
    await page.getByRole('button', { name: 'Start research' }).click();
    await page.getByRole('heading', { name: /Plan v1/ }).waitFor({ timeout: 30_000 });
    expect(page.url()).toMatch(/#\/run\/research-/);
    solarRunId = decodeURIComponent(page.url().split('#/run/')[1]!);
    await expect.poll(() => page.getByText('The plan waits for your review below.').count()).toBe(1);
    // The review says why, what each step will do, and what the plan rests on.
    const review = page.locator('section.review');
    expect(await review.locator('.plan-thought').textContent()).toBe('Why these steps: Find the figures, then compare them.');
    expect(await review.locator('.step-description').allTextContents()).toEqual(['Find facts for step a', 'Find facts for step b']);
    await review.getByText(/What the plan rests on: the background brief, \d+ sources?/).click();
    expect(await review.locator('.brief-text').textContent()).toMatch(/\[1\]/);
    expect(await review.locator('.brief-sources a').first().getAttribute('href')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);

    await page.getByLabel(/What should change\?/).fill('One step is enough');
    await page.getByRole('button', { name: 'Revise the plan' }).click();
    await page.getByRole('heading', { name: /Plan v2/ }).waitFor({ timeout: 30_000 });
    // The reviewer edits a step directly: the next version has it, without asking the planner.
    const planners = h.llm.requests.filter((r) => r.rule === 'planner').length;
    await page.getByRole('button', { name: 'Edit the steps' }).click();
    await page.getByLabel('What step c does').fill('Module prices in Germany since 2010, from the makers');
    await page.getByLabel('Title of step c').fill('German module prices');
    await page.getByRole('button', { name: 'Revise the plan (2 edits)' }).click();
    await page.getByRole('heading', { name: /Plan v3/ }).waitFor({ timeout: 30_000 });
    expect(await review.locator('.plan-steps li strong').allTextContents()).toEqual(['German module prices']);
    expect(await review.locator('.step-description').allTextContents()).toEqual(['Module prices in Germany since 2010, from the makers']);
    expect(h.llm.requests.filter((r) => r.rule === 'planner')).toHaveLength(planners);
    // Every different text the draft shows, from now on.
    await page.evaluate(() => {
      const w = window as { drafts?: string[] };
      w.drafts = [];
      new MutationObserver(() => {
        const draft = document.querySelector('article.draft');
        const text = draft?.querySelector(':scope > div')?.textContent ?? '';
        if (text && text !== w.drafts!.at(-1)?.split(' | ')[1]) w.drafts!.push(`${draft!.querySelector('.notice')!.textContent} | ${text}`);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByRole('button', { name: 'Approve and start' }).click();
    await page
      .getByText(/Step c completed/)
      .first()
      .waitFor({ timeout: 60_000 });
    await page.getByText('Check of step c (attempt 1): passed').waitFor();
    await page.getByRole('article', { name: 'Report' }).waitFor({ timeout: 30_000 });
    // The report appeared as it was written: three or more drafts, each longer, said to be a draft;
    // then the checked report took its place.
    const drafts = (await page.evaluate(() => (window as { drafts?: string[] }).drafts)) ?? [];
    const texts = drafts.map((d) => d.split(' | ')[1]!);
    expect(texts.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < texts.length; i++) expect(texts[i]!.length).toBeGreaterThan(texts[i - 1]!.length);
    expect(drafts[0]).toMatch(/^Draft, as the model writes it\. Citations are checked/);
    expect(await page.locator('article.draft').count()).toBe(0);
    // The claim check's figures: the scripted checker supports every claim. The scripted draft also
    // cites a search result the run never read: that citation is removed and counted on its own.
    expect(await page.locator('.grounding summary').textContent()).toMatch(
      /(\d+) of \1 citations checked against their sources: \1 supported, 0 flagged, 0 removed; 0 made-up links removed; 1 citation of a search snippet removed \(the page was not read\)$/,
    );

    const cite = page.getByRole('button', { name: 'Source 1' }).first();
    await cite.click();
    const source = page.getByRole('complementary');
    await source.getByRole('heading', { name: /^\[1\] / }).waitFor();
    expect(await source.getByRole('link').getAttribute('href')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/articles\//);
    expect(await source.locator('.evidence').textContent()).toMatch(/\w/);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'PDF' }).click()]);
    const pdf = readFileSync((await download.path())!);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    // The report opens with its executive summary; the slides download is a deck that does too.
    await page.getByRole('article', { name: 'Report' }).getByRole('heading', { name: 'Executive summary' }).waitFor();
    const [deck] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Slides' }).click()]);
    expect(deck.suggestedFilename()).toBe('report.pptx');
    const slides = (await readPptx(readFileSync((await deck.path())!))).slides.map((s) => s.title);
    expect(slides.slice(1, 3)).toEqual(['Executive summary', 'Key points']);
    expect(slides.at(-1)).toMatch(/^References/);
    expect(page.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('reloaded mid-run, shows the whole timeline once and in order; another tenant cannot open the run', async () => {
    let slow = 0;
    const react = (req: Parameters<typeof defaultReact>[0]) =>
      stepTitleOf(req) === 'Step b' && slow++ === 0 ? { ...defaultReact(req), delayMs: 3_000 } : defaultReact(req);
    h.llm.script(researchRules({ react }, planJson([{ id: 'a' }, { id: 'b' }])));
    const page = await signedIn(ACME);
    await page.getByLabel('Question', { exact: true }).fill('What happened to battery prices?');
    await page.getByText('Review, budget and language').click();
    await page.getByRole('checkbox', { name: /without waiting for my review/ }).check();
    await page.getByRole('button', { name: 'Start research' }).click();
    await page.getByText(/Phase: researching/).waitFor({ timeout: 30_000 });
    await page.reload();
    await page.getByText(/^.*Run completed$/).waitFor({ timeout: 60_000 });
    const ids = await page.locator('.timeline li').evaluateAll((lis) => lis.map((li) => Number(li.getAttribute('data-event-id'))));
    const id = decodeURIComponent(page.url().split('#/run/')[1]!);
    expect(ids).toEqual(await shownEvents(id));

    // Going straight from one run to another (a link, the address bar) shows only the other's events.
    // The first test's run: other test files share the database and ask the same question.
    expect(solarRunId, 'the first test started a run').toBeDefined();
    await page.evaluate((hash) => (location.hash = hash), `#/run/${encodeURIComponent(solarRunId!)}`);
    await page.getByRole('heading', { name: 'How much cheaper has solar power become?' }).waitFor({ timeout: 30_000 });
    await page.getByText(/^.*Run completed$/).waitFor({ timeout: 30_000 });
    const firstRun = await page.locator('.timeline li').evaluateAll((lis) => lis.map((li) => Number(li.getAttribute('data-event-id'))));
    expect(firstRun).toEqual(await shownEvents(solarRunId!));
    expect(await page.getByText('Run started').count()).toBe(1);

    const other = await signedIn(GLOBEX);
    await other.goto(`${h.base}/#/run/${encodeURIComponent(id)}`);
    await other
      .getByText(
        'No such run, or not yours: a run belongs to the tenant of the key that started it, and this page uses a key of another tenant.',
      )
      .waitFor({ timeout: 15_000 });
    await other.getByRole('link', { name: 'Use another key' }).waitFor();
    await other.close();
    await page.close();
  }, 120_000);

  it('steers a running run from the page: guidance, a dropped step, wrap up', async () => {
    // Step a's first turn is held until the page has sent every steering, wrap-up included: the run
    // is mid-step whatever the machine's speed (a step racing the clicks finished first once).
    let steered!: () => void;
    const allSent = new Promise<void>((resolve) => (steered = resolve));
    let held = 0;
    const react = (req: Parameters<typeof defaultReact>[0]) =>
      stepTitleOf(req) === 'Step a' && held++ === 0 ? { ...defaultReact(req), until: allSent } : defaultReact(req);
    h.llm.script(researchRules({ react }, planJson([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }])));
    const made = await request(h.app)
      .post('/v1/collections')
      .set('Authorization', `Bearer ${ACME}`)
      .send({ name: 'Heat pump notes' })
      .expect(201);
    const page = await signedIn(ACME);
    await page.getByLabel('Question', { exact: true }).fill('What do heat pumps cost?');
    await page.getByText('Review, budget and language').click();
    await page.getByRole('checkbox', { name: /without waiting for my review/ }).check();
    await page.getByRole('button', { name: 'Start research' }).click();
    await page.getByRole('heading', { name: 'Steer this run' }).waitFor({ timeout: 30_000 });
    await page.getByText(/Phase: researching/).waitFor({ timeout: 30_000 });

    await page.getByLabel('Guidance for every later step').fill('Only prices in Germany.');
    await page.getByRole('button', { name: 'Send guidance' }).click();
    await page.getByText('Steered: Guidance from the user: "Only prices in Germany."').waitFor({ timeout: 15_000 });
    const guidedFrom = h.llm.requests.length;
    await page.getByLabel('A step not started yet, or a new one').fill('b');
    await page.getByRole('button', { name: 'Drop step' }).click();
    await page.getByText('Steered: The user dropped step b.').waitFor({ timeout: 15_000 });
    await page.getByRole('checkbox', { name: 'Heat pump notes' }).check();
    await page.getByRole('button', { name: 'Search these collections' }).click();
    await page.getByText(`Steered: The user asked the run to search collection ${made.body.id as string}.`).waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Wrap up now' }).click();
    await page
      .getByText('Steered: The user asked to wrap up: the report is written from what was found so far.')
      .waitFor({ timeout: 15_000 });
    steered();
    await page.getByText(/^.*Run completed$/).waitFor({ timeout: 60_000 });
    await page.getByRole('article', { name: 'Report' }).waitFor({ timeout: 30_000 });
    expect(await page.getByText('Step b skipped: skipped: dropped by the user').count()).toBeGreaterThan(0);
    const later = h.llm.requests.slice(guidedFrom);
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((r) => String(r.body.messages[0]?.content).includes('Only prices in Germany.'))).toBe(true);
    expect(page.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('has no serious accessibility problems (axe-core), at desktop and phone width', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      // The page's CSP bypassed (the default): axe is injected as an inline script, which it would (rightly) refuse.
      const page = await h.signedIn(ACME, { context: { viewport } });
      await page.getByRole('heading', { name: 'Your runs' }).waitFor();
      await page.getByRole('link').nth(1).waitFor();
      for (const route of ['', (await page.locator('.runs a').first().getAttribute('href'))!]) {
        if (route) {
          await page.goto(`${h.base}/${route}`);
          await page.getByRole('heading', { name: 'Timeline' }).waitFor();
          await page.waitForTimeout(1_000);
        }
        const serious = await seriousAxeProblems(page);
        expect({ viewport: viewport.width, route, serious }).toEqual({ viewport: viewport.width, route, serious: [] });
      }
      await page.context().close();
    }
  }, 60_000);

  it('serves the page with a strict CSP and links nothing from elsewhere', async () => {
    const res = await fetch(h.base);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'; style-src 'self'/);
    expect(await res.text()).not.toMatch(/https?:\/\//);
    const js = await fetch(`${h.base}/app.js`);
    expect(js.headers.get('content-type')).toMatch(/^application\/javascript/);
    // The tab's icon is the page's own: no request of the page ends in a 404 (browsers ask for
    // /favicon.ico when a page names no icon).
    const icon = await fetch(`${h.base}/favicon.svg`);
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml; charset=utf-8']);
    const page = await h.signedIn(ACME);
    const missing: string[] = [];
    page.on('response', (r) => void (r.status() === 404 && missing.push(r.url())));
    await page.goto(h.base);
    await page.getByRole('heading', { name: 'Your runs' }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(missing).toEqual([]);
    await page.close();
  });
});
