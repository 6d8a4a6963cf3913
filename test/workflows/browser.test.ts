// A researcher's crawl of a page whose text JavaScript renders: read through the browser queue by
// a worker with Chromium; on a deployment without one, skipped after the wait, saying why.
import { existsSync } from 'node:fs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepOutput } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { recordHistories } from '../support/record-history';
import { researchRules, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { runResearcherStep } from '../support/researcher-step';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
const ready = Boolean(temporalAddress() && databaseUrl() && hasBrowser);

const step = {
  id: 'wind',
  title: 'Offshore wind capacity',
  description: 'Find how much offshore wind capacity is installed',
  type: 'research' as const,
  needSearch: true,
  dependsOn: [],
};

/** One researcher step that crawls the JavaScript-rendered fixture page (and any others given), then answers. */
async function crawlJsPage(h: Harness, before: string[] = []): Promise<{ id: string; out: StepOutput; toolMessage: string }> {
  const url = `${h.site.url}/apps/wind-report.html`;
  const urls = [...before.map((p) => `${h.site.url}${p}`), url];
  const react = (req: ChatRequest): Reply =>
    req.messages.some((m) => m.role === 'tool')
      ? { content: 'Read the report.' }
      : { toolCalls: [{ name: 'crawl', arguments: { urls, goal: 'offshore wind capacity' } }] };
  const extractor = (req: ChatRequest): Reply => {
    const figure = /(\d[\d.,]* GW)/.exec(userText(req))?.[1] ?? 'nothing';
    return { json: { relevant: figure !== 'nothing', evidence: `The page states ${figure}.`, summary: `Reports ${figure}.` } };
  };
  h.llm.script(researchRules({ react, extractor }));
  // The run's retry settings from the worker's config, as the API gives them to a run (BROWSER_WAIT among them).
  const { id, out } = await runResearcherStep(h, {
    question: 'How much offshore wind capacity is there?',
    step,
    maxToolRounds: 4,
    retry: h.config.retry,
  });
  const toolMessage = h.llm.requests
    .filter((r) => r.rule === 'react')
    .flatMap((r) => r.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content)))
    .filter((m) => m.includes('wind-report') || before.some((p) => m.includes(p)))
    .join('\n');
  return { id, out, toolMessage };
}

describe.skipIf(!ready)(
  `pages that need a browser, in a run (${ready ? 'live' : hasBrowser ? missingReason() : `no browser at ${CHROMIUM}`})`,
  () => {
    describe('with a browser worker', () => {
      let h: Harness;
      beforeAll(async () => {
        h = await startHarness({
          env: { RESEARCHER_PYTHON: 'false', BROWSER: 'true', CHROMIUM_PATH: CHROMIUM, BROWSER_TIMEOUT_MS: '5000' },
        });
        const hostile = (script: string) => (_req: unknown, res: import('node:http').ServerResponse) =>
          void res
            .writeHead(200, { 'content-type': 'text/html' })
            .end(
              `<!doctype html><html><head><title>Hostile</title></head><body><div id="root"></div><script>document.getElementById('root').textContent = 'Offshore wind reached 75 GW in this fixture. '.repeat(20);</script><script>${script}</script></body></html>`,
            );
        h.site
          .route('/hostile/popup.html', hostile(`window.open('/apps/wind-report.html'); window.open('http://10.0.0.1/');`))
          .route('/hostile/spin.html', hostile(`addEventListener('load', () => { for (;;) {} });`));
      });
      afterAll(async () => h?.close());

      it("reads the page's rendered text through the browser queue", async () => {
        const { id, out, toolMessage } = await crawlJsPage(h);
        expect(toolMessage).toMatch(/\[S[0-9a-f]{8}\] Offshore wind capacity keeps growing/);
        const source = await h.pool.query("SELECT content FROM sources WHERE research_id = $1 AND provider = 'crawl'", [id]);
        expect(source.rows.map((r) => r.content)).toContainEqual(expect.stringMatching(/The page states 75 GW\./));
        expect(out.sourceIds.length).toBeGreaterThan(0);
        const history = await h.client.workflow.getHandle(id).fetchHistory();
        const scheduled = history.events!.flatMap((e) => {
          const a = e.activityTaskScheduledEventAttributes;
          return a ? [`${a.activityType!.name} on ${a.taskQueue!.name}`] : [];
        });
        // Read once (thin) inside the turn that asked for it (the tools-in-turn patch), rendered on
        // the browser queue, read again for the goal from the saved page.
        expect(scheduled.filter((s) => /^(crawlPage|renderPage) /.test(s))).toEqual([
          `renderPage on ${h.taskQueue}-browser`,
          `crawlPage on ${h.taskQueue}-llm`,
        ]);
        expect(h.site.hits).toContain('/apps/wind-report.json');
        // With BROWSER_WAIT unset, a page waits the default minute for a worker with a browser.
        const waits = history.events!.flatMap((e) => {
          const a = e.activityTaskScheduledEventAttributes;
          return a?.activityType?.name === 'renderPage' ? [Number(a.scheduleToStartTimeout!.seconds)] : [];
        });
        expect(waits).toEqual([60]);
        // The first history with the browser-render patch (src/workflows/tools.ts; recorded before
        // the tools-in-turn patch, when the first read was an activity of its own).
        recordHistories([[id, 'researcher-browser.json']]);
      }, 60_000);

      it('hostile pages in a run: the popup opener is read with its popups refused, the spinning page skipped once with its reason, the next page rendered', async () => {
        const { id, out, toolMessage } = await crawlJsPage(h, ['/hostile/popup.html', '/hostile/spin.html']);
        expect(toolMessage).toMatch(/\[S[0-9a-f]{8}\] Hostile/);
        expect(toolMessage).toMatch(
          /hostile\/spin\.html: skipped \((the page's scripts kept the browser busy|the page was still rendering)/,
        );
        expect(toolMessage).toMatch(/\[S[0-9a-f]{8}\] Offshore wind capacity keeps growing/);
        expect(out.key).toBe('step/wind/1');
        // Each page was rendered once: a skip is an answer, not a failure to retry.
        const history = await h.client.workflow.getHandle(id).fetchHistory();
        const renders = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'renderPage');
        expect(renders).toHaveLength(3);
        const attempts = history.events!.flatMap((e) =>
          e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : [],
        );
        expect(attempts.every((a) => a === 1)).toBe(true);
        // The API in the same process as the worker still answers.
        await request(h.app).get('/healthz').expect(200);
      }, 120_000);
    });

    describe('with no browser worker anywhere', () => {
      let h: Harness;
      beforeAll(async () => {
        // A test-sized wait for a browser (unset, a run waits 1 minute: the proxies' default).
        h = await startHarness({ env: { RESEARCHER_PYTHON: 'false', BROWSER: 'false', BROWSER_WAIT: '3s' } });
      });
      afterAll(async () => h?.close());

      it('skips the page after the wait for a browser, saying why, and the step goes on', async () => {
        const started = Date.now();
        const { id, out, toolMessage } = await crawlJsPage(h);
        expect(toolMessage).toMatch(
          /wind-report\.html: skipped \(the page renders its text with JavaScript, and no worker with a browser took it within 3s\)/,
        );
        expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
        // The render waited on the browser queue, with the configured wait, and was not retried.
        const history = await h.client.workflow.getHandle(id).fetchHistory();
        const renders = history.events!.flatMap((e) => {
          const a = e.activityTaskScheduledEventAttributes;
          return a?.activityType?.name === 'renderPage' ? [a] : [];
        });
        expect(renders.map((a) => [a.taskQueue!.name, Number(a.scheduleToStartTimeout!.seconds)])).toEqual([[`${h.taskQueue}-browser`, 3]]);
        expect(out.key).toBe('step/wind/1');
        expect(h.site.hits).not.toContain('/apps/wind-report.json');
      }, 150_000);
    });
  },
);
