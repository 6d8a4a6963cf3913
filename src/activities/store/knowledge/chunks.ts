// kb_chunks: each document's passages with their full-text vector and, once embedded, their
// embedding (a plain real[] everywhere, and a pgvector column where the extension exists).
import type pg from 'pg';
import { cjkIndexText } from '../../../shared/cjk';
import { isCjkLanguage } from '../../../shared/knowledge';
import type { BulkLane } from './bulk-lane';
import { inTransaction } from './transaction';
import type { ChunkKey, ChunkRow, NewChunk, VectorMode } from './types';

/** What a chunk inherits from its document: the scope it is searched in and its language. */
interface ChunkOwner {
  tenant: string;
  collection_id: string | null;
  session_id: string | null;
  language: string;
}

/**
 * Rows and text per INSERT, and vector components per UPDATE of embeddings. Each statement is
 * short and commits on its own: the embedded database (PGlite) runs a statement on the thread that
 * serves the API and holds its one session for a whole transaction, so a document of thousands of
 * chunks written in one transaction kept every other tenant's query waiting for seconds. There,
 * 50 chunks of 350 tokens (about 75 KB) took about 20 ms on a busy 2-core host, full-text
 * vectors included; an embedding of 256 dimensions 3 to 4 ms, nearly all of it the HNSW
 * index's insertion.
 */
const INSERT_ROWS = 50;
const INSERT_TEXT_CHARS = 100_000;
const EMBEDDING_VALUES = 2_048;

/** Consecutive runs of `items`, each of at most `rows` and (but for a single item) `chars` of text. */
function batches<T>(items: T[], rows: number, chars = Infinity, textOf: (item: T) => string = () => ''): T[][] {
  const out: T[][] = [];
  let part: T[] = [];
  let size = 0;
  for (const c of items) {
    const length = textOf(c).length;
    if (part.length && (part.length >= rows || size + length > chars)) {
      out.push(part);
      part = [];
      size = 0;
    }
    part.push(c);
    size += length;
  }
  if (part.length) out.push(part);
  return out;
}

const FOREIGN_KEY_VIOLATION = '23503';

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
 * One batch of the document's chunks, in one statement that commits on its own; false when the
 * document no longer exists. The full-text vector weighs the title and heading path above the
 * text. A CJK collection's text is tokenised here into bigrams (src/shared/cjk.ts) for the
 * `simple` configuration; other languages go to their configuration as they are (head_fts and
 * text_fts null). A row already there (a stale attempt writing the same document's same chunks
 * at once) is left as it is.
 */
async function insertBatch(pool: pg.Pool, documentId: string, doc: ChunkOwner, title: string, part: NewChunk[]): Promise<boolean> {
  const cjk = isCjkLanguage(doc.language);
  try {
    await pool.query(
      `INSERT INTO kb_chunks (document_id, seq, tenant, collection_id, session_id, heading_path, page, text, tokens, tsv)
       SELECT $1, x.seq, $2, $3, $4, x.heading_path, x.page, x.text, x.tokens,
              setweight(to_tsvector($5::regconfig, coalesce(x.head_fts, $6 || ' ' || array_to_string(x.heading_path, ' '))), 'A') ||
              setweight(to_tsvector($5::regconfig, coalesce(x.text_fts, x.text)), 'B')
       FROM jsonb_to_recordset($7::jsonb) AS x(seq int, heading_path text[], page int, text text, tokens int, head_fts text, text_fts text)
       ON CONFLICT (document_id, seq) DO NOTHING`,
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
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION) return false; // deleted meanwhile
    throw err;
  }
}

/** One batch of embeddings, in one statement that commits on its own: as JSON arrays, cast on the server. */
async function updateEmbeddings(
  pool: pg.Pool,
  vm: VectorMode,
  documentId: string,
  model: string,
  part: { seq: number; embedding: number[] }[],
): Promise<void> {
  await pool.query(
    `UPDATE kb_chunks c SET embedding = ARRAY(SELECT jsonb_array_elements_text(x.e)::real), dims = jsonb_array_length(x.e), model = $2
       ${vm === 'pgvector' ? ', vec = (x.e::text)::vector' : ''}
     FROM jsonb_to_recordset($3::jsonb) AS x(seq int, e jsonb) WHERE c.document_id = $1 AND c.seq = x.seq`,
    [documentId, model, JSON.stringify(part.map((v) => ({ seq: v.seq, e: v.embedding })))],
  );
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

export function chunksTable(pool: pg.Pool, vectorMode: () => Promise<VectorMode>, bulk: BulkLane) {
  /**
   * Replaces the document's chunks: those a failed attempt left are deleted (the counts set to
   * none) in one short transaction, the new ones written in small statements, then the counts
   * set; each step through the bulk lane (bulk-lane.ts). A retried parse leaves exactly one set,
   * as chunking is deterministic and a chunk's key is its document and sequence number. False
   * when the document no longer exists (deleted while it was being ingested).
   */
  async function replaceChunks(
    documentId: string,
    chunks: NewChunk[],
    meta: { title: string; pages?: number | undefined },
  ): Promise<boolean> {
    const doc = await bulk(() =>
      inTransaction(pool, async (client) => {
        const owner = await lockOwner(client, documentId);
        if (!owner) return undefined;
        await client.query('DELETE FROM kb_chunks WHERE document_id = $1', [documentId]);
        await client.query('UPDATE kb_documents SET chunks_total = 0, chunks_embedded = 0, updated_at = now() WHERE document_id = $1', [
          documentId,
        ]);
        return owner;
      }),
    );
    if (!doc) return false;
    for (const part of batches(chunks, INSERT_ROWS, INSERT_TEXT_CHARS, (c) => c.text)) {
      if (!(await bulk(() => insertBatch(pool, documentId, doc, meta.title, part)))) return false;
    }
    const { rowCount } = await bulk(() =>
      pool.query(
        `UPDATE kb_documents SET chunks_total = $2, chunks_embedded = 0, title = $3, pages = $4, updated_at = now() WHERE document_id = $1`,
        [documentId, chunks.length, meta.title, meta.pages ?? null],
      ),
    );
    return Boolean(rowCount);
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

  /**
   * Stores embeddings (an update per chunk: a retried batch rewrites the same rows) in small
   * statements through the bulk lane, then counts them; returns the document's embedded count.
   */
  async function saveEmbeddings(documentId: string, model: string, vectors: { seq: number; embedding: number[] }[]): Promise<number> {
    const vm = await vectorMode();
    const rows = Math.max(1, Math.floor(EMBEDDING_VALUES / (vectors[0]?.embedding.length || 1)));
    for (const part of batches(vectors, rows)) await bulk(() => updateEmbeddings(pool, vm, documentId, model, part));
    return bulk(() =>
      inTransaction(pool, async (client) => {
        // The document's row locked before counting, so that the count sees every batch whose
        // count came before it (another worker's too): counts taken at once and written in the
        // other order would leave the smaller.
        await client.query('SELECT 1 FROM kb_documents WHERE document_id = $1 FOR UPDATE', [documentId]);
        const { rows } = await client.query(
          `UPDATE kb_documents SET chunks_embedded = (SELECT count(*) FROM kb_chunks WHERE document_id = $1 AND model = $2),
             embedding_model = $2, updated_at = now() WHERE document_id = $1 RETURNING chunks_embedded`,
          [documentId, model],
        );
        return Number(rows[0]?.chunks_embedded ?? 0);
      }),
    );
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
