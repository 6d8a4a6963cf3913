// The knowledge base's tables: collections, documents (the uploaded bytes and the ingestion's
// progress), chunks with their full-text vector and embedding, and sessions. Retrieval queries
// live here too: full-text ranking and vector kNN, each returning chunk keys in rank order.
import type pg from 'pg';
import { vectorSearchMode } from '../../infra/postgres';

export interface CollectionRow {
  collectionId: string;
  tenant: string;
  name: string;
  description: string;
  language: string;
  createdAt: string;
  documents: number;
  chunks: number;
}

export type DocumentStatus = 'queued' | 'fetching' | 'parsing' | 'embedding' | 'ready' | 'failed';

export interface DocumentRow {
  documentId: string;
  tenant: string;
  collectionId: string | null;
  sessionId: string | null;
  name: string;
  format: string | null;
  contentType: string | null;
  sourceUrl: string | null;
  contentHash: string | null;
  size: number;
  status: DocumentStatus;
  error: string | null;
  title: string;
  pages: number | null;
  chunksTotal: number;
  chunksEmbedded: number;
  createdAt: string;
  updatedAt: string;
}

export interface NewDocument {
  documentId: string;
  tenant: string;
  collectionId: string | null;
  sessionId?: string | null;
  name: string;
  format?: string | null;
  contentType?: string | null;
  sourceUrl?: string | null;
  contentHash?: string | null;
  bytes?: Buffer | null;
  status: DocumentStatus;
}

export interface NewChunk {
  seq: number;
  text: string;
  headingPath: string[];
  page?: number | undefined;
  tokens: number;
}

export interface ChunkKey {
  documentId: string;
  seq: number;
}

export interface ChunkRow extends ChunkKey {
  text: string;
  headingPath: string[];
  page: number | null;
  collectionId: string | null;
  sessionId: string | null;
  documentName: string;
  documentTitle: string;
  sourceUrl: string | null;
}

/** Where a search looks: a tenant's collections and, optionally, one session's memory. */
export interface SearchScope {
  tenant: string;
  collectionIds: string[];
  sessionId?: string | undefined;
}

/** Share of a query's IDF mass a chunk must match to count as a full-text hit. */
export const BM25_MIN_COVERAGE = 0.3;

/** How vectors are searched: pgvector's HNSW index, or an exact scan of the plain arrays. */
export type VectorMode = 'pgvector' | 'exact';

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

/** The scope as SQL over kb_chunks (aliased `c`), with parameters from `$<first>` on. */
function scopeSql(scope: SearchScope, first: number): { sql: string; params: unknown[] } {
  const parts = [`c.collection_id = ANY($${first + 1})`];
  const params: unknown[] = [scope.tenant, scope.collectionIds];
  if (scope.sessionId) {
    parts.push(`c.session_id = $${first + 2}`);
    params.push(scope.sessionId);
  }
  return { sql: `c.tenant = $${first} AND (${parts.join(' OR ')})`, params };
}

/** pgvector's text form of a vector. Numbers only: the array comes from an embedding response. */
const vectorLiteral = (v: number[]) => `[${v.map((x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;

export function knowledgeTables(pool: pg.Pool) {
  let mode: Promise<VectorMode> | undefined;
  const indexed = new Set<number>();

  const tables = {
    /** Decided once per pool: the migration added `vec` only where pgvector exists. */
    vectorMode(): Promise<VectorMode> {
      mode ??= vectorSearchMode(pool).catch((err: unknown) => {
        mode = undefined;
        throw err;
      });
      return mode;
    },

    async languageExists(language: string): Promise<boolean> {
      const { rowCount } = await pool.query('SELECT 1 FROM pg_ts_config WHERE cfgname = $1', [language]);
      return (rowCount ?? 0) > 0;
    },

    // --- collections -------------------------------------------------------------------------
    /** Undefined when the tenant already has a collection of that name. */
    async createCollection(c: {
      collectionId: string;
      tenant: string;
      name: string;
      description: string;
      language: string;
    }): Promise<CollectionRow | undefined> {
      const { rowCount } = await pool.query(
        `INSERT INTO kb_collections (collection_id, tenant, name, description, language) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING`,
        [c.collectionId, c.tenant, c.name, c.description, c.language],
      );
      return rowCount ? tables.getCollection(c.tenant, c.collectionId) : undefined;
    },
    async listCollections(tenant: string, ids?: string[]): Promise<CollectionRow[]> {
      const { rows } = await pool.query(
        `SELECT k.*, (SELECT count(*) FROM kb_documents d WHERE d.collection_id = k.collection_id) AS documents,
                (SELECT count(*) FROM kb_chunks c WHERE c.collection_id = k.collection_id) AS chunks
         FROM kb_collections k WHERE k.tenant = $1 ${ids ? 'AND k.collection_id = ANY($2)' : ''} ORDER BY k.created_at, k.collection_id`,
        ids ? [tenant, ids] : [tenant],
      );
      return rows.map((r) => ({
        collectionId: r.collection_id,
        tenant: r.tenant,
        name: r.name,
        description: r.description,
        language: r.language,
        createdAt: new Date(r.created_at).toISOString(),
        documents: Number(r.documents),
        chunks: Number(r.chunks),
      }));
    },
    async getCollection(tenant: string, collectionId: string): Promise<CollectionRow | undefined> {
      return (await tables.listCollections(tenant, [collectionId]))[0];
    },
    async findCollectionByName(tenant: string, name: string): Promise<CollectionRow | undefined> {
      const { rows } = await pool.query('SELECT collection_id FROM kb_collections WHERE tenant = $1 AND name = $2', [tenant, name]);
      return rows[0] ? tables.getCollection(tenant, rows[0].collection_id) : undefined;
    },
    async deleteCollection(tenant: string, collectionId: string): Promise<boolean> {
      const { rowCount } = await pool.query('DELETE FROM kb_collections WHERE tenant = $1 AND collection_id = $2', [tenant, collectionId]);
      return (rowCount ?? 0) > 0;
    },

    // --- documents ---------------------------------------------------------------------------
    /** Inserts the document unless its id exists; `created` says which. */
    async addDocument(d: NewDocument): Promise<{ created: boolean; document: DocumentRow }> {
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
      const document = await tables.getDocument(d.documentId);
      if (!document) throw new Error(`document ${d.documentId} vanished after its insert`);
      return { created: (rowCount ?? 0) > 0, document };
    },
    async getDocument(documentId: string): Promise<DocumentRow | undefined> {
      const { rows } = await pool.query(`SELECT ${DOC_COLUMNS} FROM kb_documents WHERE document_id = $1`, [documentId]);
      return rows[0] ? toDocument(rows[0]) : undefined;
    },
    async getDocumentBytes(documentId: string): Promise<Buffer | undefined> {
      const { rows } = await pool.query('SELECT bytes FROM kb_documents WHERE document_id = $1', [documentId]);
      return rows[0]?.bytes ?? undefined;
    },
    async listDocuments(collectionId: string): Promise<DocumentRow[]> {
      const { rows } = await pool.query(
        `SELECT ${DOC_COLUMNS} FROM kb_documents WHERE collection_id = $1 ORDER BY created_at, document_id`,
        [collectionId],
      );
      return rows.map(toDocument);
    },
    async countDocuments(collectionId: string): Promise<number> {
      const { rows } = await pool.query('SELECT count(*) AS n FROM kb_documents WHERE collection_id = $1', [collectionId]);
      return Number(rows[0].n);
    },
    async updateDocument(
      documentId: string,
      patch: Partial<Pick<DocumentRow, 'status' | 'error' | 'title' | 'pages' | 'format' | 'contentType' | 'contentHash'>> & {
        bytes?: Buffer;
      },
    ): Promise<void> {
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
      const set = Object.entries(cols).filter(([, v]) => v !== undefined);
      if (!set.length) return;
      await pool.query(
        `UPDATE kb_documents SET ${set.map(([k], i) => `${k} = $${i + 2}`).join(', ')}, updated_at = now() WHERE document_id = $1`,
        [documentId, ...set.map(([, v]) => v)],
      );
    },
    async deleteDocument(documentId: string): Promise<boolean> {
      const { rowCount } = await pool.query('DELETE FROM kb_documents WHERE document_id = $1', [documentId]);
      return (rowCount ?? 0) > 0;
    },

    // --- chunks ------------------------------------------------------------------------------
    /**
     * Replaces the document's chunks in one transaction, so a retried parse leaves exactly one
     * set; the full-text vector weighs the heading path above the text.
     */
    /** False when the document no longer exists (deleted while it was being ingested). */
    async replaceChunks(documentId: string, chunks: NewChunk[], meta: { title: string; pages?: number | undefined }): Promise<boolean> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query(
          `SELECT d.tenant, d.collection_id, d.session_id, coalesce(k.language, 'english') AS language
           FROM kb_documents d LEFT JOIN kb_collections k USING (collection_id) WHERE d.document_id = $1 FOR UPDATE OF d`,
          [documentId],
        );
        const doc = rows[0];
        if (!doc) {
          await client.query('ROLLBACK');
          return false;
        }
        await client.query('DELETE FROM kb_chunks WHERE document_id = $1', [documentId]);
        const BATCH = 200;
        for (let i = 0; i < chunks.length; i += BATCH) {
          const part = chunks.slice(i, i + BATCH);
          await client.query(
            `INSERT INTO kb_chunks (document_id, seq, tenant, collection_id, session_id, heading_path, page, text, tokens, tsv)
             SELECT $1, x.seq, $2, $3, $4, x.heading_path, x.page, x.text, x.tokens,
                    setweight(to_tsvector($5::regconfig, $6 || ' ' || array_to_string(x.heading_path, ' ')), 'A') ||
                    setweight(to_tsvector($5::regconfig, x.text), 'B')
             FROM jsonb_to_recordset($7::jsonb) AS x(seq int, heading_path text[], page int, text text, tokens int)`,
            [
              documentId,
              doc.tenant,
              doc.collection_id,
              doc.session_id,
              doc.language,
              meta.title,
              JSON.stringify(
                part.map((c) => ({ seq: c.seq, heading_path: c.headingPath, page: c.page ?? null, text: c.text, tokens: c.tokens })),
              ),
            ],
          );
        }
        await client.query(
          `UPDATE kb_documents SET chunks_total = $2, chunks_embedded = 0, title = $3, pages = $4, updated_at = now() WHERE document_id = $1`,
          [documentId, chunks.length, meta.title, meta.pages ?? null],
        );
        await client.query('COMMIT');
        return true;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    /** Chunks in [fromSeq, toSeq) that have no embedding yet from `model`. */
    async chunksToEmbed(
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
    },
    /** Stores embeddings (an update per chunk: a retried batch rewrites the same rows). */
    async saveEmbeddings(documentId: string, model: string, vectors: { seq: number; embedding: number[] }[]): Promise<number> {
      const vm = await tables.vectorMode();
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
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
        await client.query('COMMIT');
        return Number(rows[0]?.chunks_embedded ?? 0);
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    /** pgvector indexes one dimension per index: a partial HNSW index on `vec::vector(dims)`. */
    async ensureVectorIndex(dims: number): Promise<void> {
      if (indexed.has(dims) || (await tables.vectorMode()) !== 'pgvector') return;
      if (!Number.isInteger(dims) || dims < 1 || dims > 16_000) throw new Error(`embedding dimension ${dims} is out of range`);
      try {
        await pool.query(
          `CREATE INDEX IF NOT EXISTS kb_chunks_vec_${dims} ON kb_chunks USING hnsw ((vec::vector(${dims})) vector_cosine_ops) WHERE dims = ${dims}`,
        );
      } catch (err) {
        // Two workers creating the same index at once: one wins, the other sees it exists.
        if (!['42P07', '23505'].includes((err as { code?: string }).code ?? '')) throw err;
      }
      indexed.add(dims);
    },
    async getChunks(keys: ChunkKey[]): Promise<ChunkRow[]> {
      if (!keys.length) return [];
      const { rows } = await pool.query(
        `SELECT c.document_id, c.seq, c.text, c.heading_path, c.page, c.collection_id, c.session_id, d.name, d.title, d.source_url
         FROM kb_chunks c JOIN kb_documents d USING (document_id)
         JOIN unnest($1::text[], $2::int[]) AS k(document_id, seq) ON k.document_id = c.document_id AND k.seq = c.seq`,
        [keys.map((k) => k.documentId), keys.map((k) => k.seq)],
      );
      const byKey = new Map(
        rows.map((r) => [
          `${r.document_id}#${r.seq}`,
          {
            documentId: r.document_id,
            seq: r.seq,
            text: r.text,
            headingPath: r.heading_path,
            page: r.page,
            collectionId: r.collection_id,
            sessionId: r.session_id,
            documentName: r.name,
            documentTitle: r.title,
            sourceUrl: r.source_url,
          } satisfies ChunkRow,
        ]),
      );
      return keys.map((k) => byKey.get(`${k.documentId}#${k.seq}`)).filter((c): c is ChunkRow => c !== undefined);
    },

    // --- retrieval ---------------------------------------------------------------------------
    /** Languages of the scope's collections (session memory is indexed in English). */
    async scopeLanguages(scope: SearchScope): Promise<string[]> {
      const { rows } = await pool.query('SELECT DISTINCT language FROM kb_collections WHERE tenant = $1 AND collection_id = ANY($2)', [
        scope.tenant,
        scope.collectionIds,
      ]);
      const langs = rows.map((r) => r.language as string);
      if (scope.sessionId && !langs.includes('english')) langs.push('english');
      return langs;
    },
    /**
     * Okapi BM25 over the tsvectors (k1 1.2, b 0.75): each query lexeme weighs its inverse document
     * frequency within the scope, so common words count for little. A chunk must match at least
     * `minCoverage` of the query's IDF mass: a lone common word is not a hit, and the fusion with
     * vectors is not flooded by chunks that share one ordinary word with the question.
     */
    async fullTextSearch(
      scope: SearchScope,
      query: string,
      language: string,
      k: number,
      minCoverage = BM25_MIN_COVERAGE,
    ): Promise<(ChunkKey & { score: number })[]> {
      const s = scopeSql(scope, 6);
      // Two stages: the chunks matching any lexeme, best `candidates` by ts_rank (cheap, in C),
      // then BM25 on those with IDF from the whole scope. avgdl is the candidates' own: close enough
      // for ranking, and it spares a scan of every chunk's vector per query.
      const { rows } = await pool.query(
        `WITH q AS (
           SELECT DISTINCT lexeme, quote_literal(lexeme)::tsquery AS tq FROM unnest(to_tsvector($1::regconfig, $2))),
         anyq AS (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS tq FROM q),
         cand AS (
           SELECT c.document_id, c.seq, c.tsv, length(c.tsv)::float8 AS len FROM kb_chunks c, anyq
           WHERE anyq.tq IS NOT NULL AND c.tsv @@ anyq.tq AND ${s.sql}
           ORDER BY ts_rank(c.tsv, anyq.tq, 1) DESC LIMIT $5),
         stats AS (
           -- N from the documents' counts: a few rows instead of a scan of every chunk.
           SELECT (SELECT coalesce(sum(c.chunks_total), 0) FROM kb_documents c WHERE ${s.sql})::float8 AS n,
                  coalesce((SELECT avg(len) FROM cand), 1)::float8 AS avgdl),
         idf AS (
           SELECT q.lexeme, q.tq, ln(1 + (greatest(stats.n, d.df) - d.df + 0.5) / (d.df + 0.5)) AS idf
           FROM q CROSS JOIN stats
           CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM kb_chunks c WHERE c.tsv @@ q.tq AND ${s.sql}) d),
         hits AS (
           SELECT c.document_id, c.seq, c.len, i.idf, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
           FROM cand c CROSS JOIN LATERAL unnest(c.tsv) u JOIN idf i ON i.lexeme = u.lexeme)
         SELECT h.document_id, h.seq, sum(h.idf * h.tf * 2.2 / (h.tf + 1.2 * (0.25 + 0.75 * h.len / st.avgdl))) AS score
         FROM hits h CROSS JOIN stats st
         GROUP BY h.document_id, h.seq
         HAVING sum(h.idf) >= $4 * (SELECT sum(idf) FROM idf)
         ORDER BY score DESC, h.document_id, h.seq LIMIT $3`,
        [language, query, k, minCoverage, Math.max(200, k * 8), ...s.params],
      );
      return rows.map((r) => ({ documentId: r.document_id, seq: r.seq, score: Number(r.score) }));
    },
    /** Nearest chunks by cosine distance among those embedded by `model`, best first. */
    async vectorSearch(scope: SearchScope, embedding: number[], model: string, k: number): Promise<(ChunkKey & { score: number })[]> {
      const dims = embedding.length;
      const s = scopeSql(scope, 4);
      if ((await tables.vectorMode()) === 'pgvector') {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          // Filters are applied after the graph walk: a wider candidate list keeps k results.
          await client.query(`SET LOCAL hnsw.ef_search = ${Math.max(40, Math.min(1000, k * 4))}`);
          const { rows } = await client.query(
            `SELECT c.document_id, c.seq, 1 - (c.vec::vector(${dims}) <=> $1::vector(${dims})) AS score
             FROM kb_chunks c WHERE c.dims = ${dims} AND c.model = $2 AND ${s.sql}
             ORDER BY c.vec::vector(${dims}) <=> $1::vector(${dims}) LIMIT $3`,
            [vectorLiteral(embedding), model, k, ...s.params],
          );
          await client.query('COMMIT');
          return rows.map((r) => ({ documentId: r.document_id, seq: r.seq, score: Number(r.score) }));
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        } finally {
          client.release();
        }
      }
      // Exact scan: the dot product of the stored arrays, which is their cosine: the embedder
      // normalises every vector it returns, stored and query alike.
      const { rows } = await pool.query(
        `SELECT c.document_id, c.seq,
           (SELECT sum(a * b) FROM unnest(c.embedding, $1::real[]) AS t(a, b)) AS score
         FROM kb_chunks c WHERE c.dims = ${dims} AND c.model = $2 AND ${s.sql}
         ORDER BY score DESC NULLS LAST, c.document_id, c.seq LIMIT $3`,
        [embedding, model, k, ...s.params],
      );
      return rows.map((r) => ({ documentId: r.document_id, seq: r.seq, score: Number(r.score) }));
    },

    // --- sessions ----------------------------------------------------------------------------
    async createSession(s: { sessionId: string; tenant: string; title: string }): Promise<void> {
      await pool.query('INSERT INTO sessions (session_id, tenant, title) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        s.sessionId,
        s.tenant,
        s.title,
      ]);
    },
    async getSession(tenant: string, sessionId: string): Promise<{ sessionId: string; title: string; createdAt: string } | undefined> {
      const { rows } = await pool.query('SELECT session_id, title, created_at FROM sessions WHERE tenant = $1 AND session_id = $2', [
        tenant,
        sessionId,
      ]);
      const r = rows[0];
      return r ? { sessionId: r.session_id, title: r.title, createdAt: new Date(r.created_at).toISOString() } : undefined;
    },
    async addSessionRun(sessionId: string, researchId: string, question: string): Promise<void> {
      await pool.query('INSERT INTO session_runs (session_id, research_id, question) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        sessionId,
        researchId,
        question,
      ]);
    },
    /** The session's runs in the order asked, with their report's title when one exists. */
    async sessionRuns(
      sessionId: string,
    ): Promise<{ researchId: string; question: string; askedAt: string; status: string | null; reportTitle: string | null }[]> {
      const { rows } = await pool.query(
        `SELECT s.research_id, s.question, s.asked_at, r.status, p.title
         FROM session_runs s LEFT JOIN research_runs r ON r.id = s.research_id LEFT JOIN reports p ON p.research_id = s.research_id
         WHERE s.session_id = $1 ORDER BY s.asked_at, s.research_id`,
        [sessionId],
      );
      return rows.map((r) => ({
        researchId: r.research_id,
        question: r.question,
        askedAt: new Date(r.asked_at).toISOString(),
        status: r.status ?? null,
        reportTitle: r.title ?? null,
      }));
    },
  };
  return tables;
}
export type KnowledgeTables = ReturnType<typeof knowledgeTables>;
