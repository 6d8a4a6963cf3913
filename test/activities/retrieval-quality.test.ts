// Retrieval quality on a fixture corpus (test/fixtures/kb/corpus.json: 64 chunks, 23 queries with
// known relevant chunks), on both database paths: PGlite with pgvector's HNSW index, and the
// suite's PostgreSQL, which has no pgvector (exact scan). Recall@5 of full text alone, vectors
// alone and the two fused by reciprocal rank fusion.
//
// What it can show: the plumbing (tsvector ranking, kNN, fusion, scoping) works on both paths and
// gives the same answers, and fusion keeps what each method finds. The embeddings come from the
// scripted server's deterministic embedder (test/support/embeddings.ts: synonym groups and hashed
// trigrams), so the vector figures say nothing about a real embedding model's quality.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore, type Store } from '../../src/activities/store';
import { createEmbedder } from '../../src/activities/knowledge/embed';
import { createRetriever, type Method } from '../../src/activities/knowledge/retrieve';
import { countTokens } from '../../src/activities/knowledge/chunk';
import { createLogger } from '../../src/infra/logger';
import { migrate } from '../../src/infra/migrate';
import { createPool, startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/infra/postgres';
import { ScriptedLlmServer } from '../support/llm-server';
import { databaseUrl, missingReason } from '../support/services';
import { testConfig } from '../support/harness';

interface Corpus {
  documents: { id: string; title: string; chunks: { id: string; text: string }[] }[];
  queries: { id: string; text: string; relevant: string[]; kind: string }[];
}
const corpus = JSON.parse(readFileSync(path.join(import.meta.dirname, '../fixtures/kb/corpus.json'), 'utf8')) as Corpus;
const ready = Boolean(databaseUrl());
const TENANT = 'retrieval-quality';

/** Loads the corpus as one collection: documents, chunks, embeddings from the scripted server. */
async function load(store: Store, llmUrl: string): Promise<string> {
  const kb = store.knowledge;
  const collectionId = 'C00000000000000aa';
  await kb.createCollection({ collectionId, tenant: TENANT, name: 'corpus', description: 'energy prose', language: 'english' });
  const embedder = createEmbedder(testConfig(llmUrl).knowledge.embedding);
  for (const d of corpus.documents) {
    const documentId = `D${d.id.replace(/\D/g, '').padStart(16, '0')}`;
    await kb.addDocument({ documentId, tenant: TENANT, collectionId, name: d.title, status: 'embedding' });
    const chunks = d.chunks.map((c, seq) => ({ seq, text: c.text, headingPath: [], tokens: countTokens(c.text) }));
    await kb.replaceChunks(documentId, chunks, { title: d.title });
    const { vectors } = await embedder.embed(chunks.map((c) => c.text));
    await kb.ensureVectorIndex(vectors[0]!.length);
    await kb.saveEmbeddings(
      documentId,
      embedder.model,
      chunks.map((c, i) => ({ seq: c.seq, embedding: vectors[i]! })),
    );
  }
  return collectionId;
}

/** The fixture id ('d3-c2') of a retrieved chunk. */
function fixtureId(documentId: string, seq: number): string {
  const d = corpus.documents.find((x) => `D${x.id.replace(/\D/g, '').padStart(16, '0')}` === documentId)!;
  return d.chunks[seq]!.id;
}

async function recallAt5(store: Store, llmUrl: string, collectionId: string, methods: Method[]) {
  const retrieve = createRetriever({ kb: store.knowledge, embedder: createEmbedder(testConfig(llmUrl).knowledge.embedding) });
  const byKind: Record<string, number[]> = {};
  const ranked: Record<string, string[]> = {};
  for (const q of corpus.queries) {
    // perDocument 0: recall counts chunks, and two relevant chunks may share a document.
    const r = await retrieve({ tenant: TENANT, collectionIds: [collectionId] }, [q.text], { k: 5, methods, perDocument: 0 });
    const ids = r.chunks.map((c) => fixtureId(c.documentId, c.seq));
    ranked[q.id] = ids;
    const recall = q.relevant.filter((id) => ids.includes(id)).length / q.relevant.length;
    (byKind[q.kind] ??= []).push(recall);
    (byKind.all ??= []).push(recall);
  }
  const mean = (xs: number[]) => Math.round((xs.reduce((s, x) => s + x, 0) / xs.length) * 1000) / 1000;
  return { recall: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, mean(v)])), ranked };
}

function qualitySuite(name: string, open: () => Promise<{ pool: pg.Pool; close(): Promise<void> }>, expectedMode: 'pgvector' | 'exact') {
  describe(name, () => {
    const llm = new ScriptedLlmServer();
    let db: { pool: pg.Pool; close(): Promise<void> };
    let store: Store;
    let collectionId: string;
    const results: Record<string, Awaited<ReturnType<typeof recallAt5>>> = {};

    beforeAll(async () => {
      await llm.start();
      db = await open();
      store = createStore(db.pool);
      collectionId = await load(store, llm.url);
      for (const m of [['text'], ['vector'], ['text', 'vector']] as Method[][])
        results[m.join('+')] = await recallAt5(store, llm.url, collectionId, m);
      process.stdout.write(
        `[retrieval ${name}] recall@5 ${JSON.stringify(Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.recall])))}\n`,
      );
    }, 120_000);
    afterAll(async () => {
      await db?.close();
      await llm.close();
    });

    it(`searches vectors by ${expectedMode}`, async () => {
      expect(await store.knowledge.vectorMode()).toBe(expectedMode);
    });

    it('fused retrieval is not worse than full text or vectors alone, overall and for each kind of query', () => {
      const text = results.text!.recall;
      const vector = results.vector!.recall;
      const fused = results['text+vector']!.recall;
      for (const kind of Object.keys(fused)) {
        expect(fused[kind], `fused vs text (${kind})`).toBeGreaterThanOrEqual(text[kind]!);
        expect(fused[kind], `fused vs vector (${kind})`).toBeGreaterThanOrEqual(vector[kind]!);
      }
      // Each method finds what the other cannot: exact names and numbers for full text, synonyms for vectors.
      expect(text.lexical).toBeGreaterThan(vector.lexical!);
      expect(vector.paraphrase).toBeGreaterThan(text.paraphrase!);
    });

    it('stays inside the scope: another tenant, or no collection, finds nothing', async () => {
      const retrieve = createRetriever({ kb: store.knowledge, embedder: createEmbedder(testConfig(llm.url).knowledge.embedding) });
      const q = corpus.queries[0]!.text;
      expect((await retrieve({ tenant: 'someone-else', collectionIds: [collectionId] }, [q])).chunks).toEqual([]);
      expect((await retrieve({ tenant: TENANT, collectionIds: [] }, [q])).chunks).toEqual([]);
      const limited = await retrieve({ tenant: TENANT, collectionIds: [collectionId] }, [q], { k: 8, perDocument: 1 });
      expect(new Set(limited.chunks.map((c) => c.documentId)).size).toBe(limited.chunks.length);
    });
  });
  return undefined;
}

describe.skipIf(!ready)(`retrieval quality (${ready ? 'live' : missingReason()})`, () => {
  let pglite: { dir: string; embedded: EmbeddedPostgres } | undefined;
  qualitySuite(
    'PGlite with pgvector',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'kb-pglite-'));
      const port = 20_000 + Math.floor(Math.random() * 20_000);
      const embedded = await startEmbeddedPostgres({ dataDir: dir, port, log: createLogger('error') });
      pglite = { dir, embedded };
      const pool = createPool(embedded.url, 4);
      await migrate(pool);
      return {
        pool,
        close: async () => {
          await pool.end();
          await embedded.stop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
    'pgvector',
  );
  qualitySuite(
    'PostgreSQL without pgvector',
    async () => {
      const pool = createPool(databaseUrl()!, 4);
      await pool.query('DELETE FROM kb_collections WHERE tenant = $1', [TENANT]);
      return { pool, close: () => pool.end() };
    },
    'exact',
  );
  it('ran the PGlite path', () => expect(pglite).toBeDefined());
});
