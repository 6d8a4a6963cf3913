// The knowledge base behind the HTTP API: collections, documents (stored, then ingested by a
// workflow), sessions. Everything is the tenant's: another tenant's ids are as unknown as missing ones.
import { createHash, randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Config } from '../config';
import { ApiError } from '../shared/errors';
import { checkQuota, TenantLocks, type TenantQuotas } from './quotas';
import { decodeOrKeep } from '../shared/text';
import { collectionLanguage, type CreateCollectionBody, type IngestInput } from '../shared/knowledge';
import type { RetrySettings } from '../shared/schemas';
import type { CollectionRow, DocumentRow, KnowledgeTables, NewDocument, Store } from '../activities/store';
import { contentTypeOf, detectFormat, DOC_FORMATS } from '../activities/knowledge/parse';
import type { ingestDocumentWorkflow } from '../workflows/ingest';

export interface KnowledgeServiceDeps {
  client: Client;
  taskQueue: string;
  store: Pick<Store, 'knowledge'>;
  limits: Pick<Config['knowledge'], 'maxFileBytes' | 'maxDocuments' | 'embedding'>;
  retry?: RetrySettings;
  /** Per-tenant quotas: collections, documents, stored bytes (absent: none). */
  quotas?: TenantQuotas;
}

export interface Upload {
  name: string;
  contentType: string | undefined;
  bytes: Buffer;
}

/** A document to fetch from the web, named after the URL's last segment unless `name` says otherwise. */
export interface LinkedSource {
  url: string;
  name?: string | undefined;
}

const hex = (s: string, n = 16) => createHash('sha256').update(s).digest('hex').slice(0, n);
export const ingestWorkflowId = (documentId: string) => `ingest-${documentId}`;

/** The API's view of a document: no bytes, progress as numbers, where to read it. */
export function documentView(d: DocumentRow) {
  return {
    id: d.documentId,
    collectionId: d.collectionId,
    name: d.name,
    title: d.title,
    format: d.format,
    size: d.size,
    sourceUrl: d.sourceUrl,
    status: d.status,
    ...(d.error ? { error: d.error } : {}),
    pages: d.pages,
    chunks: d.chunksTotal,
    embedded: d.chunksEmbedded,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

export function collectionView(c: CollectionRow) {
  return {
    id: c.collectionId,
    name: c.name,
    description: c.description,
    language: c.language,
    documents: c.documents,
    chunks: c.chunks,
    createdAt: c.createdAt,
  };
}

/** An upload as a document: its id from the collection and the bytes' hash. Too large, empty or unreadable files are refused. */
function uploadedDocument(tenant: string, collectionId: string, upload: Upload, maxFileBytes: number): NewDocument {
  const { bytes, name, contentType } = upload;
  if (bytes.length > maxFileBytes) {
    throw new ApiError(413, 'file_too_large', `the file has ${bytes.length} bytes; at most ${maxFileBytes} are accepted`);
  }
  if (bytes.length === 0) throw new ApiError(400, 'empty_file', 'the uploaded file is empty');
  const format = detectFormat(name, contentType, bytes.subarray(0, 4096));
  if (!format) {
    throw new ApiError(
      415,
      'unsupported_format',
      `"${name}" (${contentType ?? 'no content type'}) is not a format the knowledge base reads: ${DOC_FORMATS.join(', ')}`,
    );
  }
  const hash = createHash('sha256').update(bytes).digest('hex');
  return {
    documentId: `D${hex(`${collectionId}\u0000${hash}`)}`,
    tenant,
    collectionId,
    name,
    format,
    contentType: contentTypeOf(format),
    contentHash: hash,
    bytes,
    status: 'queued',
  };
}

/** A document by URL: its id from the collection and the URL without its fragment; fetched later, by the ingestion. */
function linkedDocument(tenant: string, collectionId: string, source: LinkedSource): NewDocument {
  const url = new URL(source.url);
  url.hash = '';
  const name = source.name ?? (decodeOrKeep(url.pathname.split('/').filter(Boolean).pop() ?? '') || url.host);
  return {
    documentId: `D${hex(`${collectionId}\u0000url\u0000${url.href}`)}`,
    tenant,
    collectionId,
    name,
    sourceUrl: url.href,
    status: 'queued',
  };
}

/** Cancels the document's ingestion if it runs; a finished or never-started one is fine. */
async function stopIngestion(client: Client, documentId: string): Promise<void> {
  try {
    await client.workflow.getHandle(ingestWorkflowId(documentId)).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/** Starts the document's ingestion workflow; one already running for it is left to finish. */
async function startIngestion(deps: KnowledgeServiceDeps, d: DocumentRow, fetch: boolean): Promise<void> {
  const input: IngestInput = {
    documentId: d.documentId,
    tenant: d.tenant,
    fetch,
    batch: deps.limits.embedding.batch,
    parallel: 4,
    ...(deps.retry ? { retry: deps.retry } : {}),
  };
  try {
    await deps.client.workflow.start<typeof ingestDocumentWorkflow>('ingestDocumentWorkflow', {
      taskQueue: deps.taskQueue,
      workflowId: ingestWorkflowId(d.documentId),
      args: [input],
      staticSummary: `Ingest ${d.name.slice(0, 100)}`,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return; // already being ingested
    throw err;
  }
}

/** The tenant's collections and documents, each found or a 404. */
function knowledgeLookups(kb: KnowledgeTables) {
  async function collection(tenant: string, id: string): Promise<CollectionRow> {
    const c = await kb.getCollection(tenant, id);
    if (!c) throw new ApiError(404, 'not_found', `no collection with id ${id}`);
    return c;
  }

  async function document(tenant: string, collectionId: string, documentId: string): Promise<DocumentRow> {
    await collection(tenant, collectionId);
    const d = await kb.getDocument(documentId);
    if (!d || d.collectionId !== collectionId)
      throw new ApiError(404, 'not_found', `no document ${documentId} in collection ${collectionId}`);
    return d;
  }

  return { collection, document };
}

/** Adding documents: stored once per collection, then ingested by a workflow. */
function documentIntake(deps: KnowledgeServiceDeps, locks: TenantLocks) {
  const kb = deps.store.knowledge;

  /** The stored row for this document, inserted unless it exists; a new one must fit in the collection and the tenant's quotas. */
  async function admit(collectionId: string, row: NewDocument): Promise<{ created: boolean; document: DocumentRow }> {
    const existing = await kb.getDocument(row.documentId);
    if (existing) return { created: false, document: existing };
    if ((await kb.countDocuments(collectionId)) >= deps.limits.maxDocuments) {
      throw new ApiError(
        413,
        'collection_full',
        `the collection holds ${deps.limits.maxDocuments} documents, the most it may (KB_MAX_DOCUMENTS)`,
      );
    }
    const quotas = deps.quotas;
    if (!quotas?.documents && !quotas?.storedBytes) return kb.addDocument(row);
    return locks.run(row.tenant, async () => {
      const held = await kb.tenantHoldings(row.tenant);
      checkQuota(quotas, 'documents', held.documents);
      checkQuota(quotas, 'storedBytes', held.bytes, row.bytes?.length ?? 0);
      return kb.addDocument(row);
    });
  }

  /** Starts the ingestion; a document it cannot start is not left behind (a new one is deleted again). */
  async function queue(added: { created: boolean; document: DocumentRow }, fetch: boolean): Promise<void> {
    try {
      await startIngestion(deps, added.document, fetch);
    } catch (err) {
      // Nothing half-started: without its workflow the document would wait forever.
      if (added.created) await kb.deleteDocument(added.document.documentId);
      throw new ApiError(
        503,
        'temporal_unavailable',
        `the document could not be queued for ingestion: ${(err as Error).message}`,
        undefined,
        5,
      );
    }
  }

  /**
   * Stores a document and starts its ingestion. The same bytes (or URL) in the same collection are
   * the same document: answered as a duplicate, not ingested again (unless it failed before).
   */
  async function addDocument(
    tenant: string,
    collectionId: string,
    source: { upload: Upload } | LinkedSource,
  ): Promise<{ document: ReturnType<typeof documentView>; duplicate: boolean }> {
    const row =
      'upload' in source
        ? uploadedDocument(tenant, collectionId, source.upload, deps.limits.maxFileBytes)
        : linkedDocument(tenant, collectionId, source);
    const added = await admit(collectionId, row);
    if (!added.created && added.document.status !== 'failed') return { document: documentView(added.document), duplicate: true };
    if (!added.created) await kb.updateDocument(row.documentId, { status: 'queued', error: null });
    await queue(added, !('upload' in source));
    const now = await kb.getDocument(row.documentId);
    return { document: documentView(now ?? added.document), duplicate: !added.created };
  }

  return { addDocument };
}

/** Sessions: a conversation's runs, whose reports become its memory. */
function sessionService(kb: KnowledgeTables) {
  async function createSession(tenant: string, title: string) {
    const sessionId = `session-${randomBytes(8).toString('hex')}`;
    await kb.createSession({ sessionId, tenant, title });
    return { id: sessionId, title };
  }

  async function getSession(tenant: string, sessionId: string) {
    const s = await kb.getSession(tenant, sessionId);
    if (!s) throw new ApiError(404, 'not_found', `no session with id ${sessionId}`);
    const runs = await kb.sessionRuns(sessionId);
    return {
      id: s.sessionId,
      title: s.title,
      createdAt: s.createdAt,
      runs: runs.map((r) => ({ id: r.researchId, question: r.question, askedAt: r.askedAt, status: r.status, reportTitle: r.reportTitle })),
    };
  }

  async function listSessions(tenant: string) {
    const rows = await kb.listSessions(tenant);
    return { sessions: rows.map((s) => ({ id: s.sessionId, title: s.title, createdAt: s.createdAt, runCount: s.runs })) };
  }

  return { createSession, getSession, listSessions };
}

export function createKnowledgeService(deps: KnowledgeServiceDeps) {
  const kb = deps.store.knowledge;
  const { collection, document } = knowledgeLookups(kb);
  const locks = new TenantLocks();
  const intake = documentIntake(deps, locks);

  async function createCollection(tenant: string, body: CreateCollectionBody) {
    const language = collectionLanguage(body.language);
    if (!(await kb.languageExists(language))) {
      throw new ApiError(
        400,
        'unknown_language',
        `language "${body.language}" has no text search configuration here (try en, de, fr, zh, ja, ko, ... or simple)`,
      );
    }
    const created = await locks.run(tenant, async () => {
      if (deps.quotas?.collections) checkQuota(deps.quotas, 'collections', await kb.countCollections(tenant));
      return kb.createCollection({
        collectionId: `C${randomBytes(8).toString('hex')}`,
        tenant,
        name: body.name,
        description: body.description,
        language,
      });
    });
    if (!created) throw new ApiError(409, 'collection_exists', `you already have a collection named "${body.name}"`);
    return created;
  }

  async function addDocument(tenant: string, collectionId: string, source: { upload: Upload } | LinkedSource) {
    await collection(tenant, collectionId);
    return intake.addDocument(tenant, collectionId, source);
  }

  async function deleteDocument(tenant: string, collectionId: string, documentId: string): Promise<void> {
    await document(tenant, collectionId, documentId);
    await stopIngestion(deps.client, documentId);
    await kb.deleteDocument(documentId);
  }

  async function deleteCollection(tenant: string, collectionId: string): Promise<void> {
    await collection(tenant, collectionId);
    for (const d of await kb.listDocuments(collectionId))
      if (!['ready', 'failed'].includes(d.status)) await stopIngestion(deps.client, d.documentId);
    await kb.deleteCollection(tenant, collectionId);
  }

  return {
    createCollection,
    listCollections: (tenant: string) => kb.listCollections(tenant),
    collection,
    deleteCollection,
    addDocument,
    listDocuments: async (tenant: string, collectionId: string) => {
      await collection(tenant, collectionId);
      return kb.listDocuments(collectionId);
    },
    document,
    /** The document's chunks as stored (for reading a cited passage in context). */
    chunks: async (tenant: string, collectionId: string, documentId: string) => {
      const d = await document(tenant, collectionId, documentId);
      return kb.getChunks(Array.from({ length: d.chunksTotal }, (_, seq) => ({ documentId, seq })));
    },
    file: async (tenant: string, collectionId: string, documentId: string) => {
      const d = await document(tenant, collectionId, documentId);
      return { document: d, bytes: await kb.getDocumentBytes(documentId) };
    },
    deleteDocument,
    ...sessionService(kb),
  };
}
export type KnowledgeService = ReturnType<typeof createKnowledgeService>;
