// Retrieval over kb_chunks: full-text ranking (BM25) and vector kNN, each returning chunk keys in
// rank order, best first.
import type pg from 'pg';
import { cjkQueryText } from '../../../shared/cjk';
import { isCjkLanguage } from '../../../shared/knowledge';
import { inTransaction } from './transaction';
import type { ChunkKey, SearchScope, VectorMode } from './types';

/** Share of a query's IDF mass a chunk must match to count as a full-text hit. */
export const BM25_MIN_COVERAGE = 0.3;

export type ScoredChunk = ChunkKey & { score: number };

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

const toScored = (r: Record<string, unknown>): ScoredChunk => ({
  documentId: r.document_id as string,
  seq: r.seq as number,
  score: Number(r.score),
});

/**
 * The BM25 query: $1 language, $2 query text, $3 k, $4 minimum coverage, $5 candidates, the scope
 * from $6. Two stages: the chunks matching any lexeme, best `candidates` by ts_rank (cheap, in C),
 * then BM25 on those with IDF from the whole scope. avgdl is the candidates' own: close enough for
 * ranking, and it spares a scan of every chunk's vector per query. With `knownLexemesOnly` the
 * coverage counts only the query's lexemes that occur somewhere in the scope (see fullTextSearch).
 */
function bm25Sql(scope: string, knownLexemesOnly: boolean): string {
  return `WITH q AS (
           SELECT DISTINCT lexeme, quote_literal(lexeme)::tsquery AS tq FROM unnest(to_tsvector($1::regconfig, $2))),
         anyq AS (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS tq FROM q),
         cand AS (
           SELECT c.document_id, c.seq, c.tsv, length(c.tsv)::float8 AS len FROM kb_chunks c, anyq
           WHERE anyq.tq IS NOT NULL AND c.tsv @@ anyq.tq AND ${scope}
           ORDER BY ts_rank(c.tsv, anyq.tq, 1) DESC LIMIT $5),
         stats AS (
           -- N from the documents' counts: a few rows instead of a scan of every chunk.
           SELECT (SELECT coalesce(sum(c.chunks_total), 0) FROM kb_documents c WHERE ${scope})::float8 AS n,
                  coalesce((SELECT avg(len) FROM cand), 1)::float8 AS avgdl),
         idf AS (
           SELECT q.lexeme, q.tq, d.df, ln(1 + (greatest(stats.n, d.df) - d.df + 0.5) / (d.df + 0.5)) AS idf
           FROM q CROSS JOIN stats
           CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM kb_chunks c WHERE c.tsv @@ q.tq AND ${scope}) d),
         hits AS (
           SELECT c.document_id, c.seq, c.len, i.idf, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
           FROM cand c CROSS JOIN LATERAL unnest(c.tsv) u JOIN idf i ON i.lexeme = u.lexeme)
         SELECT h.document_id, h.seq, sum(h.idf * h.tf * 2.2 / (h.tf + 1.2 * (0.25 + 0.75 * h.len / st.avgdl))) AS score
         FROM hits h CROSS JOIN stats st
         GROUP BY h.document_id, h.seq
         HAVING sum(h.idf) >= $4 * (SELECT sum(idf) FROM idf${knownLexemesOnly ? ' WHERE df > 0' : ''})
         ORDER BY score DESC, h.document_id, h.seq LIMIT $3`;
}

/** kNN over pgvector's HNSW index for this dimension. */
async function pgvectorSearch(pool: pg.Pool, scope: SearchScope, embedding: number[], model: string, k: number): Promise<ScoredChunk[]> {
  const dims = embedding.length;
  const s = scopeSql(scope, 4);
  return inTransaction(pool, async (client) => {
    // Filters are applied after the graph walk: a wider candidate list keeps k results.
    await client.query(`SET LOCAL hnsw.ef_search = ${Math.max(40, Math.min(1000, k * 4))}`);
    const { rows } = await client.query(
      `SELECT c.document_id, c.seq, 1 - (c.vec::vector(${dims}) <=> $1::vector(${dims})) AS score
       FROM kb_chunks c WHERE c.dims = ${dims} AND c.model = $2 AND ${s.sql}
       ORDER BY c.vec::vector(${dims}) <=> $1::vector(${dims}) LIMIT $3`,
      [vectorLiteral(embedding), model, k, ...s.params],
    );
    return rows.map(toScored);
  });
}

/**
 * Exact scan: the dot product of the stored arrays, which is their cosine: the embedder
 * normalises every vector it returns, stored and query alike.
 */
async function exactVectorSearch(pool: pg.Pool, scope: SearchScope, embedding: number[], model: string, k: number): Promise<ScoredChunk[]> {
  const dims = embedding.length;
  const s = scopeSql(scope, 4);
  const { rows } = await pool.query(
    `SELECT c.document_id, c.seq,
       (SELECT sum(a * b) FROM unnest(c.embedding, $1::real[]) AS t(a, b)) AS score
     FROM kb_chunks c WHERE c.dims = ${dims} AND c.model = $2 AND ${s.sql}
     ORDER BY score DESC NULLS LAST, c.document_id, c.seq LIMIT $3`,
    [embedding, model, k, ...s.params],
  );
  return rows.map(toScored);
}

export function searchQueries(pool: pg.Pool, vectorMode: () => Promise<VectorMode>) {
  /** Languages of the scope's collections (session memory is indexed in English). */
  async function scopeLanguages(scope: SearchScope): Promise<string[]> {
    const { rows } = await pool.query('SELECT DISTINCT language FROM kb_collections WHERE tenant = $1 AND collection_id = ANY($2)', [
      scope.tenant,
      scope.collectionIds,
    ]);
    const langs = rows.map((r) => r.language as string);
    if (scope.sessionId && !langs.includes('english')) langs.push('english');
    return langs;
  }

  /**
   * Okapi BM25 over the tsvectors (k1 1.2, b 0.75): each query lexeme weighs its inverse document
   * frequency within the scope, so common words count for little. A chunk must match at least
   * `minCoverage` of the query's IDF mass: a lone common word is not a hit, and the fusion with
   * vectors is not flooded by chunks that share one ordinary word with the question.
   *
   * A CJK collection's query is cut into bigrams like its text (src/shared/cjk.ts) and searched with
   * `simple`. Many of a query's bigrams straddle two words (富士山に登る: 山に, に登) and occur
   * nowhere; as the rarest lexemes they would carry most of the IDF mass and sink every chunk below
   * the coverage, so there the coverage counts only bigrams the scope has.
   */
  async function fullTextSearch(
    scope: SearchScope,
    query: string,
    language: string,
    k: number,
    minCoverage = BM25_MIN_COVERAGE,
  ): Promise<ScoredChunk[]> {
    const s = scopeSql(scope, 6);
    const cjk = isCjkLanguage(language);
    const [config, text] = cjk ? ['simple', cjkQueryText(query)] : [language, query];
    const { rows } = await pool.query(bm25Sql(s.sql, cjk), [config, text, k, minCoverage, Math.max(200, k * 8), ...s.params]);
    return rows.map(toScored);
  }

  /** Nearest chunks by cosine distance among those embedded by `model`, best first. */
  async function vectorSearch(scope: SearchScope, embedding: number[], model: string, k: number): Promise<ScoredChunk[]> {
    const search = (await vectorMode()) === 'pgvector' ? pgvectorSearch : exactVectorSearch;
    return search(pool, scope, embedding, model, k);
  }

  return { scopeLanguages, fullTextSearch, vectorSearch };
}
