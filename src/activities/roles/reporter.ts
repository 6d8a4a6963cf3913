// The reporter: the model writes the report from the findings with numbered references; code
// (shared/report.ts) checks the citations, links the charts and appends the reference list.
import { assembleReport, citationOrder, numberReferences, reporterInputs } from '../../shared/report';
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

export function createReporterActivities(deps: { llm: Llm; store: Store }) {
  async function writeReport(input: {
    researchId: string;
    question: string;
    locale: string;
    stepKeys: string[];
    notes: string[];
  }): Promise<ReportOutput> {
    // The session's memory (earlier reports, citing their sources) comes last: this run's own
    // findings take the first reference numbers.
    const findings = await deps.store.getDocuments(input.researchId, ['background', ...input.stepKeys, 'memory']);
    const order = citationOrder(findings);
    const refs = numberReferences(order, order.length ? await deps.store.getSources(input.researchId, order) : []);
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
