// An embeddings endpoint that has no embeddings (llama-server started without --embeddings, a
// chat-only model) against a double that answers exactly as llama-server does: the embedder fails
// at once, non-retryably, with LlmUnsupported and remembers it for a while; ingestion keeps the
// passages without vectors and full-text search finds them; knowledge search answers by full text
// and says so. Outages (503 while the model loads, 429, a refused connection) stay retryable.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import request from 'supertest';
import { ApplicationFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chunkParsed } from '../../src/activities/knowledge/chunk';
import { createEmbedder, EmbeddingSupport } from '../../src/activities/knowledge/embed';
import { describeEmbeddings, describeModels, probeLlmServer } from '../../src/activities/knowledge/probe';
import { contentHash, createIngestActivities } from '../../src/activities/knowledge/ingest';
import { parseDocument } from '../../src/activities/knowledge/parse';
import { createRetriever } from '../../src/activities/knowledge/retrieve';
import { createKnowledgeSearchActivities } from '../../src/activities/knowledge/search';
import { fallbackNotes } from '../../src/activities/role-kit/fallbacks';
import type { SafeFetcher } from '../../src/activities/crawl/safe-fetch';
import { createStore, type Store } from '../../src/activities/store';
import { ErrorType } from '../../src/shared/errors';
import { LLAMA_LOADING, LLAMA_NO_EMBEDDINGS, LlamaServerDouble, llamaError } from '../support/embeddings';
import { startHarness, testConfig } from '../support/harness';
import { listen } from '../support/http';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const servers: LlamaServerDouble[] = [];
async function llamaServer(): Promise<LlamaServerDouble> {
  const s = await new LlamaServerDouble().start();
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** An embedder of `server` with its own capability cache on a clock the test moves. */
function embedderOf(server: LlamaServerDouble, recheckMs = 60_000) {
  const clock = { now: 1_000_000 };
  const support = new EmbeddingSupport(() => clock.now, recheckMs);
  return { embedder: createEmbedder(testConfig(server.url).knowledge.embedding, { support }), clock };
}

const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: unknown) => err,
  );

describe('an embeddings endpoint without embeddings', () => {
  it("llama-server's 501 fails non-retryably with LlmUnsupported after one request, and says what to do", async () => {
    const llama = await llamaServer();
    const { embedder } = embedderOf(llama);
    const err = await failureOf(embedder.embed(['pumped hydro']));
    expect(err).toBeInstanceOf(ApplicationFailure);
    const failure = err as ApplicationFailure;
    expect(failure.type).toBe(ErrorType.LlmUnsupported);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('This server does not support embeddings');
    expect(failure.message).toMatch(/501/);
    expect(failure.message).toMatch(/llama-server with --embeddings/);
    expect(failure.message).toMatch(/EMBEDDING_BASE_URL and EMBEDDING_MODEL/);
    expect(llama.requests).toEqual([{ method: 'POST', path: '/v1/embeddings', status: 501 }]);
  });

  it('remembers the answer (no request per call) and asks again after the recheck interval', async () => {
    const llama = await llamaServer();
    const { embedder, clock } = embedderOf(llama, 60_000);
    await failureOf(embedder.embed(['a']));
    for (let i = 0; i < 3; i++) {
      const again = (await failureOf(embedder.embed(['b']))) as ApplicationFailure;
      expect(again.type).toBe(ErrorType.LlmUnsupported);
      expect(again.nonRetryable).toBe(true);
    }
    expect(llama.embeddingRequests()).toBe(1);
    clock.now += 59_000;
    await failureOf(embedder.embed(['c']));
    expect(llama.embeddingRequests()).toBe(1);
    // Restarted with --embeddings: after the interval the next call asks, and gets vectors.
    llama.embeddings = true;
    clock.now += 2_000;
    const { vectors } = await embedder.embed(['c', 'd']);
    expect(vectors).toHaveLength(2);
    expect(llama.embeddingRequests()).toBe(2);
    await embedder.embed(['e']);
    expect(llama.embeddingRequests()).toBe(3);
  });

  it.each([
    ['404 on the embeddings path', llamaError(404, 'File Not Found', 'not_found_error')],
    ['400 naming the feature', llamaError(400, 'this model does not support embeddings', 'invalid_request_error')],
    ['500 naming the flag', llamaError(500, 'embeddings disabled: restart with --embeddings', 'server_error')],
  ])('a %s is LlmUnsupported too', async (_name, body) => {
    const llama = await llamaServer();
    llama.embeddings = true;
    llama.answerNext(1, body);
    const { embedder } = embedderOf(llama);
    const err = (await failureOf(embedder.embed(['x']))) as ApplicationFailure;
    expect(err.type).toBe(ErrorType.LlmUnsupported);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toMatch(/EMBEDDING_BASE_URL/);
    // Remembered like the 501: the next call fails without asking (the server would answer now).
    expect(((await failureOf(embedder.embed(['y']))) as ApplicationFailure).type).toBe(ErrorType.LlmUnsupported);
    expect(llama.embeddingRequests()).toBe(1);
  });

  it('a 503 while the model loads, a plain 500, a 429 and a refused connection stay retryable and are not remembered', async () => {
    const llama = await llamaServer();
    llama.embeddings = true;
    llama.answerNext(1, LLAMA_LOADING);
    llama.answerNext(1, llamaError(500, 'Internal error', 'server_error'));
    llama.answerNext(1, llamaError(429, 'Too many requests', 'rate_limit_error'));
    const { embedder } = embedderOf(llama);
    const retryable = (err: unknown) => !(err instanceof ApplicationFailure && err.nonRetryable);

    const loading = await failureOf(embedder.embed(['x']));
    expect(retryable(loading)).toBe(true);
    expect((loading as Error).message).toMatch(/503/);
    expect(retryable(await failureOf(embedder.embed(['x'])))).toBe(true);
    const limited = await failureOf(embedder.embed(['x']));
    expect(limited).toBeInstanceOf(ApplicationFailure);
    expect((limited as ApplicationFailure).type).toBe(ErrorType.LlmRateLimited);
    expect(retryable(limited)).toBe(true);
    // None of them was taken for "no embeddings": the next call asks and gets its vector.
    expect((await embedder.embed(['x'])).vectors).toHaveLength(1);
    expect(llama.embeddingRequests()).toBe(4);

    await llama.close();
    const refused = await failureOf(embedder.embed(['x']));
    expect(retryable(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/failed to connect/);
  });

  it('the double answers byte for byte what llama-server sends', async () => {
    const llama = await llamaServer();
    const res = await fetch(`${llama.url}/embeddings`, { method: 'POST', body: JSON.stringify({ input: 'x' }) });
    expect(res.status).toBe(501);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.text()).toBe(
      '{"error":{"code":501,"message":"This server does not support embeddings. Start it with `--embeddings`","type":"not_supported_error"}}',
    );
    expect(LLAMA_NO_EMBEDDINGS.error.code).toBe(501);
  });
});

describe("the dev banner's probe of the LLM server", () => {
  it('says embeddings are not available at a llama-server without --embeddings, and the worker beside it remembers', async () => {
    const llama = await llamaServer();
    const config = testConfig(llama.url);
    const support = new EmbeddingSupport();
    const probe = await probeLlmServer(config, { support });
    expect(probe.models).toEqual({ state: 'ok', ids: [llama.modelAlias] });
    expect(probe.embeddings).toMatchObject({ state: 'unsupported', status: 501 });
    expect(describeModels(probe.models)).toBe(`, serves ${llama.modelAlias}`);
    expect(describeEmbeddings(probe.embeddings, config.knowledge.embedding)).toBe(
      `not available at ${llama.url} (501: start llama-server with --embeddings; or set EMBEDDING_BASE_URL and EMBEDDING_MODEL) — knowledge search uses full-text only`,
    );
    expect(llama.embeddingRequests()).toBe(1);
    const embedder = createEmbedder(config.knowledge.embedding, { support });
    expect(((await failureOf(embedder.embed(['x']))) as ApplicationFailure).type).toBe(ErrorType.LlmUnsupported);
    expect(llama.embeddingRequests()).toBe(1);
  });

  it('says what answered when embeddings are there', async () => {
    const llama = await llamaServer();
    llama.embeddings = true;
    const config = testConfig(llama.url);
    const probe = await probeLlmServer(config, { support: new EmbeddingSupport() });
    expect(probe.embeddings).toEqual({ state: 'ok', dims: 256 });
    expect(describeEmbeddings(probe.embeddings, config.knowledge.embedding)).toBe(
      `text-embedding-3-small at ${llama.url} (answered, 256 dimensions)`,
    );
  });

  it('says "not reachable" for a server that is down or silent, within its timeout, and remembers nothing', async () => {
    const llama = await llamaServer();
    const downUrl = llama.url;
    await llama.close();
    const support = new EmbeddingSupport();
    const down = await probeLlmServer(testConfig(downUrl), { support, timeoutMs: 1_000 });
    expect(down.models).toEqual({ state: 'unreachable', reason: 'ECONNREFUSED' });
    expect(down.embeddings).toEqual({ state: 'unreachable', reason: 'ECONNREFUSED' });
    expect(describeModels(down.models)).toBe(': not reachable (ECONNREFUSED); runs wait for it');

    const silent = await listen(() => undefined);
    try {
      const started = Date.now();
      const hung = await probeLlmServer(testConfig(`${silent.url}/v1`), { support, timeoutMs: 300 });
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(hung.models).toEqual({ state: 'unreachable', reason: 'no answer within 0.3 s' });
      expect(hung.embeddings).toEqual({ state: 'unreachable', reason: 'no answer within 0.3 s' });
    } finally {
      await silent.close();
    }
    const key = `${downUrl} text-embedding-3-small`;
    expect(support.unsupported(key)).toBeUndefined();
  });
});

const ready = Boolean(databaseUrl());

describe.skipIf(!ready)(`ingestion and knowledge search without embeddings (${ready ? 'live' : missingReason()})`, () => {
  const tenant = `kb-noemb-${randomBytes(4).toString('hex')}`;
  const collectionId = `C${randomBytes(8).toString('hex')}`;
  let pool: pg.Pool;
  let store: Store;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: databaseUrl()!, max: 3 });
    store = createStore(pool);
    await store.knowledge.createCollection({ collectionId, tenant, name: 'Veyra', description: 'plant fact sheets', language: 'english' });
  });
  afterAll(async () => {
    await pool?.query('DELETE FROM kb_collections WHERE tenant = $1', [tenant]);
    await pool?.end();
  });

  /** A Markdown document of several chunks: the plant's capacity sits in its second section. */
  function veyraMarkdown(): Buffer {
    const filler = (topic: string) =>
      Array.from({ length: 40 }, (_, i) => `The ${topic} paragraph ${i} describes routine matters of the valley.`).join(' ');
    return Buffer.from(
      `# Lake Veyra\n\n## History\n\n${filler('history')}\n\n## Plant\n\nThe Lake Veyra pumped hydro plant has a capacity of 412 MW ` +
        `and stores 3.1 GWh in its upper reservoir.\n\n## Ecology\n\n${filler('ecology')}\n`,
    );
  }

  it('ingestion stores the passages without vectors and a note, after one request, and full-text search finds them', async () => {
    const llama = await llamaServer();
    const { embedder } = embedderOf(llama);
    const config = testConfig(llama.url, { KB_CHUNK_TOKENS: '120', KB_CHUNK_OVERLAP: '0' });
    const ingest = createIngestActivities({
      store,
      embedder,
      fetcher: { get: () => Promise.reject(new Error('no URL documents here')) } as unknown as SafeFetcher,
      limits: { maxFileBytes: config.knowledge.maxFileBytes, chunkTokens: 120, chunkOverlap: 0 },
      parser: { parseChunks: (bytes, format, name, chunking) => parseDocument(bytes, format, name).then((d) => chunkParsed(d, chunking)) },
    });
    const bytes = veyraMarkdown();
    const documentId = `D${randomBytes(8).toString('hex')}`;
    await store.knowledge.addDocument({
      documentId,
      tenant,
      collectionId,
      name: 'veyra.md',
      format: 'markdown',
      contentType: 'text/markdown',
      contentHash: contentHash(bytes),
      bytes,
      status: 'queued',
    });
    const env = () => new MockActivityEnvironment({ activityId: randomBytes(4).toString('hex') });
    const parsed: { chunks: number } = await env().run(ingest.parseDocument, { documentId });
    expect(parsed.chunks).toBeGreaterThanOrEqual(3);

    // Two batches, as the workflow sends them: neither fails, and only the first asks the server.
    const half = Math.ceil(parsed.chunks / 2);
    const first = await env().run(ingest.embedChunks, { documentId, fromSeq: 0, toSeq: half });
    const second = await env().run(ingest.embedChunks, { documentId, fromSeq: half, toSeq: parsed.chunks });
    expect(first).toEqual({ embedded: 0, dims: 0, withoutVectors: true });
    expect(second).toEqual({ embedded: 0, dims: 0, withoutVectors: true });
    expect(llama.embeddingRequests()).toBe(1);

    await env().run(ingest.finishDocument, { documentId });
    const doc = (await store.knowledge.getDocument(documentId))!;
    expect(doc.status).toBe('ready');
    expect(doc.chunksTotal).toBe(parsed.chunks);
    expect(doc.chunksEmbedded).toBe(0);
    expect(doc.error).toMatch(/^Stored without vectors: its passages are found by full-text search only\./);
    expect(doc.error).toMatch(/--embeddings/);
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM kb_chunks WHERE document_id = $1 AND embedding IS NULL', [
      documentId,
    ]);
    expect(rows[0].n).toBe(parsed.chunks);

    // Knowledge search: full-text hits, a warning, one fallback note however often it is asked.
    const { knowledgeSearch } = createKnowledgeSearchActivities({ store, retrieve: createRetriever({ kb: store.knowledge, embedder }) });
    const researchId = `research-noemb-${randomBytes(4).toString('hex')}`;
    const scope = { tenant, collectionIds: [collectionId] };
    const found = await knowledgeSearch({ researchId, query: 'Lake Veyra pumped hydro capacity', scope });
    expect(found.vectors).toBe('unavailable');
    expect(found.warning).toMatch(/--embeddings/);
    expect(found.results.length).toBeGreaterThan(0);
    expect(found.text).toContain('Full-text matches only');
    expect(found.text).toContain('412 MW');
    const again = await knowledgeSearch({ researchId, query: 'reservoir storage GWh', scope });
    expect(again.text).toContain('3.1 GWh');
    expect(llama.embeddingRequests()).toBe(1);
    const notes = await fallbackNotes(store, researchId);
    expect(notes).toEqual([
      'Fallback (knowledge search): searched the knowledge base by full text only, because the model server lacks a feature this call needs.',
    ]);
  });

  it('a 503 from the embeddings endpoint still fails the batch retryably, leaving the document as it was', async () => {
    const llama = await llamaServer();
    llama.embeddings = true;
    llama.answerNext(1, LLAMA_LOADING);
    const { embedder } = embedderOf(llama);
    const ingest = createIngestActivities({
      store,
      embedder,
      fetcher: {} as SafeFetcher,
      limits: { maxFileBytes: 1_000_000, chunkTokens: 120, chunkOverlap: 0 },
      parser: { parseChunks: (bytes, format, name, chunking) => parseDocument(bytes, format, name).then((d) => chunkParsed(d, chunking)) },
    });
    const bytes = Buffer.from(`# Note\n\nWind turbines at sea ${randomBytes(4).toString('hex')}.\n`);
    const documentId = `D${randomBytes(8).toString('hex')}`;
    await store.knowledge.addDocument({ documentId, tenant, collectionId, name: 'n.md', format: 'markdown', bytes, status: 'queued' });
    const env = () => new MockActivityEnvironment({ activityId: randomBytes(4).toString('hex') });
    const { chunks }: { chunks: number } = await env().run(ingest.parseDocument, { documentId });
    const err = await failureOf(env().run(ingest.embedChunks, { documentId, fromSeq: 0, toSeq: chunks }));
    expect(err instanceof ApplicationFailure && err.nonRetryable).toBe(false);
    expect((await store.knowledge.getDocument(documentId))!.error).toBeNull();
    // Temporal's next attempt: the model has loaded.
    expect(await env().run(ingest.embedChunks, { documentId, fromSeq: 0, toSeq: chunks })).toMatchObject({ embedded: chunks });
  });
});

const live = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!live)(`the ingestion workflow without embeddings (${live ? 'live' : missingReason()})`, () => {
  it('an upload ends ready, its passages without vectors and a note, after one embeddings request', async () => {
    const llama = await llamaServer();
    const h = await startHarness({ env: { EMBEDDING_BASE_URL: llama.url } });
    try {
      const tenant = `kb-noemb-wf-${randomBytes(4).toString('hex')}`;
      const send = (r: request.Test) => r.set('x-tenant-id', tenant);
      const collection = (await send(request(h.app).post('/v1/collections')).send({ name: 'Veyra' }).expect(201)).body.id as string;
      const text = '# Lake Veyra\n\nThe Lake Veyra pumped hydro plant has a capacity of 412 MW.\n';
      const id = (
        await send(request(h.app).post(`/v1/collections/${collection}/documents`))
          .attach('file', Buffer.from(text), { filename: 'veyra.md', contentType: 'text/markdown' })
          .expect(202)
      ).body.id as string;
      let doc: { status: string; chunks: number; embedded: number; error?: string };
      for (let i = 0; ; i++) {
        doc = (await send(request(h.app).get(`/v1/collections/${collection}/documents/${id}`)).expect(200)).body;
        if (doc.status === 'ready' || doc.status === 'failed') break;
        if (i > 150) throw new Error(`document still ${doc.status} (an embeddings failure retried?)`);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(doc.status).toBe('ready');
      expect(doc.chunks).toBeGreaterThan(0);
      expect(doc.embedded).toBe(0);
      expect(doc.error).toMatch(/^Stored without vectors/);
      expect(llama.embeddingRequests()).toBe(1);
    } finally {
      await h.close();
    }
  });
});
