// Ingestion survives a killed worker: SIGKILL a worker process while a document's batches are
// being embedded, start another, and the document ends ready with each chunk stored once and no
// batch that had been answered before the kill embedded again.
import { afterAll, describe, expect, it } from 'vitest';
import { createKnowledgeService } from '../../src/api/knowledge-service';
import { createStore } from '../../src/activities/store';
import { createPool } from '../../src/infra/postgres';
import { testConfig } from '../support/harness';
import { workerProcesses } from '../support/faults';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`knowledge base durability (${ready ? 'live' : missingReason()})`, () => {
  const env = {
    EMBEDDING_BATCH: '2',
    KB_CHUNK_TOKENS: '60',
    KB_CHUNK_OVERLAP: '0',
    RETRY_INITIAL_INTERVAL: '200ms',
    RETRY_MAX_INTERVAL: '1s',
    // A killed worker's embedding batch is noticed in seconds, not the default 15.
    LLM_HEARTBEAT_TIMEOUT: '3s',
  };
  const f = workerProcesses('kb-durability', env);
  const pool = createPool(databaseUrl() ?? 'postgres://unused', 3);
  afterAll(() => pool.end());

  it('finishes an ingestion whose worker was SIGKILLed mid-embedding, without duplicate chunks or re-embedding stored ones', async () => {
    const { llm } = f;
    llm.embeddingDelayMs = 400;
    const config = testConfig(llm.url, env);
    const store = createStore(pool);
    const kb = createKnowledgeService({ client: f.client, taskQueue: f.taskQueue, store, limits: config.knowledge, retry: config.retry });
    const tenant = `kbd-${Date.now()}`;
    const collection = await kb.createCollection(tenant, { name: 'durable', description: '', language: 'english' });
    const first = f.startWorker();
    await first.waitFor(/worker ready/, 60_000);

    const text = Array.from({ length: 120 }, (_, i) => `Section ${i}: the reservoir at site ${i} stores ${i * 7} megawatt-hours.`).join(
      '\n\n',
    );
    const { document } = await kb.addDocument(tenant, collection.collectionId, {
      upload: { name: 'sites.txt', contentType: 'text/plain', bytes: Buffer.from(text) },
    });
    // Kill once some batches are stored and others are still to come.
    const embeddedNow = async () => (await store.knowledge.getDocument(document.id))?.chunksEmbedded ?? 0;
    for (const end = Date.now() + 30_000; (await embeddedNow()) < 6;) {
      if (Date.now() > end) throw new Error(`no embeddings stored:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    first.child.kill('SIGKILL');
    await first.exited(10_000);
    const killedAt = Date.now();
    // What the dead worker had stored; an answer it received but had not stored yet is the cut-off call.
    const stored = await pool.query<{ text: string }>('SELECT text FROM kb_chunks WHERE document_id = $1 AND embedding IS NOT NULL', [
      document.id,
    ]);
    expect(stored.rowCount).toBeGreaterThan(0);
    const mid = await store.knowledge.getDocument(document.id);
    expect(mid!.status).toBe('embedding');
    expect(mid!.chunksEmbedded).toBeLessThan(mid!.chunksTotal);

    const second = f.startWorker();
    await second.waitFor(/worker ready/, 60_000);
    const result = await f.client.workflow.getHandle(`ingest-${document.id}`).result();
    expect(result).toMatchObject({ stage: 'ready' });

    const done = await store.knowledge.getDocument(document.id);
    expect(done).toMatchObject({ status: 'ready', chunksEmbedded: done!.chunksTotal });
    const { rows } = await pool.query(
      'SELECT count(*)::int AS n, count(DISTINCT seq)::int AS seqs, count(embedding)::int AS embedded FROM kb_chunks WHERE document_id = $1',
      [document.id],
    );
    expect(rows[0]).toEqual({ n: done!.chunksTotal, seqs: done!.chunksTotal, embedded: done!.chunksTotal });
    // No chunk whose embedding was stored before the kill was sent again after it.
    const earlier = new Set(stored.rows.map((r) => r.text));
    const after = llm.embeddingRequests.filter((r) => r.startedAt > killedAt).flatMap((r) => r.texts);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((t) => earlier.has(t))).toEqual([]);
  }, 120_000);
});
