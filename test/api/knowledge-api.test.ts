// The knowledge base through the API on the dev server: collections, uploads of every format
// (fixture files made in code), ingestion by the workflow with progress, pages and headings kept,
// bad files refused or failed with the parser's reason and nothing half-stored, limits as
// 413/415, duplicates as no-ops, an embeddings outage waited out, URLs through the SSRF guard.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import {
  CSV_FIXTURE,
  HTML_FIXTURE,
  MARKDOWN_FIXTURE,
  TEXT_FIXTURE,
  makeCorruptDocx,
  makeCorruptPdf,
  makeDocx,
  makePdf,
  makePptx,
  makeXlsx,
} from '../support/kb-fixtures';

const ready = Boolean(temporalAddress() && databaseUrl());

interface Doc {
  id: string;
  status: string;
  error?: string;
  chunks: number;
  embedded: number;
  pages: number | null;
  duplicate: boolean;
  chunkList?: { seq: number; page: number | null; headingPath: string[]; text: string }[];
}

describe.skipIf(!ready)(`knowledge base API (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  const tenant = `kb-${randomBytes(4).toString('hex')}`;
  const as = (r: request.Test) => r.set('x-tenant-id', tenant);
  let collection: string;

  beforeAll(async () => {
    h = await startHarness({ env: { KB_MAX_FILE_BYTES: '400000', EMBEDDING_BATCH: '4', KB_CHUNK_TOKENS: '120', KB_CHUNK_OVERLAP: '20' } });
    const res = await as(request(h.app).post('/v1/collections')).send({ name: 'Storage', description: 'Grid storage papers' }).expect(201);
    collection = res.body.id;
  });
  afterAll(async () => h?.close());

  async function upload(name: string, bytes: Buffer | string, type: string, expected = 202): Promise<Doc> {
    const res = await as(request(h.app).post(`/v1/collections/${collection}/documents`))
      .attach('file', Buffer.from(bytes), { filename: name, contentType: type })
      .expect(expected);
    return res.body as Doc;
  }

  async function settled(id: string, timeoutMs = 30_000): Promise<Doc> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const res = await as(request(h.app).get(`/v1/collections/${collection}/documents/${id}?include=chunks`)).expect(200);
      if (['ready', 'failed'].includes(res.body.status)) return res.body as Doc;
      if (Date.now() > until) throw new Error(`document ${id} still ${res.body.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('creates, lists and refuses a duplicate name or an unknown language', async () => {
    const list = await as(request(h.app).get('/v1/collections')).expect(200);
    expect(list.body.collections.map((c: { name: string }) => c.name)).toEqual(['Storage']);
    const dup = await as(request(h.app).post('/v1/collections')).send({ name: 'Storage' }).expect(409);
    expect(dup.body.error.code).toBe('collection_exists');
    const lang = await as(request(h.app).post('/v1/collections')).send({ name: 'X', language: 'klingon' }).expect(400);
    expect(lang.body.error.message).toMatch(/klingon/);
    // Another tenant sees none of it.
    const other = await request(h.app).get('/v1/collections').set('x-tenant-id', 'someone-else').expect(200);
    expect(other.body.collections).toEqual([]);
    await request(h.app).get(`/v1/collections/${collection}`).set('x-tenant-id', 'someone-else').expect(404);
  });

  it('ingests a two-page PDF with its page numbers, embedding every chunk', async () => {
    const doc = await settled((await upload('plant.pdf', await makePdf(), 'application/pdf')).id);
    expect(doc.status).toBe('ready');
    expect(doc.pages).toBe(2);
    expect(doc.embedded).toBe(doc.chunks);
    const pages = new Set(doc.chunkList!.map((c) => c.page));
    expect(pages).toEqual(new Set([1, 2]));
    expect(doc.chunkList!.find((c) => c.page === 1)!.text).toMatch(/412 megawatts/);
    expect(doc.chunkList!.find((c) => c.page === 2)!.text).toMatch(/78 percent/);
  });

  it.each([
    [
      'handbook.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      makeDocx,
      ['Grid Storage Handbook', 'Costs'],
    ],
    ['deck.pptx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation', makePptx, undefined],
    ['plants.xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', makeXlsx, ['Plants']],
    ['plants.csv', 'text/csv', (): string => CSV_FIXTURE, undefined],
    ['page.html', 'text/html', (): string => HTML_FIXTURE, undefined],
    ['notes.md', 'text/markdown', (): string => MARKDOWN_FIXTURE, undefined],
    ['notes.txt', 'text/plain', (): string => TEXT_FIXTURE, undefined],
  ] as const)('ingests %s', async (name, type, make, headingPath) => {
    const doc = await settled((await upload(name, await make(), type)).id);
    expect(doc.error).toBeUndefined();
    expect(doc.status).toBe('ready');
    expect(doc.chunks).toBeGreaterThan(0);
    expect(doc.embedded).toBe(doc.chunks);
    if (headingPath) expect(doc.chunkList!.map((c) => c.headingPath)).toContainEqual(headingPath);
  });

  it('answers 415 for a format it does not read, and 413 for a file over the limit', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    const bad = await as(request(h.app).post(`/v1/collections/${collection}/documents`))
      .attach('file', png, { filename: 'chart.png', contentType: 'image/png' })
      .expect(415);
    expect(bad.body.error.code).toBe('unsupported_format');
    const big = await as(request(h.app).post(`/v1/collections/${collection}/documents`))
      .attach('file', Buffer.alloc(500_000, 'a'), { filename: 'big.txt', contentType: 'text/plain' })
      .expect(413);
    expect(big.body.error.message).toMatch(/400000 bytes/);
  });

  it.each([
    ['broken.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', makeCorruptDocx],
    ['broken.pdf', 'application/pdf', makeCorruptPdf],
  ] as const)('fails %s with the parser reason and keeps no chunks', async (name, type, make) => {
    const doc = await settled((await upload(name, await make(), type)).id);
    expect(doc.status).toBe('failed');
    expect(doc.error).toMatch(/\w{8,}/);
    expect(doc.chunks).toBe(0);
    const { rows } = await h.pool.query('SELECT count(*)::int AS n FROM kb_chunks WHERE document_id = $1', [doc.id]);
    expect(rows[0].n).toBe(0);
  });

  it('takes the same file twice as one document, and deleting it removes its chunks', async () => {
    const first = await settled((await upload('again.md', '# Again\n\nPumped hydro again and again.', 'text/markdown')).id);
    const embeddings = h.llm.embeddingRequests.length;
    const second = await upload('again-renamed.md', '# Again\n\nPumped hydro again and again.', 'text/markdown', 200);
    expect(second.duplicate).toBe(true);
    expect(second.id).toBe(first.id);
    await new Promise((r) => setTimeout(r, 500));
    expect(h.llm.embeddingRequests.length).toBe(embeddings);
    await as(request(h.app).delete(`/v1/collections/${collection}/documents/${first.id}`)).expect(200);
    const { rows } = await h.pool.query('SELECT count(*)::int AS n FROM kb_chunks WHERE document_id = $1', [first.id]);
    expect(rows[0].n).toBe(0);
    await as(request(h.app).get(`/v1/collections/${collection}/documents/${first.id}`)).expect(404);
  });

  it('waits out an embeddings outage and stores each chunk once', async () => {
    h.llm.failEmbeddings(4, 503);
    const text = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} about flywheel storage number ${i}.`).join('\n\n');
    const doc = await settled((await upload('flywheels.txt', text, 'text/plain')).id, 60_000);
    expect(doc.status).toBe('ready');
    expect(doc.embedded).toBe(doc.chunks);
    const { rows } = await h.pool.query(
      'SELECT count(*)::int AS n, count(DISTINCT seq)::int AS seqs, max(seq) AS last FROM kb_chunks WHERE document_id = $1 AND embedding IS NOT NULL',
      [doc.id],
    );
    expect(rows[0]).toEqual({ n: doc.chunks, seqs: doc.chunks, last: doc.chunks - 1 });
    expect(h.llm.embeddingRequests.filter((r) => r.status === 503).length).toBe(4);
  });

  it('reads a document from a URL through the SSRF guard, and fails a blocked one with the reason', async () => {
    const res = await as(request(h.app).post(`/v1/collections/${collection}/documents`))
      .send({ url: `${h.site.url}/reports/wind.pdf` })
      .expect(202);
    const doc = await settled(res.body.id);
    expect(doc.status).toBe('ready');
    expect(doc.chunks).toBeGreaterThan(0);
    const blocked = await as(request(h.app).post(`/v1/collections/${collection}/documents`))
      .send({ url: 'http://169.254.169.254/latest' })
      .expect(202);
    const failed = await settled(blocked.body.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/169\.254\.169\.254/);
  });

  it('refuses a run naming a collection or session that is not the tenant’s', async () => {
    const res = await as(request(h.app).post('/v1/research'))
      .send({ question: 'q', options: { collections: ['C0000000000000000'] } })
      .expect(404);
    expect(res.body.error.code).toBe('collection_not_found');
    const s = await as(request(h.app).post('/v1/research')).send({ question: 'q', sessionId: 'session-0000000000000000' }).expect(404);
    expect(s.body.error.code).toBe('session_not_found');
  });

  it('deletes a collection with its documents and chunks', async () => {
    const c = await as(request(h.app).post('/v1/collections')).send({ name: 'Temp' }).expect(201);
    const other = collection;
    collection = c.body.id;
    const doc = await settled((await upload('t.md', '# T\n\nTemporary text.', 'text/markdown')).id);
    collection = other;
    await as(request(h.app).delete(`/v1/collections/${c.body.id}`)).expect(200);
    const { rows } = await h.pool.query('SELECT count(*)::int AS n FROM kb_chunks WHERE document_id = $1', [doc.id]);
    expect(rows[0].n).toBe(0);
    await as(request(h.app).get(`/v1/collections/${c.body.id}`)).expect(404);
  });

  it('accepts Chinese, Japanese and Korean collections, and indexes a Chinese document by bigrams', async () => {
    const zh = await as(request(h.app).post('/v1/collections')).send({ name: '储能论文', language: 'zh-CN' }).expect(201);
    expect(zh.body.language).toBe('chinese');
    for (const [name, language, stored] of [
      ['日本語', 'ja', 'japanese'],
      ['한국어', 'korean', 'korean'],
    ] as const) {
      const res = await as(request(h.app).post('/v1/collections')).send({ name, language }).expect(201);
      expect(res.body.language).toBe(stored);
    }
    const other = collection;
    collection = zh.body.id;
    const doc = await settled(
      (await upload('储能.md', '# 抽水蓄能\n\n抽水蓄能电站在用电低谷时把水抽到上水库，高峰时放水发电。', 'text/markdown')).id,
    );
    collection = other;
    expect(doc.status).toBe('ready');
    // A word inside the sentence is a lexeme of the chunk; `simple` alone would have kept the sentence whole.
    const { rows } = await h.pool.query(
      `SELECT count(*) FILTER (WHERE tsv @@ to_tsquery('simple', '水库 & 发电'))::int AS words,
              count(*) FILTER (WHERE tsv @@ to_tsquery('simple', '抽水蓄能电站在用电低谷时把水抽到上水库'))::int AS sentence
       FROM kb_chunks WHERE document_id = $1`,
      [doc.id],
    );
    expect(rows[0]).toEqual({ words: 1, sentence: 0 });
  });
});
