// Headless Chromium for pages whose text is rendered by JavaScript. One browser per worker,
// launched at the first page and reused; a fresh context (no cookies, storage or cache of another
// page) per page. Chromium's own network is off: every request of the page is intercepted and
// made by browser-net.ts through the SSRF guard, and what is not intercepted (WebSockets, a
// redirect Chromium would follow by itself) goes to a proxy that does not exist and fails.
// Images, media and fonts are not loaded; downloads, service workers and permissions are refused.
import { accessSync, constants as fsConstants } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { SkippedError } from './safe-fetch';
import { BlockedError, type GuardPolicy } from './ssrf';
import { ByteCapError, createPageNetwork, type ByteBudget, type PageNetwork } from './browser-net';

export interface RenderLimits extends GuardPolicy {
  executablePath: string;
  timeoutMs: number;
  maxBytes: number;
  connectTimeoutMs: number;
  userAgent: string;
}

export interface RenderOptions {
  signal?: AbortSignal;
  /** A reason to refuse a URL besides the guard's (a domain the user banned), or undefined. */
  refuse?: (url: URL) => string | undefined;
}

export interface RenderedPage {
  finalUrl: string;
  html: string;
  /** Response bytes of the page's requests, all together. */
  bytes: number;
  /** Requests refused (guard, ban, byte cap): how many, and the first few with their reason. */
  blockedCount: number;
  blocked: string[];
  /** The time limit ended the wait for the page to settle; the text is what was there then. */
  timedOut: boolean;
}

/** Blocked requests listed by URL in a result; the rest are only counted. */
const BLOCKED_LISTED = 5;
/** Resource types never loaded: text does not live in them. */
const NOT_LOADED = new Set(['image', 'media', 'font']);
const MAX_NAVIGATION_REDIRECTS = 5;

/**
 * Chromium's network off: requests not fulfilled by the interceptor go to a proxy whose name
 * resolves nowhere (loopback included: `<-loopback>` drops Chromium's implicit bypass), and WebRTC
 * may not send UDP around it. The interceptor's fulfilled responses never touch the network.
 */
const CHROMIUM_ARGS = [
  '--proxy-server=http://network-off.invalid:9',
  '--proxy-bypass-list=<-loopback>',
  '--host-resolver-rules=MAP * ~NOTFOUND',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--dns-prefetch-disable',
  // The URL asked for is the one requested: no https:// attempt first for an http:// page.
  '--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable',
  '--disable-dev-shm-usage',
];

/** The Chromium executable: CHROMIUM_PATH, else `chromium` on PATH; undefined when there is none. */
export function findChromium(opts: { chromiumPath: string | undefined; searchPath: string }): string | undefined {
  const candidates = opts.chromiumPath
    ? [opts.chromiumPath]
    : opts.searchPath
        .split(path.delimiter)
        .filter(Boolean)
        .flatMap((dir) => ['chromium', 'chromium-browser'].map((name) => path.join(dir, name)));
  return candidates.find((file) => {
    try {
      accessSync(file, fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** What one page's render has seen so far; the interceptor writes it, render() reads it. */
interface PageState {
  page: Page | undefined;
  budget: ByteBudget;
  abort: AbortController;
  blockedCount: number;
  blocked: string[];
  overCap: string | undefined;
  /** The top frame was sent to an address the guard refuses. */
  topBlocked: string | undefined;
  /** The top frame's document could not be had (DNS, connection): rethrown as the page's failure. */
  topError: unknown;
  topStatus: number | undefined;
  redirectTo: URL | undefined;
}

export function createBrowserRenderer(limits: RenderLimits) {
  const network = createPageNetwork(limits, { connectTimeoutMs: limits.connectTimeoutMs, timeoutMs: limits.timeoutMs });
  let launched: Promise<Browser> | undefined;

  /** The worker's browser, launched once; launched again if it died. */
  async function browser(): Promise<Browser> {
    const current = launched;
    if (current) {
      const b = await current.catch(() => undefined);
      if (b?.isConnected()) return b;
      if (launched === current) launched = undefined;
    }
    // playwright-core (about 20 MB of heap once loaded) is loaded with the first page rendered: a
    // worker whose pages never need a browser never holds it.
    launched ??= import('playwright-core').then(({ chromium }) =>
      chromium.launch({ executablePath: limits.executablePath, args: CHROMIUM_ARGS, handleSIGINT: false, handleSIGTERM: false }),
    );
    return launched;
  }

  async function newContext(state: PageState, opts: RenderOptions): Promise<BrowserContext> {
    const context = await (
      await browser()
    ).newContext({
      acceptDownloads: false,
      serviceWorkers: 'block',
      javaScriptEnabled: true,
      permissions: [],
      userAgent: limits.userAgent,
    });
    const refuse = opts.refuse ?? (() => undefined);
    await context.route('**/*', (route) => intercept(network, state, refuse, route));
    return context;
  }

  /** The page rendered: its HTML after scripts ran, within the time and byte caps. */
  async function render(url: string, opts: RenderOptions = {}): Promise<RenderedPage> {
    const deadline = Date.now() + limits.timeoutMs;
    const remaining = () => Math.max(1, deadline - Date.now());
    const state = newPageState(limits.maxBytes);
    const onCancel = () => state.abort.abort();
    opts.signal?.addEventListener('abort', onCancel, { once: true });
    const context = await newContext(state, opts);
    try {
      const page = await context.newPage();
      state.page = page;
      page.on('websocket', (ws) => block(state, ws.url(), 'WebSocket connections are not made'));
      // A popup is another page the research did not ask for.
      page.on('popup', (p) => void p.close().catch(() => undefined));
      await navigate(page, state, url, { remaining, timeoutMs: limits.timeoutMs });
      const timedOut = await settle(page, remaining);
      if (state.overCap) throw new SkippedError(state.overCap);
      if (state.topBlocked) throw new BlockedError(`the page navigated to a blocked address: ${state.topBlocked}`);
      const html = await page.content().catch(async () => {
        await page.waitForLoadState('domcontentloaded', { timeout: remaining() }).catch(() => undefined);
        return page.content();
      });
      const { blockedCount, blocked } = state;
      return { finalUrl: page.url(), html, bytes: limits.maxBytes - state.budget.left, blockedCount, blocked, timedOut };
    } finally {
      opts.signal?.removeEventListener('abort', onCancel);
      state.abort.abort();
      await context.close().catch(() => undefined);
    }
  }

  async function close(): Promise<void> {
    const current = launched;
    launched = undefined;
    const b = await current?.catch(() => undefined);
    await b?.close().catch(() => undefined);
    await network.close();
  }

  return { render, close };
}
export type BrowserRenderer = ReturnType<typeof createBrowserRenderer>;

function newPageState(maxBytes: number): PageState {
  return {
    page: undefined,
    budget: { left: maxBytes, max: maxBytes },
    abort: new AbortController(),
    blockedCount: 0,
    blocked: [],
    overCap: undefined,
    topBlocked: undefined,
    topError: undefined,
    topStatus: undefined,
    redirectTo: undefined,
  };
}

function block(state: PageState, url: string, reason: string): void {
  state.blockedCount++;
  if (state.blocked.length < BLOCKED_LISTED) state.blocked.push(`${url.slice(0, 200)}: ${reason.slice(0, 200)}`);
}

/** One request of the page: not loaded, refused, or made by the guarded client and fulfilled. */
async function intercept(network: PageNetwork, state: PageState, refuse: (url: URL) => string | undefined, route: Route): Promise<void> {
  const req = route.request();
  if (NOT_LOADED.has(req.resourceType())) return route.abort('blockedbyclient').catch(() => undefined);
  const top = req.isNavigationRequest() && state.page !== undefined && req.frame() === state.page.mainFrame();
  if (state.overCap) {
    block(state, req.url(), state.overCap);
    return route.abort('blockedbyclient').catch(() => undefined);
  }
  try {
    const up = await network.forward(
      { url: req.url(), method: req.method(), headers: await req.allHeaders(), body: req.postDataBuffer() },
      { signal: state.abort.signal, budget: state.budget, followRedirects: !top, refuse },
    );
    if (up.redirectTo) {
      state.redirectTo = up.redirectTo;
      return await route.abort('aborted');
    }
    if (top) state.topStatus = up.status;
    await route.fulfill({ status: up.status, headers: up.headers, body: up.body });
  } catch (err) {
    if (err instanceof BlockedError || err instanceof ByteCapError) {
      block(state, req.url(), err.message);
      if (err instanceof ByteCapError) state.overCap = err.message;
      else if (top) state.topBlocked = err.message;
    } else if (top) state.topError = err;
    await route.abort(err instanceof BlockedError ? 'blockedbyclient' : 'failed').catch(() => undefined);
  }
}

/** Loads the top document, following its redirects one navigation at a time (each through the guard). */
async function navigate(page: Page, state: PageState, url: string, time: { remaining: () => number; timeoutMs: number }): Promise<void> {
  let target = url;
  for (let hop = 0; ; hop++) {
    state.redirectTo = undefined;
    try {
      await page.goto(target, { waitUntil: 'domcontentloaded', timeout: time.remaining() });
    } catch (err) {
      if (state.topBlocked) throw new BlockedError(state.topBlocked);
      if (state.overCap) throw new SkippedError(state.overCap);
      if (state.topError) throw state.topError;
      if (state.topStatus !== undefined && state.topStatus >= 400) break;
      if (!state.redirectTo) {
        if (state.abort.signal.aborted) throw err;
        if ((err as Error).name === 'TimeoutError') throw new SkippedError(`the page did not load within ${time.timeoutMs} ms`);
        throw err;
      }
    }
    // Set by the interceptor while goto ran.
    const next = state.redirectTo as URL | undefined;
    if (!next) break;
    if (hop >= MAX_NAVIGATION_REDIRECTS) throw new SkippedError(`more than ${MAX_NAVIGATION_REDIRECTS} redirects`);
    target = next.href;
  }
  if (state.topStatus !== undefined && state.topStatus >= 400) {
    throw Object.assign(new Error(`HTTP ${state.topStatus} from ${target}`), { status: state.topStatus });
  }
}

/** Waits for the scripts' requests to end (network idle), up to the time limit; true if it ran out. */
async function settle(page: Page, remaining: () => number): Promise<boolean> {
  try {
    await page.waitForLoadState('load', { timeout: remaining() });
    await page.waitForLoadState('networkidle', { timeout: remaining() });
    return false;
  } catch {
    return true;
  }
}
