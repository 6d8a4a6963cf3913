// The embedded database as `deep-research dev` serves it, loaded the way two tenants would load it:
// one tenant's key in the environment, the other's created with `keys create` (so every request of
// that tenant looks its key up in the database), a document being ingested, and 300 requests of both
// at once. Every answer must be 200 and hold only its own tenant's collections (issue 38: statements
// of one connection once ran with another's parameters, giving 401s to valid keys, another query's
// rows, and "vanished" inserts).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ScriptedLlmServer } from '../support/llm-server';
import { missingReason } from '../support/services';
import { freePort, spawnCli, type Spawned } from '../support/spawn';

const cli = inject('temporalCliPath');
const KEY_A = 'key-a-0123456789abcdef';
const REQUESTS = 300;

interface Answer {
  status: number;
  body: unknown;
}

describe.skipIf(!cli)(`the embedded database under two tenants (${cli ? 'live' : missingReason()})`, () => {
  const llm = new ScriptedLlmServer();
  let env: Record<string, string>;
  let dev: Spawned | undefined;
  let api = '';
  let keyB = '';

  beforeAll(async () => {
    await llm.start();
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
      LOG_LEVEL: 'warn',
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
    await llm.close();
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
});
