// Phase 7, the reporter: the report is written from the accepted step results and the background;
// code numbers the references and removes citations that resolve to nothing.
import type { Plan, StepOutput } from '../../shared/schemas';
import type { RunState } from './run-state';

export async function writeReport(run: RunState, plan: Plan, question: string, accepted: Map<string, StepOutput>) {
  run.moveTo('reporting');
  const stepKeys = plan.steps.map((s) => accepted.get(s.id)?.key).filter((k): k is string => k !== undefined);
  const report = await run.calls.llm.writeReport.executeWithOptions({ summary: `reporter: report from ${stepKeys.length} step results` }, [
    { researchId: run.id, question, locale: run.locale, stepKeys, notes: [...run.notes] },
  ]);
  run.addUsage(report.usage);
  run.setReport({ title: report.title, references: report.references, removedCitations: report.removedCitations });
  if (report.removedCitations.length) {
    run.note(
      `Removed ${report.removedCitations.length} citation(s) that pointed at no retrieved source: [${report.removedCitations.join('], [')}].`,
    );
  }
  return report;
}
