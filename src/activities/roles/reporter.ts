// The reporter: the model writes the report from the findings with numbered references; code
// (shared/report.ts) checks the citations, links the charts and appends the reference list.
import { assembleReport, citationOrder, numberReferences, reporterInputs, type Finding, type Reference } from '../../shared/report';
import { summarize, type Usage } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { PROMPTS } from '../llm/prompts';
import type { Store } from '../store';

export interface ReportOutput {
  title: string;
  summary: string;
  references: number;
  removedCitations: number[];
  usage: Usage;
}

/** The stored draft of the run's report, before the claim check (src/activities/roles/verifier.ts). */
export const REPORT_DRAFT_KEY = 'report-draft';

/** What the report is written from: the findings and the numbered references they cite. The
 *  session's memory (earlier reports, citing their sources) comes last: this run's own findings
 *  take the first reference numbers. */
export async function reportSources(
  store: Store,
  researchId: string,
  stepKeys: string[],
): Promise<{ findings: Finding[]; refs: Reference[] }> {
  const findings = await store.getDocuments(researchId, ['background', ...stepKeys, 'memory']);
  const order = citationOrder(findings);
  const refs = numberReferences(order, order.length ? await store.getSources(researchId, order) : []);
  return { findings, refs };
}

export function createReporterActivities(deps: { llm: Llm; store: Store }) {
  async function writeReport(input: {
    researchId: string;
    question: string;
    locale: string;
    stepKeys: string[];
    notes: string[];
  }): Promise<ReportOutput> {
    const { findings, refs } = await reportSources(deps.store, input.researchId, input.stepKeys);
    const r = await deps.llm.structured(
      PROMPTS.reporter,
      { question: input.question, locale: input.locale, ...reporterInputs(findings, refs), notes: input.notes.join('\n') || '(none)' },
      { researchId: input.researchId },
    );
    const report = assembleReport({
      researchId: input.researchId,
      title: r.output.title,
      draft: r.output.markdown,
      findings,
      refs,
      notes: input.notes,
    });
    // The draft as written, for the claim check to start from (on any of its attempts).
    await deps.store.saveDocument(input.researchId, {
      key: REPORT_DRAFT_KEY,
      kind: 'report-draft',
      content: r.output.markdown,
      summary: summarize(r.output.title, 200),
      sourceIds: [],
      meta: { title: r.output.title },
    });
    await deps.store.saveReport({
      researchId: input.researchId,
      title: r.output.title,
      locale: input.locale,
      markdown: report.markdown,
      references: refs,
      removedCitations: report.removedCitations,
      removedLinks: report.removedLinks,
    });
    return {
      title: summarize(r.output.title, 200),
      summary: summarize(report.body, 300),
      references: refs.length,
      removedCitations: report.removedCitations.slice(0, 50),
      usage: r.usage,
    };
  }

  return { writeReport };
}
