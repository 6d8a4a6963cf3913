// How long `deep-research dev` takes from a clean data directory until the API and the Temporal
// UI answer, against a baseline measured in the same run: the bare `temporal server start-dev`
// until its UI answers. Then a thin-slice run through the dev API against the scripted LLM.
//   node bin/run-ts.mjs bench/dev-startup.ts [--runs 3]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Connection } from '@temporalio/client';
import { findTemporalCli, searchAttributeArgs } from '../src/infra/temporal-cli';
import { ScriptedLlmServer } from '../test/support/llm-server';
import { researchRules, searchResults } from '../test/support/research-script';
import { FakeSearxng } from '../test/support/search-server';
import { freePort, spawnCli } from '../test/support/spawn';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);

async function until(url: string, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > end) throw new Error(`${url} did not answer`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function baseline(cli: string): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-base-'));
  const [port, ui] = [await freePort(), await freePort()];
  const t0 = performance.now();
  const child = spawn(
    cli,
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--ui-port',
      String(ui),
      '--db-filename',
      path.join(dir, 't.db'),
      '--log-level',
      'error',
      ...searchAttributeArgs(),
    ],
    { stdio: 'ignore' },
  );
  // Ready means what dev waits for too: the UI answers and the frontend serves the namespace.
  await until(`http://127.0.0.1:${ui}/`, 60_000);
  for (;;) {
    try {
      const conn = await Connection.connect({ address: `127.0.0.1:${port}`, connectTimeout: 1_000 });
      await conn.workflowService.describeNamespace({ namespace: 'default' });
      await conn.close();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const ms = performance.now() - t0;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

async function devRun(
  cli: string,
  llm: ScriptedLlmServer,
  withSlice: boolean,
  dir: string,
): Promise<{ apiMs: number; uiMs: number; sliceMs?: number }> {
  const [tp, up, ap, pp] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const t0 = performance.now();
  const dev = spawnCli(['dev'], {
    DATA_DIR: dir,
    TEMPORAL_CLI_PATH: cli,
    TEMPORAL_PORT: String(tp),
    TEMPORAL_UI_PORT: String(up),
    API_PORT: String(ap),
    PGLITE_PORT: String(pp),
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: 'sk-bench',
    LOG_LEVEL: 'warn',
    SEARCH_PROVIDERS: 'searxng',
    SEARXNG_URL: search.url,
  });
  const api = `http://127.0.0.1:${ap}`;
  let apiMs = 0;
  let uiMs = 0;
  await Promise.all([
    until(`${api}/healthz`, 120_000).then(() => (apiMs = performance.now() - t0)),
    until(`http://127.0.0.1:${up}/`, 120_000).then(() => (uiMs = performance.now() - t0)),
  ]);
  let sliceMs: number | undefined;
  if (withSlice) {
    const s0 = performance.now();
    const res = await fetch(`${api}/v1/research`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'How cheap is solar power now?', options: { autoAcceptPlan: true } }),
    });
    const { id } = (await res.json()) as { id: string };
    for (;;) {
      const v = (await (await fetch(`${api}/v1/research/${id}`)).json()) as { status: string };
      if (v.status === 'completed') break;
      if (v.status === 'failed') throw new Error(`slice failed: ${JSON.stringify(v)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    sliceMs = performance.now() - s0;
  }
  dev.child.kill('SIGINT');
  await dev.exited(60_000);
  return { apiMs, uiMs, ...(sliceMs !== undefined ? { sliceMs } : {}) };
}

const found = findTemporalCli({ envPath: process.env.PATH, explicitPath: process.env.TEMPORAL_CLI_PATH, install: true });
if (!found) throw new Error('no Temporal CLI');
const llm = await new ScriptedLlmServer().start();
llm.script(researchRules());
const search = await new FakeSearxng({}, searchResults('http://fixture.invalid')).start();

const base: number[] = [];
const dev: { apiMs: number; uiMs: number; sliceMs?: number }[] = [];
const again: { apiMs: number; uiMs: number }[] = [];
for (let i = 0; i < runs; i++) {
  base.push(await baseline(found.path));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-dev-'));
  dev.push(await devRun(found.path, llm, true, dir));
  again.push(await devRun(found.path, llm, false, dir));
  rmSync(dir, { recursive: true, force: true });
}
await llm.close();
await search.close();
const ready = dev.map((d) => Math.max(d.apiMs, d.uiMs));
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(`runs: ${runs} (medians; clean data directory each time)`);
console.log(`baseline  bare temporal server start-dev until UI + frontend: ${fmt(median(base))}`);
console.log(`dev       API /healthz answers:                          ${fmt(median(dev.map((d) => d.apiMs)))}`);
console.log(`dev       Temporal UI answers:                           ${fmt(median(dev.map((d) => d.uiMs)))}`);
console.log(`dev       both answer:                                   ${fmt(median(ready))}`);
console.log(`ratio     dev ready / bare dev server:                   ${(median(ready) / median(base)).toFixed(2)}x`);
console.log(`restart   both answer (existing data directory):     ${fmt(median(again.map((d) => Math.max(d.apiMs, d.uiMs))))}`);
console.log(
  `run       POST /v1/research until completed (full run, 2 steps, no LLM latency):             ${fmt(median(dev.map((d) => d.sliceMs!)))}`,
);
