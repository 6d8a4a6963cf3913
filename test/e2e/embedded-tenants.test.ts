// The embedded database as `deep-research dev` serves it, loaded the way two tenants would load it:
// one tenant's key in the environment, the other's created with `keys create` (so every request of
// that tenant looks its key up in the database), a document being ingested, and 300 requests of both
// at once. Every answer must be 200 and hold only its own tenant's collections (issue 38: statements
// of one connection once ran with another's parameters, giving 401s to valid keys, another query's
// rows, and "vanished" inserts).
//
// The same `dev` traces by the standard OTEL_* variables: it sends spans over OTLP/HTTP to a
// collector (a fake here), and one trace follows a run from the API's HTTP request through the
// workflow and its step children to the activities (one `dev` start for both: the load and the
// traced run share nothing else).
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ScriptedLlmServer } from '../support/llm-server';
import { planJson, researchRules, searchResults } from '../support/research-script';
import { FakeSearxng } from '../support/search-server';
import { missingReason } from '../support/services';
import { freePort, spawnCli, type Spawned } from '../support/spawn';

const cli = inject('temporalCliPath');
const KEY_A = 'key-a-0123456789abcdef';
const REQUESTS = 300;

interface Answer {
  status: number;
  body: unknown;
}

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

describe.skipIf(!cli)(`dev on its embedded database: two tenants under load, a traced run (${cli ? 'live' : missingReason()})`, () => {
  const llm = new ScriptedLlmServer();
  const search = new FakeSearxng({}, searchResults('http://fixture.invalid'));
  let collector: Awaited<ReturnType<typeof fakeCollector>>;
  let env: Record<string, string>;
  let dev: Spawned | undefined;
  let api = '';
  let keyB = '';

  beforeAll(async () => {
    await llm.start();
    await search.start();
    collector = await fakeCollector();
    llm.script(researchRules({}, planJson([{ id: 'a' }])));
    llm.embeddingDelayMs = 400; // the ingestion is still embedding while the requests arrive
    env = {
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dr-tenants-')),
      TEMPORAL_CLI_PATH: cli!,
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      API_PORT: String(await freePort()),
      PGLITE_PORT: String(await freePort()),
      API_KEYS: `${KEY_A}=tenant-a`,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'sk-dev-test',
      EMBEDDING_BATCH: '2',
      KB_CHUNK_TOKENS: '60',
      KB_CHUNK_OVERLAP: '0',
      SEARCH_PROVIDERS: 'searxng',
      SEARXNG_URL: search.url,
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'deep-research-test',
    };
    dev = spawnCli(['dev'], env);
    api = (await dev.waitFor(/API\s+(http:\/\/\S+)/, 120_000))[1]!;
    const created = spawnCli(['keys', 'create', '--tenant', 'tenant-b', '--json'], env);
    expect(await created.exited(60_000)).toBe(0);
    keyB = (JSON.parse(created.output().trim().split('\n').pop()!) as { key: string }).key;
    expect(keyB.length).toBeGreaterThanOrEqual(16);
  }, 200_000);

  afterAll(async () => {
    // Ctrl-C after an upload: the parse thread kept for the next document once held it open for good.
    dev?.child.kill('SIGINT');
    expect(await dev?.exited(30_000)).toBe(0);
    collector?.close();
    await llm.close();
    await search.close();
  });

  const call = async (key: string, method: string, route: string, body?: BodyInit, json?: unknown): Promise<Answer> => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (json !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${api}/v1${route}`, { method, headers, body: json !== undefined ? JSON.stringify(json) : body });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
  };

  it('answers 300 concurrent requests of two tenants during an ingestion, each with its own rows', async () => {
    const mine: Record<string, string[]> = { 'tenant-a': [], 'tenant-b': [] };
    for (const [tenant, key] of [
      ['tenant-a', KEY_A],
      ['tenant-b', keyB],
    ] as const) {
      for (let i = 0; i < 3; i++) {
        const made = await call(key, 'POST', '/collections', undefined, { name: `${tenant} shelf ${i}` });
        expect(made.status, JSON.stringify(made.body)).toBe(201);
        mine[tenant]!.push((made.body as { id: string }).id);
      }
    }

    // A document long enough to need many embedding batches.
    const text = Array.from(
      { length: 60 },
      (_, i) => `Paragraph ${i}: grid storage note ${i} with enough words to fill a chunk of its own.`,
    ).join('\n\n');
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/plain' }), 'notes.txt');
    const upload = await call(KEY_A, 'POST', `/collections/${mine['tenant-a']![0]}/documents`, form);
    expect(upload.status, JSON.stringify(upload.body)).toBe(202);
    const docId = (upload.body as { id: string }).id;

    const requests = Array.from({ length: REQUESTS }, (_, i) => {
      const tenant = i % 2 ? 'tenant-b' : 'tenant-a';
      const key = tenant === 'tenant-a' ? KEY_A : keyB;
      const collection = mine[tenant]![Math.floor(i / 6) % 3]!;
      const kind = i % 3;
      const route = kind === 0 ? '/collections' : kind === 1 ? `/collections/${collection}` : `/collections/${collection}/documents`;
      return call(key, 'GET', route).then((answer) => ({ tenant, kind, collection, answer }));
    });
    const answers = await Promise.all(requests);

    const statuses: Record<number, number> = {};
    for (const a of answers) statuses[a.answer.status] = (statuses[a.answer.status] ?? 0) + 1;
    expect(statuses).toEqual({ 200: REQUESTS });
    const seen = new Set<string>();
    for (const { tenant, kind, collection, answer } of answers) {
      if (kind === 0) {
        const ids = (answer.body as { collections: { id: string }[] }).collections.map((c) => c.id).sort();
        expect(ids).toEqual([...mine[tenant]!].sort());
      } else if (kind === 1) {
        expect(answer.body).toMatchObject({ id: collection, name: expect.stringContaining(tenant) });
      } else {
        const list = (answer.body as { documents: { id: string; status: string }[] }).documents;
        for (const d of list) seen.add(d.status);
        const docs = list.map((d) => d.id);
        expect(docs).toEqual(collection === mine['tenant-a']![0] ? [docId] : []);
      }
    }

    // The requests met the document while it was still being ingested.
    expect(
      [...seen].some((s) => s !== 'ready'),
      [...seen].join(),
    ).toBe(true);

    // The ingestion that ran alongside finished with every chunk stored and embedded once.
    let doc: { status: string; chunks: number; embedded: number; error?: string } = { status: '', chunks: 0, embedded: 0 };
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      doc = (await call(KEY_A, 'GET', `/collections/${mine['tenant-a']![0]}/documents/${docId}`)).body as typeof doc;
      if (doc.status === 'ready' || doc.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(doc).toMatchObject({ status: 'ready' });
    expect(doc.chunks).toBeGreaterThan(4);
    expect(doc.embedded).toBe(doc.chunks);
    // The other tenant cannot see it.
    expect((await call(keyB, 'GET', `/collections/${mine['tenant-a']![0]}/documents/${docId}`)).status).toBe(404);
    expect(dev!.output()).not.toMatch(/vanished after its insert|bind message supplies/);
  }, 240_000);

  it('follows a run in one trace: HTTP request, workflow, step child, activities', async () => {
    const started = await call(KEY_A, 'POST', '/research', undefined, {
      question: 'How much cheaper has solar power become?',
      options: { autoAcceptPlan: true },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const { id } = started.body as { id: string };
    for (const end = Date.now() + 60_000; ;) {
      const s = (await call(KEY_A, 'GET', `/research/${id}`)).body as { status: string };
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
