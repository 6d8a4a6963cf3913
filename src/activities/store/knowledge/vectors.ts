// Whether vectors live in pgvector columns, and pgvector's per-dimension HNSW indexes.
import type pg from 'pg';
import { vectorSearchMode } from '../../../infra/postgres';
import type { VectorMode } from './types';

/** Decided once per pool: the migration added `vec` only where pgvector exists. A failed probe is asked again. */
export function vectorModeOnce(pool: pg.Pool): () => Promise<VectorMode> {
  let mode: Promise<VectorMode> | undefined;
  return () => {
    mode ??= vectorSearchMode(pool).catch((err: unknown) => {
      mode = undefined;
      throw err;
    });
    return mode;
  };
}

/** pgvector indexes one dimension per index: a partial HNSW index on `vec::vector(dims)`. */
export function vectorIndexer(pool: pg.Pool, vectorMode: () => Promise<VectorMode>): (dims: number) => Promise<void> {
  const indexed = new Set<number>();
  return async (dims) => {
    if (indexed.has(dims) || (await vectorMode()) !== 'pgvector') return;
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
  };
}
