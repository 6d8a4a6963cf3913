// What the browser tests (test/web/) share: the live harness served on 127.0.0.1 to Debian's
// chromium through playwright-core, pages signed in with a key as a person would, axe-core's check
// for serious accessibility problems, and the docs' screenshots (WEB_SCREENSHOTS=1).
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { startHarness, type Harness } from './harness';
import { databaseUrl, missingReason, temporalAddress } from './services';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);

/** Temporal, PostgreSQL and a browser are there: the browser tests run. */
export const webReady = Boolean(temporalAddress() && databaseUrl() && hasBrowser);
/** For a describe's title: 'live', or why its tests are skipped. */
export const webState = webReady ? 'live' : hasBrowser ? missingReason() : `no browser at ${CHROMIUM}`;

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** A page that keeps what went wrong in it: errors thrown, console errors, requests elsewhere if asked. */
export type WebPage = Page & { errors: string[] };

export interface SignInOptions {
  /** Over the defaults: a desktop viewport, the page's CSP bypassed so axe-core can be injected. */
  context?: BrowserContextOptions;
  /** A request to anywhere but this server (or a blob:) counts as an error. */
  onlyThisServer?: boolean;
}

export interface WebHarness extends Harness {
  /** Where the app is served: http://127.0.0.1:<port>. */
  base: string;
  browser: Browser;
  /** A page in a browser context of its own (closing either closes both) with the key entered once. */
  signedIn(key: string, options?: SignInOptions): Promise<WebPage>;
}

/** The harness with `env`, its app on a port of 127.0.0.1, and a browser; close() ends all three. */
export async function startWebHarness(env: Record<string, string>): Promise<WebHarness> {
  const h = await startHarness({ env });
  const server = http.createServer(h.app);
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    server.closeAllConnections();
    server.close();
    await h.close();
  };
  try {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const launched = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    browser = launched;
    return { ...h, base, browser: launched, signedIn: (key, options) => signIn(launched, base, key, options), close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function signIn(browser: Browser, base: string, key: string, options: SignInOptions = {}): Promise<WebPage> {
  const page = (await browser.newPage({ viewport: DESKTOP, bypassCSP: true, ...options.context })) as WebPage;
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  if (options.onlyThisServer)
    page.on('request', (r) => !r.url().startsWith(base) && !r.url().startsWith('blob:') && page.errors.push(`request to ${r.url()}`));
  page.on('console', (m) => m.type() === 'error' && !/status of 40[149]/.test(m.text()) && page.errors.push(m.text()));
  // Deleting asks to confirm: the person says yes.
  page.on('dialog', (d) => void d.accept());
  await page.goto(base);
  await page.getByLabel('Key').fill(key);
  await page.getByRole('button', { name: 'Use this key' }).click();
  await page.getByRole('heading', { name: 'Ask a research question' }).waitFor();
  return page;
}

let axeSource: string | undefined;

/** axe-core's serious and critical problems on the page as it is now, as `<rule> (<nodes>)`. */
export async function seriousAxeProblems(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.addScriptTag({ content: axeSource });
  const result = await page.evaluate(async () =>
    (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run(),
  );
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`);
}

/** axe-core finds nothing serious on the screen, at its width and at a phone's. */
export async function noSeriousAxeProblems(page: Page, screen: string): Promise<void> {
  const size = page.viewportSize()!;
  for (const viewport of [size, PHONE]) {
    await page.setViewportSize(viewport);
    const serious = await seriousAxeProblems(page);
    expect({ screen, width: viewport.width, serious }).toEqual({ screen, width: viewport.width, serious: [] });
  }
  await page.setViewportSize(size);
}

/** With WEB_SCREENSHOTS=1, the screen as docs/web-<name>-desktop.png and -phone.png (docs/web-and-cli.md). */
export async function shot(page: Page, name: string): Promise<void> {
  if (process.env.WEB_SCREENSHOTS !== '1') return;
  const docs = path.resolve(import.meta.dirname, '..', '..', 'docs');
  const size = page.viewportSize()!;
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(docs, `web-${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(docs, `web-${name}-phone.png`), fullPage: true });
  await page.setViewportSize(size);
}
