// Tracing by the standard OTEL_* variables: `deep-research dev` sends spans over OTLP/HTTP to a
// collector (a fake here), and one trace follows a run from the API's HTTP request through the
// workflow and its step children to the activities.
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTemporalCli } from '../../src/infra/temporal-cli';
import { ScriptedLlmServer } from '../support/llm-server';
import { planJson, researchRules, searchResults } from '../support/research-script';
import { FakeSearxng } from '../support/search-server';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { freePort, spawnCli, type Spawned } from '../support/spawn';

const cli = findTemporalCli({ envPath: process.env.PATH, install: false });
const ready = Boolean(temporalAddress() && databaseUrl() && cli);

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

/** An OTLP/HTTP trace receiver (JSON), like a collector's. */
async function fakeCollector() {
  const spans: Span[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const data = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: Span[] }[] }[] };
        for (const rs of data.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, close: () => server.close() };
}

describe.skipIf(!ready)(`tracing (${ready ? 'live' : missingReason()})`, () => {
  const llm = new ScriptedLlmServer();
  const search = new FakeSearxng({}, searchResults('http://fixture.invalid'));
  let collector: Awaited<ReturnType<typeof fakeCollector>>;
  let dev: Spawned | undefined;
  let api = '';

  beforeAll(async () => {
    await llm.start();
    await search.start();
    collector = await fakeCollector();
    llm.script(researchRules({}, planJson([{ id: 'a' }])));
    const [temporal, ui, apiPort, pglite] = [await freePort(), await freePort(), await freePort(), await freePort()];
    dev = spawnCli(['dev'], {
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dr-otel-')),
      TEMPORAL_CLI_PATH: cli!.path,
      TEMPORAL_PORT: String(temporal),
      TEMPORAL_UI_PORT: String(ui),
      API_PORT: String(apiPort),
      PGLITE_PORT: String(pglite),
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'sk-otel-test',
      SEARCH_PROVIDERS: 'searxng',
      SEARXNG_URL: search.url,
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'deep-research-test',
    });
    await dev.waitFor(/deep-research is running/, 120_000);
    api = `http://127.0.0.1:${apiPort}`;
  }, 150_000);
  afterAll(async () => {
    dev?.child.kill('SIGINT');
    await dev?.exited(30_000).catch(() => dev?.child.kill('SIGKILL'));
    collector?.close();
    await llm.close();
    await search.close();
  });

  it('follows a run in one trace: HTTP request, workflow, step child, activities', async () => {
    const res = await fetch(`${api}/v1/research`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'How much cheaper has solar power become?', options: { autoAcceptPlan: true } }),
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    for (const end = Date.now() + 60_000; ;) {
      const s = (await (await fetch(`${api}/v1/research/${id}`)).json()) as { status: string };
      if (s.status === 'completed') break;
      if (Date.now() > end) throw new Error(`the run did not complete: ${JSON.stringify(s)}\n${dev!.output()}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    const wanted = [
      'RunWorkflow:researchWorkflow',
      'RunWorkflow:researcherWorkflow',
      'RunActivity:researcherTurn',
      // The gap reflection and the report, one activity.
      'RunActivity:reflectThenReport',
    ];
    let trace: Span[] = [];
    for (const end = Date.now() + 20_000; ;) {
      const root = collector.spans.find((s) => s.name === 'POST /v1/research' && !s.parentSpanId);
      trace = root ? collector.spans.filter((s) => s.traceId === root.traceId) : [];
      if (wanted.every((w) => trace.some((s) => s.name.startsWith(w)))) break;
      if (Date.now() > end) {
        throw new Error(`spans missing from the trace; got ${JSON.stringify([...new Set(collector.spans.map((s) => s.name))])}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const names = new Set(trace.map((s) => s.name));
    expect(names).toContain('StartWorkflow:researchWorkflow');
    expect([...names].some((n) => n.startsWith('StartChildWorkflow:researcherWorkflow'))).toBe(true);
    expect([...names].some((n) => n.startsWith('RunActivity:classifyThenBackground'))).toBe(true);
    // Every span of the trace hangs from another span of it (nothing is cut off).
    const ids = new Set(trace.map((s) => s.spanId));
    const orphans = trace.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
    expect(orphans).toEqual([]);
  }, 120_000);
});
