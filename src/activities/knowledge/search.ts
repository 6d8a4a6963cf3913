// knowledge_search: hybrid retrieval over the run's collections and its session's earlier reports.
// Every chunk found becomes a source of the run (stable id, the document's title with its page or
// section, a link to the document in the API), cited and checked like a web page.
import { type KnowledgeScope, type SourceRef } from '../../shared/schemas';
import { summarize } from '../../shared/plain';
import { noteFallback } from '../role-kit/fallbacks';
import type { StoredSource, Store } from '../store';
import { chunkSourceId, type RetrievedChunk, type Retriever } from './retrieve';

export interface KnowledgeSearchInput {
  researchId: string;
  query: string;
  /** Rewrites of the query (multi-query retrieval); their rankings are fused with the query's. */
  alternatives?: string[];
  /** Absent: nothing to search. */
  scope?: KnowledgeScope;
  k?: number;
}

export interface KnowledgeSearchResult {
  text: string;
  results: SourceRef[];
  /** How the vectors were searched ('pgvector', 'exact'), 'off' (none configured) or 'unavailable'
   *  (the endpoint has no embeddings): the last two mean full-text only. */
  vectors?: string;
  /** Set when the passages were found by full text only although embeddings are configured. */
  warning?: string;
}

/** What the researcher reads when vectors were left out: it can make up for them with rewordings. */
const FULL_TEXT_ONLY =
  '(Full-text matches only: the embeddings endpoint is unavailable, so passages worded differently from the query may be missed. ' +
  'Try alternatives in other words.)';

/** The API path of a collection's document: where a chunk's reference links. */
export function documentPath(collectionId: string, documentId: string): string {
  return `/v1/collections/${encodeURIComponent(collectionId)}/documents/${encodeURIComponent(documentId)}`;
}

export function chunkSource(c: RetrievedChunk): StoredSource {
  const where = c.page ? `p. ${c.page}` : c.headingPath.length ? c.headingPath.join(' › ') : '';
  const name = c.documentTitle || c.documentName;
  const url = c.collectionId ? `${documentPath(c.collectionId, c.documentId)}#chunk-${c.seq}` : (c.sourceUrl ?? `kb:${c.documentId}`);
  const content = c.headingPath.length ? `${c.headingPath.join(' › ')}\n${c.text}` : c.text;
  return {
    sourceId: chunkSourceId(c.documentId, c.seq),
    url,
    title: where && !name.includes(where) ? `${name} (${where})` : name,
    content,
    provider: c.collectionId ? 'knowledge' : 'session',
  };
}

export function createKnowledgeSearchActivities(deps: { store: Store; retrieve: Retriever }) {
  async function knowledgeSearch(input: KnowledgeSearchInput): Promise<KnowledgeSearchResult> {
    const scope = input.scope;
    if (!scope || (!scope.collectionIds.length && !scope.sessionId)) {
      return {
        text: `This run has no knowledge base collections, so "${summarize(input.query, 100)}" found nothing. Use web_search.`,
        results: [],
      };
    }
    const retrieval = await deps.retrieve(
      { tenant: scope.tenant, collectionIds: scope.collectionIds, sessionId: scope.sessionId },
      [input.query, ...(input.alternatives ?? [])],
      { k: input.k ?? 6 },
    );
    const sources = retrieval.chunks.map(chunkSource);
    await deps.store.saveSources(input.researchId, sources);
    const hits = sources.map((s) => `[${s.sourceId}] ${s.title} — ${s.url}\n${s.content.slice(0, 1_500)}`);
    if (retrieval.vectorsFailed) {
      // One note per run (keyed), however many searches fall back: the report says it once.
      await noteFallback(
        deps.store,
        input.researchId,
        'knowledge search',
        'embeddings-unsupported',
        'searched the knowledge base by full text only',
        retrieval.vectorsFailed,
      );
    }
    const body = hits.length ? hits.join('\n\n') : '(no matching passages)';
    return {
      text: `Knowledge base "${summarize(input.query, 100)}":\n${retrieval.vectorsFailed ? `${FULL_TEXT_ONLY}\n` : ''}${body}`,
      results: sources.map((s) => ({ sourceId: s.sourceId, title: summarize(s.title, 120), url: s.url })),
      vectors: retrieval.vectors,
      ...(retrieval.vectorsFailed ? { warning: retrieval.vectorsFailed.message } : {}),
    };
  }

  /** The tenant's collections that have readable documents, for the knowledge-base decision. */
  async function listUsableCollections(input: { tenant: string; ids?: string[] }) {
    const all = await deps.store.knowledge.listCollections(input.tenant, input.ids);
    return all
      .filter((c) => c.chunks > 0)
      .map((c) => ({ collectionId: c.collectionId, name: c.name, description: summarize(c.description, 400), documents: c.documents }));
  }

  return { knowledgeSearch, listUsableCollections };
}
