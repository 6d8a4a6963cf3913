// kb_chunks: each document's passages with their full-text vector and, once embedded, their
// embedding (a plain real[] everywhere, and a pgvector column where the extension exists).
import type pg from 'pg';
import { cjkIndexText } from '../../../shared/cjk';
import { isCjkLanguage } from '../../../shared/knowledge';
import { inTransaction } from './transaction';
import type { ChunkKey, ChunkRow, NewChunk, VectorMode } from './types';

/** What a chunk inherits from its document: the scope it is searched in and its language. */
interface ChunkOwner {
  tenant: string;
  collection_id: string | null;
  session_id: string | null;
  language: string;
}

/** Rows per INSERT: a document of thousands of chunks is written in a few statements, none huge. */
const INSERT_BATCH = 200;

/** Locks the document's row; undefined when it no longer exists (deleted while it was being ingested). */
async function lockOwner(client: pg.PoolClient, documentId: string): Promise<ChunkOwner | undefined> {
  const { rows } = await client.query(
    `SELECT d.tenant, d.collection_id, d.session_id, coalesce(k.language, 'english') AS language
     FROM kb_documents d LEFT JOIN kb_collections k USING (collection_id) WHERE d.document_id = $1 FOR UPDATE OF d`,
    [documentId],
  );
  return rows[0];
}

/**
 * The full-text vector weighs the title and heading path above the text. A CJK collection's text is
 * tokenised here into bigrams (src/shared/cjk.ts) for the `simple` configuration; other languages
 * go to their configuration as they are (head_fts and text_fts null).
 */
async function insertChunks(client: pg.PoolClient, documentId: string, doc: ChunkOwner, title: string, chunks: NewChunk[]): Promise<void> {
  const cjk = isCjkLanguage(doc.language);
  for (let i = 0; i < chunks.length; i += INSERT_BATCH) {
    const part = chunks.slice(i, i + INSERT_BATCH);
    await client.query(
      `INSERT INTO kb_chunks (document_id, seq, tenant, collection_id, session_id, heading_path, page, text, tokens, tsv)
       SELECT $1, x.seq, $2, $3, $4, x.heading_path, x.page, x.text, x.tokens,
              setweight(to_tsvector($5::regconfig, coalesce(x.head_fts, $6 || ' ' || array_to_string(x.heading_path, ' '))), 'A') ||
              setweight(to_tsvector($5::regconfig, coalesce(x.text_fts, x.text)), 'B')
       FROM jsonb_to_recordset($7::jsonb) AS x(seq int, heading_path text[], page int, text text, tokens int, head_fts text, text_fts text)`,
      [
        documentId,
        doc.tenant,
        doc.collection_id,
        doc.session_id,
        cjk ? 'simple' : doc.language,
        title,
        JSON.stringify(
          part.map((c) => ({
            seq: c.seq,
            heading_path: c.headingPath,
            page: c.page ?? null,
            text: c.text,
            tokens: c.tokens,
            head_fts: cjk ? cjkIndexText(`${title} ${c.headingPath.join(' ')}`) : null,
            text_fts: cjk ? cjkIndexText(c.text) : null,
          })),
        ),
      ],
    );
  }
}

function toChunk(r: Record<string, unknown>): ChunkRow {
  return {
    documentId: r.document_id as string,
    seq: r.seq as number,
    text: r.text as string,
    headingPath: r.heading_path as string[],
    page: r.page as number | null,
    collectionId: r.collection_id as string | null,
    sessionId: r.session_id as string | null,
    documentName: r.name as string,
    documentTitle: r.title as string,
    sourceUrl: r.source_url as string | null,
  };
}

export function chunksTable(pool: pg.Pool, vectorMode: () => Promise<VectorMode>) {
  /**
   * Replaces the document's chunks in one transaction, so a retried parse leaves exactly one set.
   * False when the document no longer exists (deleted while it was being ingested).
   */
  async function replaceChunks(
    documentId: string,
    chunks: NewChunk[],
    meta: { title: string; pages?: number | undefined },
  ): Promise<boolean> {
    return inTransaction(pool, async (client) => {
      const doc = await lockOwner(client, documentId);
      if (!doc) return false;
      await client.query('DELETE FROM kb_chunks WHERE document_id = $1', [documentId]);
      await insertChunks(client, documentId, doc, meta.title, chunks);
      await client.query(
        `UPDATE kb_documents SET chunks_total = $2, chunks_embedded = 0, title = $3, pages = $4, updated_at = now() WHERE document_id = $1`,
        [documentId, chunks.length, meta.title, meta.pages ?? null],
      );
      return true;
    });
  }

  /** Chunks in [fromSeq, toSeq) that have no embedding yet from `model`. */
  async function chunksToEmbed(
    documentId: string,
    fromSeq: number,
    toSeq: number,
    model: string,
  ): Promise<{ seq: number; text: string; headingPath: string[] }[]> {
    const { rows } = await pool.query(
      `SELECT seq, text, heading_path FROM kb_chunks WHERE document_id = $1 AND seq >= $2 AND seq < $3
         AND (embedding IS NULL OR model IS DISTINCT FROM $4) ORDER BY seq`,
      [documentId, fromSeq, toSeq, model],
    );
    return rows.map((r) => ({ seq: r.seq, text: r.text, headingPath: r.heading_path }));
  }

  /** Stores embeddings (an update per chunk: a retried batch rewrites the same rows); returns the document's embedded count. */
  async function saveEmbeddings(documentId: string, model: string, vectors: { seq: number; embedding: number[] }[]): Promise<number> {
    const vm = await vectorMode();
    return inTransaction(pool, async (client) => {
      // Batches of one document are saved one at a time (the document's row locked first), so
      // each count below sees every batch committed before it: concurrent batches counting at
      // once would each miss the other's rows.
      await client.query('SELECT 1 FROM kb_documents WHERE document_id = $1 FOR UPDATE', [documentId]);
      // One statement for the batch: the embeddings as JSON arrays, cast on the server.
      await client.query(
        `UPDATE kb_chunks c SET embedding = ARRAY(SELECT jsonb_array_elements_text(x.e)::real), dims = jsonb_array_length(x.e), model = $2
           ${vm === 'pgvector' ? ', vec = (x.e::text)::vector' : ''}
         FROM jsonb_to_recordset($3::jsonb) AS x(seq int, e jsonb) WHERE c.document_id = $1 AND c.seq = x.seq`,
        [documentId, model, JSON.stringify(vectors.map((v) => ({ seq: v.seq, e: v.embedding })))],
      );
      const { rows } = await client.query(
        `UPDATE kb_documents SET chunks_embedded = (SELECT count(*) FROM kb_chunks WHERE document_id = $1 AND model = $2),
           embedding_model = $2, updated_at = now() WHERE document_id = $1 RETURNING chunks_embedded`,
        [documentId, model],
      );
      return Number(rows[0]?.chunks_embedded ?? 0);
    });
  }

  /** The chunks with their document's name, title and address, in the keys' order; missing keys are left out. */
  async function getChunks(keys: ChunkKey[]): Promise<ChunkRow[]> {
    if (!keys.length) return [];
    const { rows } = await pool.query(
      `SELECT c.document_id, c.seq, c.text, c.heading_path, c.page, c.collection_id, c.session_id, d.name, d.title, d.source_url
       FROM kb_chunks c JOIN kb_documents d USING (document_id)
       JOIN unnest($1::text[], $2::int[]) AS k(document_id, seq) ON k.document_id = c.document_id AND k.seq = c.seq`,
      [keys.map((k) => k.documentId), keys.map((k) => k.seq)],
    );
    const byKey = new Map(rows.map((r) => [`${r.document_id}#${r.seq}`, toChunk(r)]));
    return keys.map((k) => byKey.get(`${k.documentId}#${k.seq}`)).filter((c): c is ChunkRow => c !== undefined);
  }

  return { replaceChunks, chunksToEmbed, saveEmbeddings, getChunks };
}
