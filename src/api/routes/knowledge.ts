// Collections, their documents, and sessions under /v1. Uploads are multipart (field `file`) or
// JSON `{ url }`; both answer 202 with the document, whose ingestion a workflow then runs.
import { Router, type NextFunction, type Request, type Response } from 'express';
import multer from 'multer';
import { z } from 'zod';
import { ApiError } from '../../shared/errors';
import {
  AddDocumentUrlBody,
  CollectionSearchBody,
  CollectionSearchResult,
  CollectionView,
  CreateCollectionBody,
  CreateSessionBody,
  DocumentView,
  SessionList,
  SessionView,
} from '../../shared/knowledge';
import {
  CollectionList,
  CollectionPath,
  Deleted,
  DocumentDetail,
  DocumentInclude,
  DocumentList,
  DocumentPath,
  ErrorBody,
  SessionPath,
  UploadForm,
} from '../contract';
import { collectionView, documentView, type KnowledgeService } from '../knowledge-service';
import { reply, route, type RouteTable } from '../route-spec';
import { param } from '../params';
import { contentDisposition } from '../download';
import { refuseUnstorable } from '../middleware/text';
import type { Retriever } from '../../activities/knowledge/retrieve';

const tenantOf = (res: Response) => String(res.locals.tenant);

/** multer's errors as the API's: the size limit is a 413, anything else about the form a 400. */
function upload(maxFileBytes: number) {
  // defParamCharset: a browser sends a file's name as UTF-8 bytes without saying so (not Latin-1).
  const single = multer({
    storage: multer.memoryStorage(),
    defParamCharset: 'utf8',
    limits: { fileSize: maxFileBytes, files: 1, fields: 10 },
  }).single('file');
  return (req: Request, res: Response, next: NextFunction) => {
    if (!req.is('multipart/form-data')) return next();
    single(req, res, (err: unknown) => {
      if (!err) return next();
      if (err instanceof multer.MulterError) {
        if (err.code === 'LIMIT_FILE_SIZE') {
          return next(
            new ApiError(413, 'file_too_large', `the file is larger than ${maxFileBytes} bytes, the most accepted (KB_MAX_FILE_BYTES)`),
          );
        }
        return next(
          new ApiError(
            400,
            'invalid_upload',
            `${err.message}${err.field ? ` (field ${err.field})` : ''}: send one file in the field "file"`,
          ),
        );
      }
      // busboy's own errors (a truncated body, a malformed part header) are the client's form too.
      next(
        new ApiError(400, 'invalid_upload', `the multipart body could not be read: ${err instanceof Error ? err.message : String(err)}`),
      );
    });
  };
}

const ERRORS = [400, 401, 404, 429];

/** The collection, document and session routes under /v1, as the OpenAPI document describes them. */
export const KNOWLEDGE_ROUTES = {
  createCollection: {
    method: 'post',
    path: '/collections',
    summary: 'Create a collection for documents (language: a code such as en, de, zh, ja, ko, or simple)',
    body: { content: CreateCollectionBody, required: true },
    responses: { 201: { description: 'created', content: CollectionView } },
    errors: [400, 401, 403, 409, 429],
  },
  listCollections: {
    method: 'get',
    path: '/collections',
    summary: "The tenant's collections",
    responses: { 200: { description: 'the collections', content: CollectionList } },
    errors: [401, 429],
  },
  getCollection: {
    method: 'get',
    path: '/collections/:id',
    summary: 'One collection',
    params: { path: CollectionPath },
    responses: { 200: { description: 'the collection', content: CollectionView } },
    errors: ERRORS,
  },
  deleteCollection: {
    method: 'delete',
    path: '/collections/:id',
    summary: 'Delete the collection, its documents and their chunks (ingestions in flight are cancelled)',
    params: { path: CollectionPath },
    responses: { 200: { description: 'deleted', content: Deleted } },
    errors: ERRORS,
  },
  searchCollection: {
    method: 'post',
    path: '/collections/:id/search',
    summary: "The collection's passages for a query, as a run's knowledge_search finds them (full text and, when configured, embeddings)",
    params: { path: CollectionPath },
    body: { content: CollectionSearchBody, required: true },
    responses: { 200: { description: 'the passages, best first', content: CollectionSearchResult } },
    errors: ERRORS,
  },
  addDocument: {
    method: 'post',
    path: '/collections/:id/documents',
    limit: 'uploads',
    summary: 'Add a document: multipart/form-data with the field `file` (and optional `name`), or JSON { url }. Ingested by a workflow.',
    params: { path: CollectionPath },
    body: { content: { 'multipart/form-data': UploadForm, 'application/json': AddDocumentUrlBody }, required: true },
    responses: {
      202: { description: 'stored and queued for ingestion', content: DocumentView },
      200: { description: 'the same file or URL is already in the collection (duplicate: true)', content: DocumentView },
      413: { description: 'over KB_MAX_FILE_BYTES or KB_MAX_DOCUMENTS', content: ErrorBody },
      415: { description: 'a format the knowledge base does not read', content: ErrorBody },
    },
    errors: [400, 401, 403, 404, 429, 503],
  },
  listDocuments: {
    method: 'get',
    path: '/collections/:id/documents',
    summary: "The collection's documents with their ingestion progress",
    params: { path: CollectionPath },
    responses: { 200: { description: 'the documents', content: DocumentList } },
    errors: ERRORS,
  },
  getDocument: {
    method: 'get',
    path: '/collections/:id/documents/:docId',
    summary: 'One document: status, chunks, embedded, pages, error; ?include=chunks adds its passages',
    params: { path: DocumentPath, query: z.object({ include: DocumentInclude.optional() }) },
    responses: { 200: { description: 'the document', content: DocumentDetail } },
    errors: ERRORS,
  },
  documentFile: {
    method: 'get',
    path: '/collections/:id/documents/:docId/file',
    summary: 'The original file, as a download',
    params: { path: DocumentPath },
    responses: { 200: { description: 'the file' } },
    errors: ERRORS,
  },
  deleteDocument: {
    method: 'delete',
    path: '/collections/:id/documents/:docId',
    summary: 'Stop its ingestion and delete it with its chunks',
    params: { path: DocumentPath },
    responses: { 200: { description: 'deleted', content: Deleted } },
    errors: ERRORS,
  },
  createSession: {
    method: 'post',
    path: '/sessions',
    summary: 'A session: runs started with its sessionId see its earlier questions and reports',
    body: { content: CreateSessionBody, required: false },
    responses: { 201: { description: 'created', content: SessionView } },
    errors: [400, 401, 429],
  },
  listSessions: {
    method: 'get',
    path: '/sessions',
    summary: "The tenant's sessions, newest first, with how many runs each has",
    responses: { 200: { description: 'the sessions', content: SessionList } },
    errors: [401, 429],
  },
  getSession: {
    method: 'get',
    path: '/sessions/:id',
    summary: 'The session and its runs in order',
    params: { path: SessionPath },
    responses: { 200: { description: 'the session', content: SessionView } },
    errors: ERRORS,
  },
} satisfies RouteTable;

const collectionId = (req: Request) => param('path', 'id', CollectionPath.shape.id, req.params.id);
const documentId = (req: Request) => param('path', 'docId', DocumentPath.shape.docId, req.params.docId);

/** POST /v1/collections/:id/search: a collection's passages for a query. An embeddings outage does
 *  not fail a person's search: it answers from full text and says so. */
function searchRoute(r: Router, kb: KnowledgeService, retrieve: Retriever): void {
  const K = KNOWLEDGE_ROUTES;
  route(r, K.searchCollection, async (req, res) => {
    const id = collectionId(req);
    const body = CollectionSearchBody.parse(req.body ?? {});
    await kb.collection(tenantOf(res), id);
    const scope = { tenant: tenantOf(res), collectionIds: [id] };
    const found = await retrieve(scope, [body.query], { k: body.k }).catch(async () => ({
      ...(await retrieve(scope, [body.query], { k: body.k, methods: ['text'] })),
      vectors: 'unavailable',
    }));
    const passages = found.chunks.map((c) => ({
      documentId: c.documentId,
      documentTitle: c.documentTitle || c.documentName,
      seq: c.seq,
      page: c.page,
      headingPath: c.headingPath,
      text: c.text,
      score: c.score,
    }));
    reply(res, K.searchCollection, 200, { query: body.query, vectors: found.vectors, passages });
  });
}

export function knowledgeRoutes(deps: { knowledge: KnowledgeService; maxFileBytes: number; retrieve?: Retriever }): Router {
  const r = Router();
  const kb = deps.knowledge;
  const K = KNOWLEDGE_ROUTES;

  route(r, K.createCollection, async (req, res) => {
    const body = CreateCollectionBody.parse(req.body ?? {});
    reply(res, K.createCollection, 201, collectionView(await kb.createCollection(tenantOf(res), body)));
  });

  route(r, K.listCollections, async (_req, res) => {
    reply(res, K.listCollections, 200, { collections: (await kb.listCollections(tenantOf(res))).map(collectionView) });
  });

  route(r, K.getCollection, async (req, res) => {
    reply(res, K.getCollection, 200, collectionView(await kb.collection(tenantOf(res), collectionId(req))));
  });

  route(r, K.deleteCollection, async (req, res) => {
    const id = collectionId(req);
    await kb.deleteCollection(tenantOf(res), id);
    reply(res, K.deleteCollection, 200, { id, deleted: true });
  });

  if (deps.retrieve) searchRoute(r, kb, deps.retrieve);

  route(r, K.addDocument, upload(deps.maxFileBytes), async (req, res) => {
    const id = collectionId(req);
    let added;
    if (req.is('multipart/form-data')) {
      const file = req.file;
      if (!file) throw new ApiError(400, 'invalid_upload', 'send the document as multipart/form-data in the field "file"');
      refuseUnstorable({ name: req.body?.name, filename: file.originalname }, 'form');
      const name = typeof req.body?.name === 'string' && req.body.name.trim() ? req.body.name.trim().slice(0, 300) : file.originalname;
      added = await kb.addDocument(tenantOf(res), id, {
        upload: { name: name || 'document', contentType: file.mimetype || undefined, bytes: file.buffer },
      });
    } else {
      const body = AddDocumentUrlBody.parse(req.body ?? {});
      added = await kb.addDocument(tenantOf(res), id, { url: body.url, name: body.name });
    }
    reply(res, K.addDocument, added.duplicate ? 200 : 202, { ...added.document, duplicate: added.duplicate });
  });

  route(r, K.listDocuments, async (req, res) => {
    reply(res, K.listDocuments, 200, { documents: (await kb.listDocuments(tenantOf(res), collectionId(req))).map(documentView) });
  });

  route(r, K.getDocument, async (req, res) => {
    const id = collectionId(req);
    const docId = documentId(req);
    const include = param('query', 'include', DocumentInclude.optional(), req.query.include);
    const view = documentView(await kb.document(tenantOf(res), id, docId));
    if (include !== 'chunks') return reply(res, K.getDocument, 200, view);
    const chunks = await kb.chunks(tenantOf(res), id, docId);
    const chunkList = chunks.map((c) => ({ seq: c.seq, page: c.page, headingPath: c.headingPath, text: c.text }));
    reply(res, K.getDocument, 200, { ...view, chunkList });
  });

  route(r, K.documentFile, async (req, res) => {
    const id = collectionId(req);
    const docId = documentId(req);
    const { document, bytes } = await kb.file(tenantOf(res), id, docId);
    if (!bytes) throw new ApiError(404, 'not_found', `document ${docId} has no stored file yet`);
    // A user's file: never sniffed, never rendered as a page of this origin.
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Content-Security-Policy', "default-src 'none'");
    res.set('Content-Disposition', contentDisposition('attachment', document.name));
    res.type(document.contentType ?? 'application/octet-stream').send(bytes);
  });

  route(r, K.deleteDocument, async (req, res) => {
    const docId = documentId(req);
    await kb.deleteDocument(tenantOf(res), collectionId(req), docId);
    reply(res, K.deleteDocument, 200, { id: docId, deleted: true });
  });

  route(r, K.createSession, async (req, res) => {
    const body = CreateSessionBody.parse(req.body ?? {});
    reply(res, K.createSession, 201, await kb.createSession(tenantOf(res), body.title));
  });

  route(r, K.listSessions, async (_req, res) => {
    reply(res, K.listSessions, 200, await kb.listSessions(tenantOf(res)));
  });

  route(r, K.getSession, async (req, res) => {
    const id = param('path', 'id', SessionPath.shape.id, req.params.id);
    reply(res, K.getSession, 200, await kb.getSession(tenantOf(res), id));
  });

  return r;
}
