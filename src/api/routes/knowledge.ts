// Collections, their documents, and sessions under /v1. Uploads are multipart (field `file`) or
// JSON `{ url }`; both answer 202 with the document, whose ingestion a workflow then runs.
import { Router, type NextFunction, type Request, type Response } from 'express';
import multer from 'multer';
import { ApiError } from '../../shared/errors';
import { AddDocumentUrlBody, CollectionId, CreateCollectionBody, CreateSessionBody, DocumentId, SessionId } from '../../shared/knowledge';
import { collectionView, documentView, type KnowledgeService } from '../knowledge-service';

const tenantOf = (res: Response) => String(res.locals.tenant);

/** multer's errors as the API's: the size limit is a 413, anything else about the form a 400. */
function upload(maxFileBytes: number) {
  const single = multer({ storage: multer.memoryStorage(), limits: { fileSize: maxFileBytes, files: 1, fields: 10 } }).single('file');
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
      next(err);
    });
  };
}

export function knowledgeRoutes(deps: { knowledge: KnowledgeService; maxFileBytes: number }): Router {
  const r = Router();
  const kb = deps.knowledge;

  r.post('/collections', async (req, res) => {
    const body = CreateCollectionBody.parse(req.body ?? {});
    res.status(201).json(collectionView(await kb.createCollection(tenantOf(res), body)));
  });

  r.get('/collections', async (_req, res) => {
    res.json({ collections: (await kb.listCollections(tenantOf(res))).map(collectionView) });
  });

  r.get('/collections/:id', async (req, res) => {
    const id = CollectionId.parse(req.params.id);
    res.json(collectionView(await kb.collection(tenantOf(res), id)));
  });

  r.delete('/collections/:id', async (req, res) => {
    const id = CollectionId.parse(req.params.id);
    await kb.deleteCollection(tenantOf(res), id);
    res.json({ id, deleted: true });
  });

  r.post('/collections/:id/documents', upload(deps.maxFileBytes), async (req, res) => {
    const id = CollectionId.parse(req.params.id);
    let added;
    if (req.is('multipart/form-data')) {
      const file = req.file;
      if (!file) throw new ApiError(400, 'invalid_upload', 'send the document as multipart/form-data in the field "file"');
      const name = typeof req.body?.name === 'string' && req.body.name.trim() ? req.body.name.trim().slice(0, 300) : file.originalname;
      added = await kb.addDocument(tenantOf(res), id, {
        upload: { name: name || 'document', contentType: file.mimetype || undefined, bytes: file.buffer },
      });
    } else {
      const body = AddDocumentUrlBody.parse(req.body ?? {});
      added = await kb.addDocument(tenantOf(res), id, { url: body.url, name: body.name });
    }
    res.status(added.duplicate ? 200 : 202).json({ ...added.document, duplicate: added.duplicate });
  });

  r.get('/collections/:id/documents', async (req, res) => {
    const id = CollectionId.parse(req.params.id);
    res.json({ documents: (await kb.listDocuments(tenantOf(res), id)).map(documentView) });
  });

  r.get('/collections/:id/documents/:docId', async (req, res) => {
    const id = CollectionId.parse(req.params.id);
    const docId = DocumentId.parse(req.params.docId);
    const view = documentView(await kb.document(tenantOf(res), id, docId));
    if (req.query.include !== 'chunks') return void res.json(view);
    const chunks = await kb.chunks(tenantOf(res), id, docId);
    res.json({ ...view, chunkList: chunks.map((c) => ({ seq: c.seq, page: c.page, headingPath: c.headingPath, text: c.text })) });
  });

  r.get('/collections/:id/documents/:docId/file', async (req, res) => {
    const id = CollectionId.parse(req.params.id);
    const docId = DocumentId.parse(req.params.docId);
    const { document, bytes } = await kb.file(tenantOf(res), id, docId);
    if (!bytes) throw new ApiError(404, 'not_found', `document ${docId} has no stored file yet`);
    // A user's file: never sniffed, never rendered as a page of this origin.
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Content-Security-Policy', "default-src 'none'");
    res.set('Content-Disposition', `attachment; filename="${document.name.replace(/["\\\r\n]/g, '_')}"`);
    res.type(document.contentType ?? 'application/octet-stream').send(bytes);
  });

  r.delete('/collections/:id/documents/:docId', async (req, res) => {
    const id = CollectionId.parse(req.params.id);
    const docId = DocumentId.parse(req.params.docId);
    await kb.deleteDocument(tenantOf(res), id, docId);
    res.json({ id: docId, deleted: true });
  });

  r.post('/sessions', async (req, res) => {
    const body = CreateSessionBody.parse(req.body ?? {});
    res.status(201).json(await kb.createSession(tenantOf(res), body.title));
  });

  r.get('/sessions/:id', async (req, res) => {
    const id = SessionId.parse(req.params.id);
    res.json(await kb.getSession(tenantOf(res), id));
  });

  return r;
}
