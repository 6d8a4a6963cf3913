// The knowledge base's costs, in one run:
//  1. Ingestion throughput: a generated document through the real ingestion workflow (Temporal dev
//     server, PGlite, a worker) with the embeddings endpoint's latency held fixed; chunks per second
//     and the ratio of wall time to the embedding floor (batches ÷ parallel requests × latency).
//  2. Query latency at each corpus size (default 10k and 100k chunks, bulk-loaded): BM25 full
//     text, vector kNN and the fused hybrid retrieval, as ratios to a plain full-text query
//     (`tsv @@ plainto_tsquery ORDER BY ts_rank_cd`) on the same data. On PGlite with pgvector's
//     HNSW index, and with --pg URL also on a PostgreSQL without pgvector (exact scan).
//   node bin/run-ts.mjs bench/knowledge.ts [--sizes 10000,100000] [--ingest-chunks 1000] [--latency-ms 50] [--queries 30] [--pg ADMIN_URL]
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createKnowledgeService } from '../src/api/knowledge-service';
import { createEmbedder } from '../src/activities/knowledge/embed';
import { createRetriever } from '../src/activities/knowledge/retrieve';
import { createStore } from '../src/activities/store';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/infra/logger';
import { migrate } from '../src/infra/migrate';
import { createPool, startEmbeddedPostgres } from '../src/infra/postgres';
import { findTemporalCli } from '../src/infra/temporal-cli';
import { bundleWorkflows, createWorker } from '../src/worker';
import { embedText } from '../test/support/embeddings';
import { ScriptedLlmServer } from '../test/support/llm-server';
import { freePort } from '../test/support/spawn';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    'ingest-chunks': { type: 'string', default: '1000' },
    'latency-ms': { type: 'string', default: '50' },
    queries: { type: 'string', default: '30' },
    pg: { type: 'string' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const ingestChunks = Number(values['ingest-chunks']);
const latencyMs = Number(values['latency-ms']);
const queryCount = Number(values.queries);

// A vocabulary with a long tail, so that full-text queries have common and rare words.
const WORDS = Array.from({ length: 5_000 }, (_, i) => `w${i.toString(36)}`);
const TOPICS = ['solar', 'wind', 'battery', 'hydro', 'grid', 'storage', 'turbine', 'reservoir', 'cost', 'capacity', 'policy', 'emission'];
let seed = 42;
const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
const zipf = () => WORDS[Math.floor(WORDS.length ** rand()) - 1]!;
function passage(words = 90): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(rand() < 0.15 ? TOPICS[Math.floor(rand() * TOPICS.length)]! : zipf());
  return `${out.join(' ')}.`;
}

Runtime.install({ logger: new DefaultLogger('ERROR') });
const log = createLogger('warn');
const llm = await new ScriptedLlmServer().start();
const config = loadConfig({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'warn', EMBEDDING_BATCH: '64' });
const dirs: string[] = [];

async function pglite() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-kb-'));
  dirs.push(dir);
  const embedded = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), log });
  const pool = createPool(embedded.url, 8);
  await migrate(pool);
  return { pool, close: async () => (await pool.end(), await embedded.stop()) };
}

// ---- 1. ingestion ------------------------------------------------------------------------------
async function ingestion(): Promise<void> {
  const cli = findTemporalCli({ envPath: process.env.PATH, explicitPath: process.env.TEMPORAL_CLI_PATH, install: true });
  if (!cli) throw new Error('no Temporal CLI');
  const env = await TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: cli.path } } });
  const db = await pglite();
  const taskQueue = `bench-kb-${randomUUID()}`;
  const worker = await createWorker({
    config,
    connection: env.nativeConnection,
    pool: db.pool,
    taskQueue,
    workflowBundle: await bundleWorkflows(),
  });
  const running = worker.run();
  try {
    llm.embeddingDelayMs = latencyMs;
    const store = createStore(db.pool);
    const kb = createKnowledgeService({ client: env.client, taskQueue, store, limits: config.knowledge });
    const c = await kb.createCollection('bench', { name: 'bench', description: '', language: 'english' });
    // About one chunk per paragraph of ~280 tokens (KB_CHUNK_TOKENS 350).
    const text = Array.from({ length: ingestChunks }, () => passage(180)).join('\n\n');
    const started = performance.now();
    const { document } = await kb.addDocument('bench', c.collectionId, {
      upload: { name: 'bench.txt', contentType: 'text/plain', bytes: Buffer.from(text) },
    });
    await env.client.workflow.getHandle(`ingest-${document.id}`).result();
    const wall = performance.now() - started;
    const done = (await store.knowledge.getDocument(document.id))!;
    const batches = Math.ceil(done.chunksTotal / config.knowledge.embedding.batch);
    const floor = Math.ceil(batches / 4) * latencyMs;
    console.log(
      `ingestion: ${done.chunksTotal} chunks (${(text.length / 1e6).toFixed(1)} MB of text), ${batches} batches of ${config.knowledge.embedding.batch}, ` +
        `embedding latency ${latencyMs} ms: wall ${wall.toFixed(0)} ms = ${((done.chunksTotal * 1000) / wall).toFixed(0)} chunks/s; ` +
        `embedding floor ${floor} ms, wall ÷ floor = ${(wall / floor).toFixed(2)}`,
    );
  } finally {
    worker.shutdown();
    await running;
    await db.close();
    await env.teardown();
  }
}

// ---- 2. queries --------------------------------------------------------------------------------
/** Loads `n` chunks in one collection with SQL in bulk (the ingestion path is measured above). */
async function load(pool: pg.Pool, n: number, vectors: boolean): Promise<string> {
  const collectionId = 'C0000000000bench0';
  await pool.query('DELETE FROM kb_collections WHERE collection_id = $1', [collectionId]);
  await pool.query(`INSERT INTO kb_collections (collection_id, tenant, name) VALUES ($1, 'bench', 'bench')`, [collectionId]);
  const perDoc = 500;
  for (let d = 0; d * perDoc < n; d++) {
    const documentId = `D${d.toString(16).padStart(16, '0')}`;
    await pool.query(`INSERT INTO kb_documents (document_id, tenant, collection_id, name, status) VALUES ($1, 'bench', $2, $1, 'ready')`, [
      documentId,
      collectionId,
    ]);
    const rows = Array.from({ length: Math.min(perDoc, n - d * perDoc) }, (_, seq) => {
      const text = passage();
      return { seq, text, embedding: embedText(text) };
    });
    await pool.query(
      `INSERT INTO kb_chunks (document_id, seq, tenant, collection_id, text, tokens, tsv, embedding, dims, model ${vectors ? ', vec' : ''})
       SELECT $1, x.seq, 'bench', $2, x.text, 100, to_tsvector('english', x.text), x.embedding, 256, $4 ${vectors ? ', x.embedding::vector' : ''}
       FROM jsonb_to_recordset($3::jsonb) AS x(seq int, text text, embedding real[])`,
      [documentId, collectionId, JSON.stringify(rows), config.knowledge.embedding.model],
    );
    await pool.query('UPDATE kb_documents SET chunks_total = $2, chunks_embedded = $2 WHERE document_id = $1', [documentId, rows.length]);
  }
  return collectionId;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Median latency of `fn` over the queries, after one warm-up call. */
async function time(fn: (q: string) => Promise<unknown>, queries: string[]): Promise<number> {
  await fn(queries[0]!);
  const samples: number[] = [];
  for (const q of queries) {
    const t = performance.now();
    await fn(q);
    samples.push(performance.now() - t);
  }
  return median(samples);
}

async function queries(label: string, pool: pg.Pool, n: number): Promise<void> {
  const store = createStore(pool);
  const mode = await store.knowledge.vectorMode();
  const loadStarted = performance.now();
  const collectionId = await load(pool, n, mode === 'pgvector');
  const loadMs = performance.now() - loadStarted;
  let indexMs = 0;
  if (mode === 'pgvector') {
    const t = performance.now();
    await store.knowledge.ensureVectorIndex(256);
    indexMs = performance.now() - t;
  }
  await pool.query('ANALYZE kb_chunks');
  llm.embeddingDelayMs = 0;
  const scope = { tenant: 'bench', collectionIds: [collectionId] };
  const retrieve = createRetriever({ kb: store.knowledge, embedder: createEmbedder(config.knowledge.embedding) });
  const qs = Array.from({ length: queryCount }, () => `${TOPICS[Math.floor(rand() * TOPICS.length)]} ${zipf()} ${zipf()} ${zipf()}`);
  const vectorsOf = new Map(qs.map((q) => [q, embedText(q)]));
  const plain = await time(
    (q: string) =>
      pool.query(
        `SELECT document_id, seq FROM kb_chunks c, plainto_tsquery('english', $1) q WHERE c.tsv @@ q AND c.tenant = 'bench' AND c.collection_id = $2
         ORDER BY ts_rank_cd(c.tsv, q) DESC LIMIT 10`,
        [q, collectionId],
      ),
    qs,
  );
  const bm25 = await time((q: string) => store.knowledge.fullTextSearch(scope, q, 'english', 32), qs);
  const knn = await time((q: string) => store.knowledge.vectorSearch(scope, vectorsOf.get(q)!, config.knowledge.embedding.model, 32), qs);
  const hybrid = await time((q: string) => retrieve(scope, [q], { k: 8 }), qs);
  const r = (x: number) => `${x.toFixed(1)} ms (×${(x / plain).toFixed(2)})`;
  console.log(
    `${label}, ${n.toLocaleString('en-US')} chunks, vectors by ${mode} (load ${(loadMs / 1000).toFixed(0)} s${indexMs ? `, HNSW build ${(indexMs / 1000).toFixed(0)} s` : ''}), ` +
      `median of ${qs.length} queries: plain full text ${plain.toFixed(1)} ms (×1.00) | BM25 ${r(bm25)} | vector kNN ${r(knn)} | hybrid (both + RRF + rows) ${r(hybrid)}`,
  );
}

try {
  await ingestion();
  for (const n of sizes) {
    const db = await pglite();
    try {
      await queries('PGlite', db.pool, n);
    } finally {
      await db.close();
    }
    if (values.pg) {
      // A database of its own on the server --pg points at (a role that may create databases).
      const name = `bench_kb_${randomUUID().slice(0, 8)}`;
      const admin = createPool(values.pg, 1);
      await admin.query(`CREATE DATABASE ${name}`);
      const url = new URL(values.pg);
      url.pathname = `/${name}`;
      const pool = createPool(url.toString(), 4);
      try {
        await migrate(pool);
        await queries('PostgreSQL', pool, n);
      } finally {
        await pool.end();
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      }
    }
  }
} finally {
  await llm.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
