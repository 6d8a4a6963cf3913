// The parse activity's own bound on attempts whose worker died mid-parse: each attempt heartbeats
// that it began parsing (the details outlive a dead worker); an attempt that finds PARSE_STARTS
// such attempts before it fails the document for good instead of parsing again, and one that
// finds fewer parses and says so. A hostile file through the activity fails with the cap's type.
import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SafeFetcher } from '../../src/activities/crawl/safe-fetch';
import { chunkParsed, type ChunkOptions } from '../../src/activities/knowledge/chunk';
import { createEmbedder } from '../../src/activities/knowledge/embed';
import { contentHash, createIngestActivities, PARSE_STARTS } from '../../src/activities/knowledge/ingest';
import { parseDocument, type DocFormat } from '../../src/activities/knowledge/parse';
import { DEFAULT_PARSE_CAPS } from '../../src/activities/knowledge/parse-caps';
import { ParseSandbox } from '../../src/activities/knowledge/parse-thread';
import { createStore, type Store } from '../../src/activities/store';
import { ErrorType } from '../../src/shared/errors';
import { testConfig } from '../support/harness';
import { makeWideCsv } from '../support/hostile-files';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());

describe.skipIf(!ready)(`parse attempts (${ready ? 'live' : missingReason()})`, () => {
  const tenant = `kb-attempts-${randomBytes(4).toString('hex')}`;
  const collectionId = `C${randomBytes(8).toString('hex')}`;
  let pool: pg.Pool;
  let store: Store;
  const sandbox = new ParseSandbox({ threads: 1, memoryMb: 256, timeoutMs: 30_000, caps: DEFAULT_PARSE_CAPS });
  let parses = 0;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: databaseUrl()!, max: 3 });
    store = createStore(pool);
    await store.knowledge.createCollection({ collectionId, tenant, name: 'Attempts', description: '', language: 'english' });
  });
  afterAll(async () => {
    await pool?.query('DELETE FROM kb_collections WHERE tenant = $1', [tenant]);
    await pool?.end();
    await sandbox.close();
  });

  const ingest = () =>
    createIngestActivities({
      store,
      embedder: createEmbedder(testConfig(undefined).knowledge.embedding),
      fetcher: {} as SafeFetcher,
      limits: { maxFileBytes: 5_000_000, chunkTokens: 120, chunkOverlap: 0 },
      parser: {
        parseChunks: (bytes: Buffer, format: DocFormat, name: string, chunking: ChunkOptions) => {
          parses++;
          return format === 'csv'
            ? sandbox.parseChunks(bytes, format, name, chunking)
            : parseDocument(bytes, format, name).then((doc) => chunkParsed(doc, chunking));
        },
      },
    });

  async function addDocument(name: string, format: DocFormat, bytes: Buffer): Promise<string> {
    const documentId = `D${randomBytes(8).toString('hex')}`;
    await store.knowledge.addDocument({
      documentId,
      tenant,
      collectionId,
      name,
      format,
      contentType: 'text/plain',
      contentHash: contentHash(bytes),
      bytes,
      status: 'queued',
    });
    return documentId;
  }

  /** Runs parseDocument as a retry whose earlier attempts left `details`; the heartbeats it sends. */
  async function attempt(documentId: string, details: unknown) {
    const env = new MockActivityEnvironment({ activityId: randomBytes(4).toString('hex'), heartbeatDetails: details, attempt: 4 });
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const result = await env.run(ingest().parseDocument, { documentId }).catch((e: unknown) => e);
    return { result, beats };
  }

  it(`fails the document after ${PARSE_STARTS} attempts that began parsing and never ended, without parsing again`, async () => {
    const id = await addDocument('notes.txt', 'text', Buffer.from('Molten salt keeps heat for ten hours.'));
    const before = parses;
    const { result } = await attempt(id, { parsing: true, starts: PARSE_STARTS });
    expect(result).toBeInstanceOf(ApplicationFailure);
    expect((result as ApplicationFailure).nonRetryable).toBe(true);
    expect((result as ApplicationFailure).type).toBe(ErrorType.DocumentUnreadable);
    expect((result as Error).message).toMatch(/^notes\.txt: parsing began 3 times and each time its worker stopped/);
    expect(parses).toBe(before);
  });

  it("parses after fewer such attempts, counting this one while it parses, the next stage's beat clearing it", async () => {
    const id = await addDocument('notes.txt', 'text', Buffer.from('Molten salt keeps heat for ten hours.'));
    const { result, beats } = await attempt(id, { parsing: true, starts: PARSE_STARTS - 1 });
    expect(result).toMatchObject({ chunks: 1 });
    expect(beats[0]).toEqual({ parsing: true, starts: PARSE_STARTS });
    expect(beats.at(-1)).toBe('writing');
    // An attempt whose last beat is a later stage's (a later step failed) starts the count anew.
    const again = await attempt(id, 'writing');
    expect(again.beats[0]).toEqual({ parsing: true, starts: 1 });
  });

  it('fails a CSV past the column cap with DocumentTooLarge, non-retryable, after one parse', async () => {
    const id = await addDocument('wide.csv', 'csv', makeWideCsv(1_000_000));
    const before = parses;
    const { result } = await attempt(id, undefined);
    expect(result).toBeInstanceOf(ApplicationFailure);
    expect((result as ApplicationFailure).type).toBe(ErrorType.DocumentTooLarge);
    expect((result as ApplicationFailure).nonRetryable).toBe(true);
    expect((result as Error).message).toMatch(
      /^CSV: the file has more than 1,000 columns in a row; at most 1,000 are parsed \(KB_PARSE_MAX_COLUMNS\)$/,
    );
    expect(parses).toBe(before + 1);
  });
});
