// What a run wrote, as PostgreSQL keeps it: its report (or its direct answer as one), the sources
// it retrieved, its artifacts. Each read first checks that the run is the tenant's.
import { ApiError } from '../../shared/errors';
import { artifactPath } from '../../shared/report';
import { reportMarkdown, type ReportDoc } from '../../shared/report-doc';
import { summarize } from '../../shared/plain';
import { decodeOrKeep } from '../../shared/text';
import type { ArtifactBytes } from '../export/html';
import { tenantRun, type ResearchContext } from './context';
import { versionReport } from './versions';

/** The run's report (version 1, or the rewrite `version`); for a run the coordinator answered
 *  directly, that answer as a short report. */
export async function report(ctx: ResearchContext, id: string, tenant: string, version?: number) {
  await tenantRun(ctx, id, tenant);
  if (version !== undefined && version > 1) return versionReport(ctx, id, version);
  const r = await ctx.deps.store.getReport(id);
  if (r) return r;
  const row = await ctx.deps.store.runs.get(id);
  if (row?.outcome === 'answered_directly' && row.answer) return directAnswerReport(id, row.question, row.answer);
  throw new ApiError(404, 'report_not_ready', `research run ${id} has no report yet`);
}

/** A direct answer as a report: the question as its title, the answer as its one paragraph. */
function directAnswerReport(id: string, question: string, answer: string) {
  const title = summarize(question.replace(/\s+/g, ' ').trim(), 200);
  const doc: ReportDoc = { title, notes: [], sections: [{ heading: '', markdown: answer.trim() }], charts: [], references: [] };
  return {
    researchId: id,
    title,
    locale: undefined,
    doc,
    markdown: `${reportMarkdown(doc)}\n`,
    references: [],
    removedCitations: [],
  };
}

/** The images a report links by their API path (its charts), to inline in an export. */
export async function reportImages(ctx: ResearchContext, id: string, markdown: string): Promise<ArtifactBytes> {
  const out: ArtifactBytes = new Map();
  const prefix = artifactPath(id, '');
  for (const m of markdown.matchAll(/\]\((\/v1\/research\/[^)\s]+)\)/g)) {
    const link = m[1]!;
    if (!link.startsWith(prefix) || out.has(link)) continue;
    const a = await ctx.deps.store.getArtifact(id, decodeOrKeep(link.slice(prefix.length)));
    if (a) out.set(link, { contentType: a.contentType, bytes: a.bytes });
  }
  return out;
}

/** One source the run retrieved: where it is and the evidence the run kept from it. */
export async function source(ctx: ResearchContext, id: string, tenant: string, sourceId: string) {
  await tenantRun(ctx, id, tenant);
  const [s] = await ctx.deps.store.getSources(id, [sourceId]);
  if (!s) throw new ApiError(404, 'not_found', `research run ${id} has no source ${sourceId}`);
  return { sourceId: s.sourceId, title: s.title, url: s.url, provider: s.provider, evidence: s.content.slice(0, 4_000) };
}

export async function artifacts(ctx: ResearchContext, id: string, tenant: string) {
  await tenantRun(ctx, id, tenant);
  return ctx.deps.store.listArtifacts(id);
}

export async function artifact(ctx: ResearchContext, id: string, tenant: string, artifactId: string) {
  await tenantRun(ctx, id, tenant);
  const a = await ctx.deps.store.getArtifact(id, artifactId);
  if (!a) throw new ApiError(404, 'not_found', `research run ${id} has no artifact ${artifactId}`);
  return a;
}
