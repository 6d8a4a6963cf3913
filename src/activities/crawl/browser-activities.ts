// The browser queue's activity: a page whose server HTML was too thin (browser-rule.ts) rendered
// in headless Chromium, made readable like any page (extract.ts) and saved in the run's page
// cache. It does not read the page for the goal: the workflow then calls crawlPage again on the
// rate-limited model queue, which finds the saved page and extracts from it as from any other.
import { Context } from '@temporalio/activity';
import type { Config } from '../../config';
import { metrics } from '../../infra/metrics';
import { bannedDomainOf } from '../../shared/domains';
import { summarize } from '../../shared/plain';
import { normalizeUrl } from '../../infra/search/types';
import type { Store } from '../store';
import { findChromium, type RenderedPage } from './browser';
import { namespacedChromium } from './browser-netns';
import { proseOf } from './browser-rule';
import { createRenderPool, type RenderPool } from './render-pool';
import { fetchFailure, pageUrlHash, type CrawlResult } from '.';
import { toReadable } from './extract';
import { WEB_PORTS } from './ssrf';

type BrowserDeps = { config: Pick<Config, 'crawl' | 'browser'>; store: Store };
export type RenderInput = { researchId: string; url: string };

/** How often a render in progress tells Temporal it is alive (the activity's heartbeat timeout is 30 s). */
const HEARTBEAT_MS = 5_000;

/** The Chromium this worker renders with, or undefined when it has none (BROWSER=false, or auto and none found). */
export function browserExecutable(browser: Config['browser']): string | undefined {
  if (browser.mode === 'false') return undefined;
  const found = findChromium(browser);
  // BROWSER=true without a Chromium found: the launch names the path that failed.
  return found ?? (browser.mode === 'true' ? (browser.chromiumPath ?? 'chromium') : undefined);
}

export function createBrowserActivities(deps: BrowserDeps) {
  let pool: RenderPool | undefined;
  /** The render hosts, made at the first page: Chromium in a network namespace where one can be made. */
  const poolOf = (executable: string) => {
    if (pool) return pool;
    const netns = namespacedChromium(executable);
    if (!netns.wrapper) {
      Context.current().log.warn(
        'Chromium runs without a network namespace of its own: WebRTC is removed from its pages, but nothing at the network level stops a packet it sends by itself',
        { reason: netns.reason },
      );
    }
    pool = createRenderPool({
      host: {
        executablePath: netns.wrapper ?? executable,
        allowHosts: deps.config.crawl.allowHosts,
        allowedPorts: WEB_PORTS,
        timeoutMs: deps.config.browser.timeoutMs,
        maxBytes: deps.config.browser.maxBytes,
        maxHtmlChars: deps.config.crawl.maxBytes,
        connectTimeoutMs: deps.config.crawl.connectTimeoutMs,
        userAgent: deps.config.crawl.userAgent,
      },
      maxMemoryBytes: deps.config.browser.maxMemoryMb * 1024 * 1024,
    });
    return pool;
  };

  /** One page rendered and saved; counted by outcome. */
  async function renderPage(input: RenderInput): Promise<CrawlResult> {
    const executable = browserExecutable(deps.config.browser);
    // Only a worker with a browser polls this queue (src/worker.ts); this one was configured so.
    if (!executable) return { url: input.url, status: 'skipped', reason: 'no browser on this worker' };
    const result = await renderAndSave(deps, poolOf(executable), input);
    metrics.browserPages.inc({ status: result.status });
    return result;
  }

  return {
    renderPage,
    /** Not an activity: ends the worker's render hosts (and their browsers) when the worker stops. */
    closeBrowser: async () => pool?.close(),
  };
}

async function renderAndSave(deps: BrowserDeps, pool: RenderPool, input: RenderInput): Promise<CrawlResult> {
  const ctx = Context.current();
  const base = { url: input.url, rendered: true };
  let normalized: string;
  try {
    normalized = normalizeUrl(input.url);
  } catch {
    return { ...base, status: 'blocked', reason: 'not a valid URL' };
  }
  const banned = await deps.store.bans.of(input.researchId);
  const ban = bannedDomainOf(normalized, banned);
  if (ban) return { ...base, status: 'blocked', reason: `the user banned ${ban} from this research` };
  ctx.heartbeat({ stage: 'render' });
  // The pool ends every render by its deadline, so these heartbeats end with a render that is stuck.
  const beat = setInterval(() => ctx.heartbeat({ stage: 'render' }), HEARTBEAT_MS);
  let page: RenderedPage;
  try {
    page = await pool.render(input.url, { signal: ctx.cancellationSignal, banned });
  } catch (err) {
    return { ...fetchFailure(err, input.url, ctx.info.attempt), rendered: true };
  } finally {
    clearInterval(beat);
  }
  for (const blocked of page.blocked) metrics.browserBlockedRequests.inc({ reason: blockedKind(blocked) });
  if (page.blockedCount > page.blocked.length)
    metrics.browserBlockedRequests.inc({ reason: 'other' }, page.blockedCount - page.blocked.length);
  if (page.blockedCount)
    ctx.log.info('requests of a rendered page refused', { url: input.url, count: page.blockedCount, blocked: page.blocked });
  const blocked = { blockedRequests: page.blockedCount, ...(page.blocked.length ? { blocked: page.blocked } : {}) };
  ctx.heartbeat({ stage: 'extract', bytes: page.bytes });
  const { title, markdown, ...extra } = await toReadable(Buffer.from(page.html, 'utf8'), 'text/html', page.finalUrl);
  if (!proseOf(markdown)) {
    const reason = page.timedOut
      ? `no readable text within the browser's time limit (${deps.config.browser.timeoutMs} ms)`
      : 'no readable text on the page after rendering';
    return { ...base, ...blocked, status: 'skipped', reason };
  }
  const urlHash = pageUrlHash(normalized);
  await deps.store.savePage(input.researchId, {
    ...extra,
    urlHash,
    url: input.url,
    finalUrl: page.finalUrl,
    title,
    markdown,
    contentType: 'text/html',
  });
  return { ...base, ...blocked, status: 'ok', title: summarize(title || page.finalUrl, 120) };
}

/** A blocked request's kind, for the metric's label: the guard, a ban, the byte cap, a WebSocket. */
function blockedKind(entry: string): string {
  if (/banned/.test(entry)) return 'banned';
  if (/bytes/.test(entry)) return 'byte_cap';
  if (/WebSocket/.test(entry)) return 'websocket';
  return 'guard';
}
