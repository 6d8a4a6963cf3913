// kb_documents: the uploaded bytes and the ingestion's progress, one row per document.
import type pg from 'pg';
import type { DocumentRow, DocumentStatus, NewDocument } from './types';

/** The columns `updateDocument` may change; new bytes also set the size. */
export type DocumentPatch = Partial<
  Pick<DocumentRow, 'status' | 'error' | 'title' | 'pages' | 'format' | 'contentType' | 'contentHash'>
> & {
  bytes?: Buffer;
};

const DOC_COLUMNS = `document_id, tenant, collection_id, session_id, name, format, content_type, source_url, content_hash, size,
  status, error, title, pages, chunks_total, chunks_embedded, created_at, updated_at`;

function toDocument(r: Record<string, unknown>): DocumentRow {
  return {
    documentId: r.document_id as string,
    tenant: r.tenant as string,
    collectionId: (r.collection_id as string | null) ?? null,
    sessionId: (r.session_id as string | null) ?? null,
    name: r.name as string,
    format: (r.format as string | null) ?? null,
    contentType: (r.content_type as string | null) ?? null,
    sourceUrl: (r.source_url as string | null) ?? null,
    contentHash: (r.content_hash as string | null) ?? null,
    size: Number(r.size),
    status: r.status as DocumentStatus,
    error: (r.error as string | null) ?? null,
    title: r.title as string,
    pages: r.pages === null ? null : Number(r.pages),
    chunksTotal: Number(r.chunks_total),
    chunksEmbedded: Number(r.chunks_embedded),
    createdAt: new Date(r.created_at as string).toISOString(),
    updatedAt: new Date(r.updated_at as string).toISOString(),
  };
}

/** The patch as column/value pairs, the columns it leaves alone dropped. */
function patchColumns(patch: DocumentPatch): [string, unknown][] {
  const cols: Record<string, unknown> = {
    status: patch.status,
    error: patch.error,
    title: patch.title,
    pages: patch.pages,
    format: patch.format,
    content_type: patch.contentType,
    content_hash: patch.contentHash,
    bytes: patch.bytes,
    size: patch.bytes?.length,
  };
  return Object.entries(cols).filter(([, v]) => v !== undefined);
}

export function documentsTable(pool: pg.Pool) {
  /** Inserts the document unless its id exists; `created` says which. */
  async function addDocument(d: NewDocument): Promise<{ created: boolean; document: DocumentRow }> {
    const { rowCount } = await pool.query(
      `INSERT INTO kb_documents (document_id, tenant, collection_id, session_id, name, format, content_type, source_url,
         content_hash, bytes, size, status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (document_id) DO NOTHING`,
      [
        d.documentId,
        d.tenant,
        d.collectionId,
        d.sessionId ?? null,
        d.name,
        d.format ?? null,
        d.contentType ?? null,
        d.sourceUrl ?? null,
        d.contentHash ?? null,
        d.bytes ?? null,
        d.bytes?.length ?? 0,
        d.status,
      ],
    );
    const document = await getDocument(d.documentId);
    if (!document) throw new Error(`document ${d.documentId} vanished after its insert`);
    return { created: (rowCount ?? 0) > 0, document };
  }

  async function getDocument(documentId: string): Promise<DocumentRow | undefined> {
    const { rows } = await pool.query(`SELECT ${DOC_COLUMNS} FROM kb_documents WHERE document_id = $1`, [documentId]);
    return rows[0] ? toDocument(rows[0]) : undefined;
  }

  async function getDocumentBytes(documentId: string): Promise<Buffer | undefined> {
    const { rows } = await pool.query('SELECT bytes FROM kb_documents WHERE document_id = $1', [documentId]);
    return rows[0]?.bytes ?? undefined;
  }

  async function listDocuments(collectionId: string): Promise<DocumentRow[]> {
    const { rows } = await pool.query(`SELECT ${DOC_COLUMNS} FROM kb_documents WHERE collection_id = $1 ORDER BY created_at, document_id`, [
      collectionId,
    ]);
    return rows.map(toDocument);
  }

  async function countDocuments(collectionId: string): Promise<number> {
    const { rows } = await pool.query('SELECT count(*) AS n FROM kb_documents WHERE collection_id = $1', [collectionId]);
    return Number(rows[0].n);
  }

  /** What a tenant holds across its collections and sessions: documents, and bytes of their files (the quotas). */
  async function tenantHoldings(tenant: string): Promise<{ documents: number; bytes: number }> {
    const { rows } = await pool.query('SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM kb_documents WHERE tenant = $1', [
      tenant,
    ]);
    return { documents: Number(rows[0].n), bytes: Number(rows[0].bytes) };
  }

  async function updateDocument(documentId: string, patch: DocumentPatch): Promise<void> {
    const set = patchColumns(patch);
    if (!set.length) return;
    await pool.query(
      `UPDATE kb_documents SET ${set.map(([k], i) => `${k} = $${i + 2}`).join(', ')}, updated_at = now() WHERE document_id = $1`,
      [documentId, ...set.map(([, v]) => v)],
    );
  }

  async function deleteDocument(documentId: string): Promise<boolean> {
    const { rowCount } = await pool.query('DELETE FROM kb_documents WHERE document_id = $1', [documentId]);
    return (rowCount ?? 0) > 0;
  }

  return { addDocument, getDocument, getDocumentBytes, listDocuments, countDocuments, tenantHoldings, updateDocument, deleteDocument };
}
