// A session's memory: a follow-up run sees the session's recent questions and what their reports
// found (a window of turns, with the sources they cited copied into the run so they can be cited
// again), and every finished report of the session is indexed for knowledge_search (the rest).
import { bodyMarkdown, type ReportDoc } from '../../shared/report-doc';
import { createHash } from 'node:crypto';
import { summarize } from '../../shared/plain';
import { beating } from '../beat';
import type { Store } from '../store';
import { chunkDocument } from './chunk';
import { isEmbeddingsUnsupported, withHeartbeat, type Embedder } from './embed';
import { embeddingText, withoutVectorsNote } from './ingest';

/** Recent turns shown in full; older ones are listed by question and found by retrieval. */
export const MEMORY_WINDOW = 3;
/** Characters of one earlier report the memory keeps. */
const REPORT_EXCERPT_CHARS = 2_500;

/** A report kept as session memory is a document with an id derived from its run. */
export function reportDocumentId(researchId: string): string {
  return `R${createHash('sha256').update(researchId).digest('hex').slice(0, 16)}`;
}

/** The report's body without title, notes and reference list, with [n] turned back into [S…] ids. */
export function reportBody(report: { doc: ReportDoc; references: { n: number; sourceId: string }[] }): string {
  const byN = new Map(report.references.map((r) => [r.n, r.sourceId]));
  const body = bodyMarkdown(report.doc).trim();
  return body.replace(/\[(\d+)\]/g, (m, n: string) => (byN.has(Number(n)) ? `[${byN.get(Number(n))}]` : m));
}

export function createMemoryActivities(deps: { store: Store; embedder: Embedder; chunkTokens: number; chunkOverlap: number }) {
  const { store } = deps;
  const kb = store.knowledge;

  /**
   * Writes the run's 'memory' document from the session's earlier runs (the reporter reads it as
   * a finding, the planner and the query rewrite as context) and copies the sources those reports
   * cited into this run. Returns what it found, for the run's notes. A run a schedule started
   * joins the session here (`join`: its question), as the API does for a run it starts.
   */
  async function loadSessionMemory(input: {
    researchId: string;
    sessionId: string;
    join?: string;
  }): Promise<{ turns: number; sourceIds: string[] }> {
    if (input.join !== undefined) await kb.addSessionRun(input.sessionId, input.researchId, input.join);
    const runs = await kb.sessionRuns(input.sessionId);
    const mine = runs.findIndex((r) => r.researchId === input.researchId);
    const earlier = (mine >= 0 ? runs.slice(0, mine) : runs.filter((r) => r.researchId !== input.researchId)).filter((r) => r.reportTitle);
    if (!earlier.length) return { turns: 0, sourceIds: [] };
    const recent = earlier.slice(-MEMORY_WINDOW);
    const older = earlier.slice(0, -MEMORY_WINDOW);
    const parts: string[] = [];
    const sourceIds: string[] = [];
    if (older.length) {
      parts.push(
        `Earlier questions of this session (their reports are searchable with knowledge_search):\n${older.map((r) => `- ${summarize(r.question, 200)}`).join('\n')}`,
      );
    }
    for (const r of recent) {
      const report = await store.getReport(r.researchId);
      if (!report) continue;
      const cited = report.references.map((x) => x.sourceId);
      const copied = await store.getSources(r.researchId, cited);
      await store.saveSources(input.researchId, copied);
      for (const s of copied) if (!sourceIds.includes(s.sourceId)) sourceIds.push(s.sourceId);
      parts.push(
        `Earlier question (${r.askedAt.slice(0, 10)}): ${summarize(r.question, 400)}\nIts report, "${summarize(report.title, 200)}":\n` +
          summarize(reportBody(report), REPORT_EXCERPT_CHARS),
      );
    }
    await store.saveDocument(input.researchId, {
      key: 'memory',
      kind: 'memory',
      content: parts.join('\n\n'),
      summary: `Earlier in this session: ${recent.map((r) => summarize(r.question, 80)).join('; ')}`,
      sourceIds,
      meta: { turns: earlier.length, shown: recent.map((r) => r.researchId) },
    });
    return { turns: earlier.length, sourceIds };
  }

  /** Indexes a finished report as a document of its session, so later runs can retrieve from it. */
  async function indexSessionReport(input: { researchId: string; sessionId: string; tenant: string }): Promise<{ chunks: number }> {
    const report = await store.getReport(input.researchId);
    if (!report) return { chunks: 0 };
    const documentId = reportDocumentId(input.researchId);
    await kb.addDocument({
      documentId,
      tenant: input.tenant,
      collectionId: null,
      sessionId: input.sessionId,
      name: report.title,
      format: 'markdown',
      contentType: 'text/markdown',
      sourceUrl: `/v1/research/${encodeURIComponent(input.researchId)}/report`,
      status: 'parsing',
    });
    const body = reportBody(report);
    const sections = body.split(/\n(?=#{2,6} )/).map((part) => {
      const heading = /^#{2,6} (.*)/.exec(part)?.[1]?.trim();
      return { headingPath: heading ? [heading] : [], text: heading ? part.replace(/^.*\n/, '') : part };
    });
    const chunks = chunkDocument({ title: report.title, sections }, { maxTokens: deps.chunkTokens, overlapTokens: deps.chunkOverlap });
    // The writes wait their turn among the process's bulk writes (an ingestion's): heartbeats meanwhile.
    await beating(() => kb.replaceChunks(documentId, chunks, { title: report.title }));
    let note: string | null = null;
    if (deps.embedder.enabled && chunks.length) {
      try {
        const { vectors } = await withHeartbeat((signal) => deps.embedder.embed(chunks.map(embeddingText), signal));
        await kb.ensureVectorIndex(vectors[0]!.length);
        await beating(() =>
          kb.saveEmbeddings(
            documentId,
            deps.embedder.model,
            chunks.map((c, i) => ({ seq: c.seq, embedding: vectors[i]! })),
          ),
        );
      } catch (err) {
        // No embeddings at this endpoint: the report is still found by full text.
        if (!isEmbeddingsUnsupported(err)) throw err;
        note = withoutVectorsNote(err.message);
      }
    }
    await kb.updateDocument(documentId, { status: 'ready', error: note });
    return { chunks: chunks.length };
  }

  return { loadSessionMemory, indexSessionReport };
}
