// The ingestion workflow's activities: fetch (for a URL), parse and chunk, embed in batches,
// finish. Each is idempotent on the document's id: a retried parse deletes what an attempt before
// it wrote and writes the chunks again, a retried batch embeds only the chunks still without a
// vector. An endpoint without embeddings does not fail the document: its passages stay, without
// vectors, found by full text.
import { createHash } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import { decodeOrKeep } from '../../shared/text';
import { SkippedError, type FetchedPage, type SafeFetcher } from '../crawl/safe-fetch';
import { BlockedError } from '../crawl/ssrf';
import type { Store } from '../store';
import type { ChunkOptions } from './chunk';
import { beating } from '../beat';
import { isEmbeddingsUnsupported, withHeartbeat, type Embedder } from './embed';
import { contentTypeOf, detectFormat, DocumentTooLarge, DocumentUnreadable, type DocFormat } from './parse';
import type { DocumentChunker } from './parse-thread';

export interface IngestLimits {
  maxFileBytes: number;
  chunkTokens: number;
  chunkOverlap: number;
}

export function contentHash(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The note a ready document keeps when its passages have no vectors (shown as its `error`). */
export function withoutVectorsNote(reason: string): string {
  return summarize(`Stored without vectors: its passages are found by full-text search only. ${reason}`, 1_000);
}

/** What an embedding model reads for a chunk: where it sits in the document, then its text. */
export function embeddingText(c: { headingPath: string[]; text: string }): string {
  return c.headingPath.length ? `${c.headingPath.join(' › ')}\n${c.text}` : c.text;
}

const notFound = (id: string) => ApplicationFailure.nonRetryable(`document ${id} no longer exists (deleted?)`, ErrorType.NotFound);

/** The document's page, through the crawler's SSRF guard; a page that cannot be had is permanent. */
async function fetchFromUrl(fetcher: SafeFetcher, url: string): Promise<FetchedPage> {
  try {
    return await fetcher.get(url, { signal: Context.current().cancellationSignal });
  } catch (err) {
    if (err instanceof BlockedError || err instanceof SkippedError) {
      throw ApplicationFailure.nonRetryable(`${url}: ${err.message}`, ErrorType.DocumentFetchFailed);
    }
    const status = (err as { status?: number }).status;
    if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
      throw ApplicationFailure.nonRetryable(`${url} answered ${status}`, ErrorType.DocumentFetchFailed);
    }
    throw err;
  }
}

/** The fetched file's format, from its name (the URL's last segment), content type and first bytes. */
function fetchedFormat(page: FetchedPage, url: string, docName: string): DocFormat {
  const name = decodeOrKeep(new URL(page.finalUrl).pathname.split('/').filter(Boolean).pop() ?? '') || docName;
  const format = detectFormat(name, page.contentType, page.body.subarray(0, 4096));
  if (!format) {
    throw ApplicationFailure.nonRetryable(
      `${url}: content type "${page.contentType}" is not a format the knowledge base reads`,
      ErrorType.DocumentUnsupported,
    );
  }
  return format;
}

/**
 * Attempts of one document's parse that may end with their worker gone (killed, crashed, lost)
 * before the document fails. The parse thread contains a parser's crash, its memory and its
 * time, so a worker that dies while parsing is rare; one that dies every time must not be
 * retried for as long as the retry policy allows.
 */
export const PARSE_STARTS = 3;

/** What a parse attempt heartbeats while it parses: how many attempts in a row began parsing and
 *  never got past it (the details outlive an attempt whose worker died; the next stage's beat,
 *  "writing", replaces them). */
interface ParseBeat {
  parsing: boolean;
  starts: number;
}

/** Attempts before this one that began parsing and never ended; refused past PARSE_STARTS. */
function parseStartsSoFar(name: string): number {
  const last = Context.current().info.heartbeatDetails as Partial<ParseBeat> | undefined;
  const starts = last?.parsing ? (last.starts ?? 0) : 0;
  if (starts >= PARSE_STARTS) {
    throw ApplicationFailure.nonRetryable(
      `${name}: parsing began ${starts} times and each time its worker stopped before it ended (a crash, a kill or a lost worker): not tried again`,
      ErrorType.DocumentUnreadable,
    );
  }
  return starts;
}

/** The stored file parsed and chunked on a parse thread (heartbeating meanwhile); a file no parser
 *  can read, or one past a parse cap, or whose parse crashed its thread, is a permanent fault. */
async function parseStored(parser: DocumentChunker, bytes: Buffer, format: DocFormat, name: string, chunking: ChunkOptions) {
  const ctx = Context.current();
  const parsing: ParseBeat = { parsing: true, starts: parseStartsSoFar(name) + 1 };
  ctx.heartbeat(parsing); // the first heartbeat of an attempt is sent at once
  try {
    return await beating(() => parser.parseChunks(bytes, format, name, chunking), parsing); // the next stage's beat clears it
  } catch (err) {
    if (err instanceof DocumentTooLarge) throw ApplicationFailure.nonRetryable(err.message, ErrorType.DocumentTooLarge);
    if (err instanceof DocumentUnreadable) throw ApplicationFailure.nonRetryable(err.message, ErrorType.DocumentUnreadable);
    throw ApplicationFailure.nonRetryable(
      `${format} parser failed: ${err instanceof Error ? err.message : String(err)}`,
      ErrorType.DocumentUnreadable,
    );
  }
}

export interface IngestDeps {
  store: Store;
  embedder: Embedder;
  fetcher: SafeFetcher;
  limits: IngestLimits;
  /** The parse threads (parse-thread.ts), which chunk the documents too. */
  parser: DocumentChunker;
}

/** A document added by URL: fetched through the crawler's SSRF guard, then stored as an upload. */
async function fetchDocument(deps: IngestDeps, input: { documentId: string }): Promise<{ format: DocFormat; size: number }> {
  const kb = deps.store.knowledge;
  const doc = await kb.getDocument(input.documentId);
  if (!doc) throw notFound(input.documentId);
  if (doc.format && doc.contentHash) return { format: doc.format as DocFormat, size: doc.size };
  if (!doc.sourceUrl)
    throw ApplicationFailure.nonRetryable(`document ${doc.documentId} has neither bytes nor a URL`, ErrorType.InvalidInput);
  await kb.updateDocument(doc.documentId, { status: 'fetching' });
  const page = await fetchFromUrl(deps.fetcher, doc.sourceUrl);
  const format = fetchedFormat(page, doc.sourceUrl, doc.name);
  await kb.updateDocument(doc.documentId, {
    bytes: page.body,
    format,
    contentType: contentTypeOf(format),
    contentHash: contentHash(page.body),
    status: 'parsing',
  });
  return { format, size: page.body.length };
}

/** Parses and chunks the stored bytes on a parse thread, then writes the chunks (replacing any a
 *  failed attempt left) in small statements. */
async function parseDocument(deps: IngestDeps, input: { documentId: string }): Promise<{ chunks: number; title: string; pages?: number }> {
  const kb = deps.store.knowledge;
  const doc = await kb.getDocument(input.documentId);
  if (!doc) throw notFound(input.documentId);
  const bytes = await kb.getDocumentBytes(doc.documentId);
  if (!bytes || !doc.format) throw ApplicationFailure.nonRetryable(`document ${doc.documentId} has no stored file`, ErrorType.InvalidInput);
  await kb.updateDocument(doc.documentId, { status: 'parsing' });
  const chunking = { maxTokens: deps.limits.chunkTokens, overlapTokens: deps.limits.chunkOverlap };
  const parsed = await parseStored(deps.parser, bytes, doc.format as DocFormat, doc.name, chunking);
  Context.current().heartbeat('writing');
  const { chunks } = parsed;
  if (!chunks.length) throw ApplicationFailure.nonRetryable(`${doc.name}: no text found`, ErrorType.DocumentUnreadable);
  const title = summarize(parsed.title || doc.name, 300);
  const written = await beating(() => kb.replaceChunks(doc.documentId, chunks, { title, pages: parsed.pages }), 'writing');
  if (!written) throw notFound(doc.documentId);
  await kb.updateDocument(doc.documentId, { status: deps.embedder.enabled ? 'embedding' : 'ready' });
  return { chunks: chunks.length, title, ...(parsed.pages ? { pages: parsed.pages } : {}) };
}

/**
 * Embeds the chunks in [fromSeq, toSeq) that have no vector yet; returns the document's count.
 * An endpoint that has no embeddings leaves the batch without vectors (`withoutVectors`) and a
 * note on the document, instead of a failure retried until the run's outage budget is spent.
 */
async function embedChunks(
  deps: IngestDeps,
  input: { documentId: string; fromSeq: number; toSeq: number },
): Promise<{ embedded: number; dims: number; withoutVectors?: true }> {
  const kb = deps.store.knowledge;
  if (!deps.embedder.enabled) return { embedded: 0, dims: 0 };
  const pending = await kb.chunksToEmbed(input.documentId, input.fromSeq, input.toSeq, deps.embedder.model);
  if (!pending.length) return { embedded: (await kb.getDocument(input.documentId))?.chunksEmbedded ?? 0, dims: 0 };
  let vectors: number[][];
  try {
    ({ vectors } = await withHeartbeat((signal) => deps.embedder.embed(pending.map(embeddingText), signal)));
  } catch (err) {
    if (!isEmbeddingsUnsupported(err)) throw err;
    await kb.updateDocument(input.documentId, { error: withoutVectorsNote(err.message) });
    return { embedded: (await kb.getDocument(input.documentId))?.chunksEmbedded ?? 0, dims: 0, withoutVectors: true };
  }
  const dims = vectors[0]!.length;
  await kb.ensureVectorIndex(dims);
  // Saved in small statements that wait their turn among the process's bulk writes: heartbeats meanwhile.
  const embedded = await beating(() =>
    kb.saveEmbeddings(
      input.documentId,
      deps.embedder.model,
      pending.map((c, i) => ({ seq: c.seq, embedding: vectors[i]! })),
    ),
  );
  return { embedded, dims };
}

/** The end of an ingestion: ready, or failed with the reason and no chunks left behind. */
async function finishDocument(deps: IngestDeps, input: { documentId: string; error?: string }): Promise<void> {
  const kb = deps.store.knowledge;
  const doc = await kb.getDocument(input.documentId);
  if (!doc) return; // deleted while it was ingested: nothing to finish
  if (input.error) {
    await kb.replaceChunks(doc.documentId, [], { title: doc.title });
    await kb.updateDocument(doc.documentId, { status: 'failed', error: summarize(input.error, 1_000) });
    return;
  }
  // A document some of whose passages have no vectors keeps the note embedChunks left on it.
  const note = deps.embedder.enabled && doc.chunksEmbedded < doc.chunksTotal ? doc.error : null;
  await kb.updateDocument(doc.documentId, { status: 'ready', error: note });
}

export function createIngestActivities(deps: IngestDeps) {
  return {
    fetchDocument: (input: { documentId: string }) => fetchDocument(deps, input),
    parseDocument: (input: { documentId: string }) => parseDocument(deps, input),
    embedChunks: (input: { documentId: string; fromSeq: number; toSeq: number }) => embedChunks(deps, input),
    finishDocument: (input: { documentId: string; error?: string }) => finishDocument(deps, input),
  };
}
