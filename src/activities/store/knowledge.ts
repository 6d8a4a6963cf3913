// The knowledge base's tables: collections, documents (the uploaded bytes and the ingestion's
// progress), chunks with their full-text vector and embedding, and sessions. Retrieval queries
// live here too: full-text ranking and vector kNN, each returning chunk keys in rank order.
// Each part is its own module under knowledge/; this one puts them together as one object.
import type pg from 'pg';
import { bulkLane } from './knowledge/bulk-lane';
import { chunksTable } from './knowledge/chunks';
import { collectionsTable } from './knowledge/collections';
import { documentsTable } from './knowledge/documents';
import { searchQueries } from './knowledge/search';
import { sessionsTable } from './knowledge/sessions';
import { vectorIndexer, vectorModeOnce } from './knowledge/vectors';

export type * from './knowledge/types';
export type { NewCollection } from './knowledge/collections';
export type { DocumentPatch } from './knowledge/documents';
export type { ScoredChunk } from './knowledge/search';
export type { SessionRow, SessionRunRow } from './knowledge/sessions';
export { BM25_MIN_COVERAGE } from './knowledge/search';

export function knowledgeTables(pool: pg.Pool) {
  // One probe and one set of created indexes per pool, shared by the parts that write and search vectors.
  const vectorMode = vectorModeOnce(pool);
  // The process's bulk writes go one at a time (bulk-lane.ts).
  const bulk = bulkLane();
  return {
    vectorMode,
    ...collectionsTable(pool),
    ...documentsTable(pool),
    ...chunksTable(pool, vectorMode, bulk),
    ensureVectorIndex: vectorIndexer(pool, vectorMode),
    ...searchQueries(pool, vectorMode),
    ...sessionsTable(pool),
  };
}
export type KnowledgeTables = ReturnType<typeof knowledgeTables>;
