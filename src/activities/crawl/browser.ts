// Headless Chromium for pages whose text is rendered by JavaScript. This module runs inside a
// render host (render-host.ts), a process of its own that the worker can kill: one browser per
// host, launched at its first page and reused; a fresh context (no cookies, storage or cache of
// another page) per page. Chromium's own network is off: every request of the page is intercepted
// and made by browser-net.ts through the SSRF guard, and what is not intercepted (WebSockets, a
// redirect Chromium would follow by itself) goes to a proxy that does not exist and fails. Where
// the kernel allows it, Chromium runs in a network namespace of its own with no interface but a
// loopback that is down (browser-netns.ts): no packet of its own, UDP included, can leave. WebRTC
// is removed from every frame as well. Images, media and fonts are not loaded; downloads, service
// workers and permissions are refused; dialogs are dismissed.
import { accessSync, constants as fsConstants } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { SkippedError } from './safe-fetch';
import { BlockedError, type GuardPolicy } from './ssrf';
import { ByteCapError, createPageNetwork, type ByteBudget, type PageNetwork } from './browser-net';

export interface RenderLimits extends GuardPolicy {
  /** Chromium, or a wrapper that starts it in a network namespace of its own (browser-netns.ts). */
  executablePath: string;
  timeoutMs: number;
  maxBytes: number;
  /** Characters of rendered HTML taken from the page; a page with more is skipped. */
  maxHtmlChars: number;
  connectTimeoutMs: number;
  userAgent: string;
}

export interface RenderOptions {
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
/** Frames one page may attach; a page that opens more is skipped (they are memory, not text). */
export const MAX_FRAMES = 100;
/** Time given to take the page's text once the page's time limit is spent. */
const CONTENT_GRACE_MS = 5_000;

/**
 * Runs before any script of every document (main frame and frames). WebRTC's constructors are
 * removed, so a page cannot open a peer connection (UDP) around the interceptor; the network
 * namespace, where there is one, is what makes this hold for frames a script reaches before their
 * document exists. alert, confirm, prompt and print answer at once as a dismissed dialog would:
 * each would otherwise stop the page's script until it is dismissed (a storm of them holds the
 * page's load), and no person is there to read them.
 */
const PAGE_PRELUDE = `(() => {
  const fix = (name, value) => { try { Object.defineProperty(globalThis, name, { value, configurable: false, writable: false }); } catch {} };
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCIceCandidate', 'RTCSessionDescription', 'RTCRtpSender', 'RTCRtpReceiver', 'RTCRtpTransceiver']) fix(name, undefined);
  fix('alert', () => undefined);
  fix('confirm', () => false);
  fix('prompt', () => null);
  fix('print', () => undefined);
})();`;

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
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
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
  /** A bound the page passed (bytes, frames): the page is skipped with it. */
  overCap: string | undefined;
  frames: number;
  /** The page's renderer crashed (out of memory, a Chromium bug the page found). */
  crashed: string | undefined;
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
      chromium.launch({
        executablePath: limits.executablePath,
        args: CHROMIUM_ARGS,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      }),
    );
    return launched;
  }

  /**
   * The page rendered: its HTML after scripts ran, within the time, byte, frame and HTML caps.
   * The render host's caller bounds the whole of it again from outside (time and memory).
   */
  async function render(url: string, opts: RenderOptions = {}): Promise<RenderedPage> {
    const state = newPageState(limits.maxBytes);
    const context = await newContext(await browser(), limits, network, state, opts);
    // The page's time starts with its first request: Chromium's launch is not the page's doing.
    const deadline = Date.now() + limits.timeoutMs;
    const remaining = () => Math.max(1, deadline - Date.now());
    try {
      const page = await context.newPage();
      state.page = page;
      watch(page, state);
      // A popup is another page the research did not ask for; its requests are refused meanwhile.
      context.on('page', (p) => void (p === page ? undefined : p.close().catch(() => undefined)));
      await navigate(page, state, url, { remaining, timeoutMs: limits.timeoutMs });
      const timedOut = await settle(page, remaining, state.abort.signal);
      if (state.overCap) throw new SkippedError(state.overCap);
      if (state.crashed) throw new SkippedError(state.crashed);
      if (state.topBlocked) throw new BlockedError(`the page navigated to a blocked address: ${state.topBlocked}`);
      // A script that navigates as the text is taken destroys the context it was read in: once
      // more, from the document it went to.
      const read = pageHtml(page, limits.maxHtmlChars).catch(async () => {
        await page.waitForLoadState('domcontentloaded', { timeout: remaining() }).catch(() => undefined);
        return pageHtml(page, limits.maxHtmlChars);
      });
      const html = await within(
        read,
        Math.max(remaining(), CONTENT_GRACE_MS),
        // The most specific cause known by then: a page over a cap is often also the one that keeps the browser busy.
        () =>
          state.crashed ??
          state.overCap ??
          `the page's scripts kept the browser busy: its text could not be taken within ${limits.timeoutMs} ms`,
      );
      if (typeof html === 'number') throw new SkippedError(`the rendered page's HTML passed ${limits.maxHtmlChars} characters (${html})`);
      if (state.overCap) throw new SkippedError(state.overCap);
      const { blockedCount, blocked } = state;
      return { finalUrl: page.url(), html, bytes: limits.maxBytes - state.budget.left, blockedCount, blocked, timedOut };
    } finally {
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

/** A fresh context for one page: no state of another page, every request through the interceptor. */
async function newContext(
  browser: Browser,
  limits: RenderLimits,
  network: PageNetwork,
  state: PageState,
  opts: RenderOptions,
): Promise<BrowserContext> {
  const context = await browser.newContext({
    acceptDownloads: false,
    serviceWorkers: 'block',
    javaScriptEnabled: true,
    permissions: [],
    userAgent: limits.userAgent,
  });
  const refuse = opts.refuse ?? (() => undefined);
  await context.addInitScript({ content: PAGE_PRELUDE });
  // Nothing the page does may throw out of the handler: an error there is an unhandled rejection.
  await context.route('**/*', (route) =>
    intercept(network, state, refuse, route).catch((err: unknown) => {
      block(
        state,
        safely(() => route.request().url(), '(unknown)'),
        `not loaded: ${(err as Error).message}`,
      );
      return route.abort('failed').catch(() => undefined);
    }),
  );
  return context;
}

function newPageState(maxBytes: number): PageState {
  return {
    page: undefined,
    budget: { left: maxBytes, max: maxBytes },
    abort: new AbortController(),
    blockedCount: 0,
    blocked: [],
    overCap: undefined,
    frames: 0,
    crashed: undefined,
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

/** What the page does besides its requests: sockets, frames, dialogs, a crash. */
function watch(page: Page, state: PageState): void {
  page.on('websocket', (ws) => block(state, ws.url(), 'WebSocket connections are not made'));
  page.on('frameattached', () => {
    if (++state.frames > MAX_FRAMES) passCap(state, `the page opened more than ${MAX_FRAMES} frames`);
  });
  // alert(), confirm() and prompt() would wait for a person; beforeunload would hold a navigation.
  page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
  page.on('crash', () => {
    state.crashed = "the page crashed the browser's renderer (out of memory, or a fault the page set off)";
    state.abort.abort();
  });
}

/**
 * The page's HTML, or its length in characters when it is longer than the cap (the text is then
 * never copied out of the renderer). Read in the page; a page that tampers with the DOM's getters
 * can only change what it says about itself, and a string's length cannot lie.
 */
async function pageHtml(page: Page, maxChars: number): Promise<string | number> {
  const read = await page.evaluate((max) => {
    const root = document.documentElement as Element | null;
    const html: unknown = root ? root.outerHTML : '';
    if (typeof html !== 'string') return '';
    return html.length > max ? html.length : html;
  }, maxChars);
  return typeof read === 'number' || typeof read === 'string' ? read : '';
}

/** The promise's value, or a SkippedError with the reason after `ms`. */
async function within<T>(work: Promise<T>, ms: number, reason: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SkippedError(reason())), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined);
  }
}

function safely<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/** One request of the page: not loaded, refused, or made by the guarded client and fulfilled. */
async function intercept(network: PageNetwork, state: PageState, refuse: (url: URL) => string | undefined, route: Route): Promise<void> {
  const req = route.request();
  if (NOT_LOADED.has(req.resourceType())) return route.abort('blockedbyclient').catch(() => undefined);
  // A popup's navigation has no frame yet (Playwright throws for it): it is not the top frame.
  const top = req.isNavigationRequest() && state.page !== undefined && safely(() => req.frame(), undefined) === state.page.mainFrame();
  if (state.page !== undefined && req.isNavigationRequest() && safely(() => req.frame(), undefined) === undefined) {
    block(state, req.url(), 'popups are not opened');
    return route.abort('blockedbyclient').catch(() => undefined);
  }
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
      if (err instanceof ByteCapError) passCap(state, err.message);
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

/**
 * Waits for the scripts' requests to end (network idle), up to the time limit; true if it ran out.
 * Ends at once when the page is stopped (a cap passed, the renderer crashed).
 */
async function settle(page: Page, remaining: () => number, stop: AbortSignal): Promise<boolean> {
  const loaded = (async () => {
    await page.waitForLoadState('load', { timeout: remaining() });
    await page.waitForLoadState('networkidle', { timeout: remaining() });
  })().then(
    () => false,
    () => true,
  );
  const stopped = new Promise<boolean>((resolve) => {
    if (stop.aborted) resolve(false);
    stop.addEventListener('abort', () => resolve(false), { once: true });
  });
  return Promise.race([loaded, stopped]);
}

/** A cap passed: the page is skipped with the first cap's reason, and its loading stops now. */
function passCap(state: PageState, reason: string): void {
  state.overCap ??= reason;
  state.abort.abort();
}
