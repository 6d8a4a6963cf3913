// Hybrid retrieval: full-text ranking and vector kNN in PostgreSQL, each over every query (the
// question and its rewrites), fused by reciprocal rank fusion, then at most a few chunks per
// document so that one long document does not crowd out the others. An embeddings endpoint that
// has no embeddings leaves the full-text ranking alone, and the retrieval says why.
import { createHash } from 'node:crypto';
import type { ApplicationFailure } from '@temporalio/activity';
import type { ChunkKey, ChunkRow, KnowledgeTables, SearchScope, VectorMode } from '../store';
import { isEmbeddingsUnsupported, type Embedder } from './embed';

/** The constant of Cormack et al.'s reciprocal rank fusion: 1 / (k + rank). */
export const RRF_K = 60;

export type Method = 'text' | 'vector';

export interface RetrievedChunk extends ChunkRow {
  score: number;
  /** 1-based rank of the chunk in each method's best list (absent: that method missed it). */
  ranks: Partial<Record<Method, number>>;
}

export interface RetrieveOptions {
  /** Chunks returned. */
  k?: number;
  /** Candidates each method contributes per query. */
  candidates?: number;
  /** At most this many chunks of one document (0: no limit). */
  perDocument?: number;
  methods?: Method[];
}

export interface Retrieval {
  chunks: RetrievedChunk[];
  /** How vectors were searched: 'off' when no embeddings endpoint is configured, 'unavailable'
   *  when the configured one answered that it has no embeddings (see `vectorsFailed`). */
  vectors: VectorMode | 'off' | 'unavailable';
  /** The permanent LlmUnsupported failure that left the vectors out: full-text ranking only. */
  vectorsFailed?: ApplicationFailure;
}

const keyOf = (c: ChunkKey) => `${c.documentId}#${c.seq}`;

/** Fuses ranked lists: each item scores the sum of 1 / (k + rank) over the lists that hold it. */
export function reciprocalRankFusion(lists: ChunkKey[][], k = RRF_K): (ChunkKey & { score: number })[] {
  const fused = new Map<string, ChunkKey & { score: number }>();
  for (const list of lists) {
    list.forEach((item, i) => {
      const key = keyOf(item);
      const prev = fused.get(key) ?? { documentId: item.documentId, seq: item.seq, score: 0 };
      prev.score += 1 / (k + i + 1);
      fused.set(key, prev);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || a.documentId.localeCompare(b.documentId) || a.seq - b.seq);
}

/** Keeps list order, dropping chunks beyond `n` per document (n = 0 keeps all). */
export function limitPerDocument<T extends ChunkKey>(list: T[], n: number): T[] {
  if (n <= 0) return list;
  const seen = new Map<string, number>();
  return list.filter((c) => {
    const count = seen.get(c.documentId) ?? 0;
    seen.set(c.documentId, count + 1);
    return count < n;
  });
}

/** A chunk's source id: stable across runs, in the same 'S' + 8 hex shape as web sources. */
export function chunkSourceId(documentId: string, seq: number): string {
  return `S${createHash('sha256').update(`kb:${documentId}:${seq}`).digest('hex').slice(0, 8)}`;
}

export function createRetriever(deps: { kb: KnowledgeTables; embedder: Embedder }) {
  return async function retrieve(scope: SearchScope, queries: string[], opts: RetrieveOptions = {}): Promise<Retrieval> {
    const k = opts.k ?? 8;
    const candidates = opts.candidates ?? Math.max(20, k * 4);
    const methods = opts.methods ?? ['text', 'vector'];
    const qs = [...new Set(queries.map((q) => q.trim()).filter(Boolean))];
    const lists: { method: Method; items: ChunkKey[] }[] = [];
    if (!qs.length || (!scope.collectionIds.length && !scope.sessionId)) return { chunks: [], vectors: 'off' };

    if (methods.includes('text')) {
      const languages = await deps.kb.scopeLanguages(scope);
      for (const q of qs) {
        // Collections in different languages: one ranking per language, merged by rank score.
        const per = await Promise.all(languages.map((lang) => deps.kb.fullTextSearch(scope, q, lang, candidates)));
        const merged = per.flat().sort((a, b) => b.score - a.score);
        const seen = new Set<string>();
        lists.push({ method: 'text', items: merged.filter((c) => !seen.has(keyOf(c)) && seen.add(keyOf(c))).slice(0, candidates) });
      }
    }
    let vectors: Retrieval['vectors'] = 'off';
    let vectorsFailed: ApplicationFailure | undefined;
    if (methods.includes('vector') && deps.embedder.enabled) {
      try {
        const { vectors: embedded } = await deps.embedder.embed(qs);
        vectors = await deps.kb.vectorMode();
        for (const v of embedded)
          lists.push({ method: 'vector', items: await deps.kb.vectorSearch(scope, v, deps.embedder.model, candidates) });
      } catch (err) {
        // Only "no embeddings here" degrades: an outage is retried like any other (Temporal backs off).
        if (!isEmbeddingsUnsupported(err)) throw err;
        vectors = 'unavailable';
        vectorsFailed = err;
      }
    }

    const fused = limitPerDocument(reciprocalRankFusion(lists.map((l) => l.items)), opts.perDocument ?? 2).slice(0, k);
    const rows = await deps.kb.getChunks(fused);
    const best = (method: Method, c: ChunkKey) => {
      let rank: number | undefined;
      for (const l of lists) {
        if (l.method !== method) continue;
        const i = l.items.findIndex((x) => keyOf(x) === keyOf(c));
        if (i >= 0 && (rank === undefined || i + 1 < rank)) rank = i + 1;
      }
      return rank;
    };
    const score = new Map(fused.map((f) => [keyOf(f), f.score]));
    const chunks = rows.map((r) => {
      const ranks: RetrievedChunk['ranks'] = {};
      for (const m of methods) {
        const rank = best(m, r);
        if (rank !== undefined) ranks[m] = rank;
      }
      return { ...r, score: score.get(keyOf(r)) ?? 0, ranks };
    });
    return { chunks, vectors, ...(vectorsFailed ? { vectorsFailed } : {}) };
  };
}
export type Retriever = ReturnType<typeof createRetriever>;
