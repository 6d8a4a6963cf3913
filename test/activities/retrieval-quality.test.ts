// Retrieval quality on fixture corpora, on both database paths: PGlite with pgvector's HNSW index,
// and the suite's PostgreSQL, which has no pgvector (exact scan). Recall@5 of full text alone,
// vectors alone and the two fused by reciprocal rank fusion, for two corpora with known relevant
// chunks: English (test/fixtures/kb/corpus.json: 64 chunks, 24 queries) and Chinese
// (corpus-zh.json: 32 chunks, 24 queries, its "mixed" queries Chinese with an English term), the
// latter in a `chinese` collection, indexed by character bigrams. Japanese and Korean get a few
// passages each, searched by full text alone.
//
// What it can show: the plumbing (tsvector ranking, kNN, fusion, scoping, CJK tokenisation) works
// on both paths and gives the same answers, and fusion keeps what each method finds. The embeddings
// come from the scripted server's deterministic embedder (test/support/embeddings.ts: synonym groups,
// hashed trigrams and CJK bigrams), so the vector figures say nothing about a real embedding model's quality.
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
  /** The collection it is loaded as, its language, and the first document number (document ids are global). */
  collectionId: string;
  language: string;
  offset: number;
  documents: { id: string; title: string; chunks: { id: string; text: string }[] }[];
  queries: { id: string; text: string; relevant: string[]; kind: string }[];
}
const readCorpus = (file: string, collectionId: string, language: string, offset: number): Corpus => ({
  ...(JSON.parse(readFileSync(path.join(import.meta.dirname, '../fixtures/kb', file), 'utf8')) as Pick<Corpus, 'documents' | 'queries'>),
  collectionId,
  language,
  offset,
});
const english = readCorpus('corpus.json', 'C00000000000000aa', 'english', 0);
const chinese = readCorpus('corpus-zh.json', 'C00000000000000ab', 'chinese', 1_000);

/** A few passages for full-text search alone: each query's first hit must be its passage. */
const ja: Corpus = {
  collectionId: 'C00000000000000ac',
  language: 'japanese',
  offset: 2_000,
  documents: [
    [
      '富士山の登山シーズンは七月上旬から九月上旬までで、山頂付近の気温は夏でも五度前後まで下がる。吉田ルートは山小屋が多く、初心者に人気がある。',
    ],
    ['東京の地下鉄は東京メトロと都営地下鉄の二つの事業者が運営しており、一日の利用者数は合わせて約九百万人にのぼる。'],
    ['日本酒は米と米麹と水から造られ、精米歩合が低いほど雑味の少ない香り高い酒になる。吟醸酒は精米歩合六十パーセント以下の白米を使う。'],
    ['新幹線のぞみ号は東京と新大阪を最短二時間二十一分で結び、最高速度は時速二百八十五キロメートルである。'],
    ['桜の開花予想は気象会社が毎年発表しており、ソメイヨシノの開花は東京では三月下旬が平年並みとされる。'],
  ].map(([text], i) => ({ id: `j${i + 1}`, title: '', chunks: [{ id: `j${i + 1}-c1`, text: text! }] })),
  queries: [
    { id: 'jq1', text: '富士山に登る時期', relevant: ['j1-c1'], kind: 'lexical' },
    { id: 'jq2', text: '日本酒の精米歩合', relevant: ['j3-c1'], kind: 'lexical' },
    { id: 'jq3', text: '地下鉄の利用者数', relevant: ['j2-c1'], kind: 'lexical' },
    { id: 'jq4', text: 'ソメイヨシノはいつ咲く', relevant: ['j5-c1'], kind: 'lexical' },
    { id: 'jq5', text: 'のぞみ 最高速度', relevant: ['j4-c1'], kind: 'lexical' },
  ],
};
const ko: Corpus = {
  collectionId: 'C00000000000000ad',
  language: 'korean',
  offset: 3_000,
  documents: [
    ['서울 지하철은 아홉 개의 노선으로 이루어져 있으며 하루 평균 칠백만 명 이상이 이용한다. 교통카드로 버스와 지하철을 환승할 수 있다.'],
    [
      '김치는 배추와 무를 소금에 절인 뒤 고춧가루, 마늘, 젓갈로 양념하여 발효시킨 음식이다. 김장은 겨울이 오기 전에 많은 양의 김치를 담그는 풍습이다.',
    ],
    ['한글은 1443년 세종대왕이 창제하였으며, 처음에는 훈민정음이라고 불렸다. 자음과 모음을 조합하여 음절을 만든다.'],
    ['KTX는 서울에서 부산까지 약 두 시간 반 만에 달리는 고속철도이며, 최고 속도는 시속 305킬로미터이다.'],
    ['제주도는 화산섬으로 한라산이 섬 한가운데에 솟아 있고, 해녀들이 바다에 들어가 전복과 소라를 채취한다.'],
  ].map(([text], i) => ({ id: `k${i + 1}`, title: '', chunks: [{ id: `k${i + 1}-c1`, text: text! }] })),
  // Particles attach to the words (김장은, 해녀들이, 전복과): the queries' forms differ, their bigrams meet.
  queries: [
    { id: 'kq1', text: '김장 풍습', relevant: ['k2-c1'], kind: 'lexical' },
    { id: 'kq2', text: '세종대왕이 만든 한글', relevant: ['k3-c1'], kind: 'lexical' },
    { id: 'kq3', text: '지하철 환승', relevant: ['k1-c1'], kind: 'lexical' },
    { id: 'kq4', text: 'KTX 부산까지 걸리는 시간', relevant: ['k4-c1'], kind: 'lexical' },
    { id: 'kq5', text: '해녀가 전복을 채취', relevant: ['k5-c1'], kind: 'lexical' },
  ],
};
const ready = Boolean(databaseUrl());
const TENANT = 'retrieval-quality';

const documentIdOf = (corpus: Corpus, id: string) => `D${String(corpus.offset + Number(id.replace(/\D/g, ''))).padStart(16, '0')}`;

/** Loads a corpus as one collection: documents, chunks, embeddings from the scripted server. */
async function load(store: Store, llmUrl: string, corpus: Corpus): Promise<void> {
  const kb = store.knowledge;
  const { collectionId, language } = corpus;
  await kb.createCollection({ collectionId, tenant: TENANT, name: `corpus ${language}`, description: 'prose', language });
  const embedder = createEmbedder(testConfig(llmUrl).knowledge.embedding);
  for (const d of corpus.documents) {
    const documentId = documentIdOf(corpus, d.id);
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
}

/** The fixture id ('d3-c2') of a retrieved chunk. */
function fixtureId(corpus: Corpus, documentId: string, seq: number): string {
  const d = corpus.documents.find((x) => documentIdOf(corpus, x.id) === documentId)!;
  return d.chunks[seq]!.id;
}

async function recallAt5(store: Store, llmUrl: string, corpus: Corpus, methods: Method[]) {
  const retrieve = createRetriever({ kb: store.knowledge, embedder: createEmbedder(testConfig(llmUrl).knowledge.embedding) });
  const byKind: Record<string, number[]> = {};
  const ranked: Record<string, string[]> = {};
  for (const q of corpus.queries) {
    // perDocument 0: recall counts chunks, and two relevant chunks may share a document.
    const r = await retrieve({ tenant: TENANT, collectionIds: [corpus.collectionId] }, [q.text], { k: 5, methods, perDocument: 0 });
    const ids = r.chunks.map((c) => fixtureId(corpus, c.documentId, c.seq));
    ranked[q.id] = ids;
    const recall = q.relevant.filter((id) => ids.includes(id)).length / q.relevant.length;
    (byKind[q.kind] ??= []).push(recall);
    (byKind.all ??= []).push(recall);
  }
  const mean = (xs: number[]) => Math.round((xs.reduce((s, x) => s + x, 0) / xs.length) * 1000) / 1000;
  return { recall: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, mean(v)])), ranked };
}

type Results = Record<string, Awaited<ReturnType<typeof recallAt5>>>;

/** Recall of each method and of the fusion, printed as one line per corpus. */
async function measure(store: Store, llmUrl: string, corpus: Corpus, label: string): Promise<Results> {
  const results: Results = {};
  for (const m of [['text'], ['vector'], ['text', 'vector']] as Method[][])
    results[m.join('+')] = await recallAt5(store, llmUrl, corpus, m);
  process.stdout.write(
    `[retrieval ${label}] recall@5 ${JSON.stringify(Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.recall])))}\n`,
  );
  return results;
}

/** Fusion is not worse than either method alone, overall and for each kind of query. */
function expectFusionKeepsBoth(results: Results): void {
  const text = results.text!.recall;
  const vector = results.vector!.recall;
  const fused = results['text+vector']!.recall;
  for (const kind of Object.keys(fused)) {
    expect(fused[kind], `fused vs text (${kind})`).toBeGreaterThanOrEqual(text[kind]!);
    expect(fused[kind], `fused vs vector (${kind})`).toBeGreaterThanOrEqual(vector[kind]!);
  }
}

function qualitySuite(name: string, open: () => Promise<{ pool: pg.Pool; close(): Promise<void> }>, expectedMode: 'pgvector' | 'exact') {
  describe(name, () => {
    const llm = new ScriptedLlmServer();
    let db: { pool: pg.Pool; close(): Promise<void> };
    let store: Store;
    let results: Results;
    let zh: Results;

    beforeAll(async () => {
      await llm.start();
      db = await open();
      store = createStore(db.pool);
      for (const corpus of [english, chinese, ja, ko]) await load(store, llm.url, corpus);
      results = await measure(store, llm.url, english, name);
      zh = await measure(store, llm.url, chinese, `zh ${name}`);
    }, 120_000);
    afterAll(async () => {
      await db?.close();
      await llm.close();
    });

    it(`searches vectors by ${expectedMode}`, async () => {
      expect(await store.knowledge.vectorMode()).toBe(expectedMode);
    });

    it('fused retrieval is not worse than full text or vectors alone, overall and for each kind of query', () => {
      expectFusionKeepsBoth(results);
      const text = results.text!.recall;
      const vector = results.vector!.recall;
      // Each method finds what the other cannot: exact names and numbers for full text, synonyms for vectors.
      expect(text.lexical).toBeGreaterThan(vector.lexical!);
      expect(vector.paraphrase).toBeGreaterThan(text.paraphrase!);
    });

    it('finds Chinese passages by full text (bigrams), with English terms among the Chinese, and fuses them with vectors', () => {
      expectFusionKeepsBoth(zh);
      const text = zh.text!.recall;
      const fused = zh['text+vector']!.recall;
      // Indexed by PostgreSQL's `simple` parser, a Chinese sentence is one word: full text finds (almost) nothing.
      expect(text.lexical).toBeGreaterThanOrEqual(0.875);
      expect(text.mixed).toBeGreaterThanOrEqual(0.875);
      expect(fused.all).toBeGreaterThanOrEqual(0.95);
      expect(fused.mixed).toBeGreaterThan(zh.vector!.recall.mixed!);
      expect(zh.vector!.recall.paraphrase).toBeGreaterThan(text.paraphrase!);
    });

    it.each([
      ['Japanese', ja],
      ['Korean', ko],
    ])('finds %s passages by full text', async (_, corpus) => {
      const r = await recallAt5(store, llm.url, corpus, ['text']);
      for (const q of corpus.queries) expect(r.ranked[q.id]![0], `${q.id} ${q.text}`).toBe(q.relevant[0]);
    });

    it('stays inside the scope: another tenant, or no collection, finds nothing', async () => {
      const retrieve = createRetriever({ kb: store.knowledge, embedder: createEmbedder(testConfig(llm.url).knowledge.embedding) });
      const q = english.queries[0]!.text;
      const collectionId = english.collectionId;
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
