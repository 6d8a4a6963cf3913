// What hostile pages cost the process that renders them: the latency of a /healthz served by the
// same process (as `deep-research dev` serves the API beside its worker) while the browser
// activity renders hostile pages one after another (window.open, a script spinning after load,
// 50 MB of text, a memory hoard, 1,000 frames, a dialog storm), against the same process with no
// page rendering (the baseline), in alternating rounds of one run. A process of its own polls
// /healthz every 50 ms, so its own timing is not slowed by what it measures.
//   node bin/run-ts.mjs bench/hostile-pages.ts [--rounds 2] [--chromium /usr/bin/chromium]
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { loadConfig } from '../src/config';
import { createBrowserActivities } from '../src/activities/crawl/browser-activities';
import type { Store } from '../src/activities/store';
import type { CrawlResult } from '../src/activities/crawl';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    pages: { type: 'string' },
  },
});

const PAGES: Record<string, string> = {
  popup: `window.open('/x'); window.open('http://10.0.0.1/');`,
  spin: `addEventListener('load', () => { for (;;) {} });`,
  flood: `document.body.append('flood '.repeat(9e6));`,
  hoard: `fetch('/never'); const h = []; addEventListener('load', () => { const g = () => { for (let i = 0; i < 20; i++) h.push(new Float64Array(1 << 20).fill(Math.random())); setTimeout(g, 50); }; g(); });`,
  frames: `for (let i = 0; i < 1000; i++) document.body.appendChild(document.createElement('iframe'));`,
  dialogs: `for (let i = 0; i < 300; i++) { alert(i); confirm(String(i)); prompt(String(i)); print(); }`,
};
const site = http.createServer((req, res) => {
  const name = req.url!.slice(1);
  if (name === 'never') return;
  const script = PAGES[name] ?? '';
  res
    .writeHead(200, { 'content-type': 'text/html' })
    .end(
      `<!doctype html><html><head><title>${name}</title></head><body><div id="r"></div><script>document.getElementById('r').textContent = 'Hostile page text. '.repeat(40);</script><script>${script}</script></body></html>`,
    );
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

// The process's own /healthz, as the API answers it.
const api = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
const healthz = `http://127.0.0.1:${(api.address() as AddressInfo).port}/healthz`;

const POLLER = `
const url = process.argv[1]; const times = [];
const tick = async () => { const t0 = performance.now(); await fetch(url).then((r) => r.text()); times.push(performance.now() - t0); };
const timer = setInterval(() => void tick(), 50);
process.on('message', () => { clearInterval(timer); process.send(times, () => process.exit(0)); });
`;

/** /healthz latencies seen by the poller, and this process's event-loop delays (ms) meanwhile. */
async function measure(work: () => Promise<void>): Promise<{ latencies: number[]; loopMaxMs: number; loopP99Ms: number }> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const poller = spawn(process.execPath, ['-e', POLLER, healthz], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await work();
  const times = new Promise<number[]>((resolve) => poller.once('message', (m) => resolve(m as number[])));
  poller.send('stop');
  loop.disable();
  return { latencies: await times, loopMaxMs: loop.max / 1e6, loopP99Ms: loop.percentile(99) / 1e6 };
}

const config = loadConfig({
  NODE_ENV: 'production',
  LOG_LEVEL: 'error',
  BROWSER: 'true',
  CHROMIUM_PATH: values.chromium,
  CRAWL_ALLOW_HOSTS: new URL(siteUrl).host,
  BROWSER_TIMEOUT_MS: '5000',
  BROWSER_MAX_MEMORY_MB: '1024',
});
const store = { bans: { of: async () => [] }, savePage: async () => undefined } as unknown as Store;
const browser = createBrowserActivities({ config, store });
const outcomes: string[] = [];
const renderAll = async () => {
  for (const name of values.pages?.split(',') ?? Object.keys(PAGES)) {
    const r = (await new MockActivityEnvironment().run(browser.renderPage, {
      researchId: 'bench',
      url: `${siteUrl}/${name}`,
    })) as CrawlResult;
    outcomes.push(`${name}: ${r.status}${r.reason ? ` (${r.reason.slice(0, 90)})` : ''}`);
  }
};
const idle = (ms: number) => async () => void (await new Promise((resolve) => setTimeout(resolve, ms)));

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;
const line = (label: string, xs: number[], loop?: { loopMaxMs: number; loopP99Ms: number }) =>
  `${label.padEnd(9)} ${String(xs.length).padStart(5)} requests  p50 ${quantile(xs, 0.5).toFixed(1)} ms  p99 ${quantile(xs, 0.99).toFixed(1)} ms  max ${Math.max(...xs).toFixed(1)} ms` +
  (loop ? `  (event loop: p99 ${loop.loopP99Ms.toFixed(1)} ms, max ${loop.loopMaxMs.toFixed(1)} ms)` : '');

const all = { baseline: [] as number[], hostile: [] as number[] };
for (let round = 1; round <= Number(values.rounds); round++) {
  const started = Date.now();
  const hostile = await measure(renderAll);
  const baseline = await measure(idle(Date.now() - started));
  all.hostile.push(...hostile.latencies);
  all.baseline.push(...baseline.latencies);
  console.log(`round ${round}\n  ${line('hostile', hostile.latencies, hostile)}\n  ${line('baseline', baseline.latencies, baseline)}`);
}
console.log(`\nall rounds\n  ${line('hostile', all.hostile)}\n  ${line('baseline', all.baseline)}`);
console.log(`  p99 ratio hostile/baseline: ${(quantile(all.hostile, 0.99) / quantile(all.baseline, 0.99)).toFixed(2)}`);
console.log(`\noutcomes of the last round:\n  ${outcomes.slice(-Object.keys(PAGES).length).join('\n  ')}`);
await browser.closeBrowser();
api.close();
site.close();
