// Phase 7, the reporter: the report is written from the accepted step results and the background;
// code numbers the references and removes citations that resolve to nothing. Then the claim check
// (patch 'claim-check'): each cited sentence is compared with its source's stored evidence, and a
// citation the evidence does not support is removed; the figures go into the status and report.
import { patched } from '@temporalio/workflow';
import type { Plan, StepOutput } from '../../shared/schemas';
import type { RunState } from './run-state';

export async function writeReport(run: RunState, plan: Plan, question: string, accepted: Map<string, StepOutput>) {
  run.moveTo('reporting');
  const stepKeys = plan.steps.map((s) => accepted.get(s.id)?.key).filter((k): k is string => k !== undefined);
  const notes = [...run.notes];
  const report = await run.calls.llm.writeReport.executeWithOptions({ summary: `reporter: report from ${stepKeys.length} step results` }, [
    { researchId: run.id, question, locale: run.locale, stepKeys, notes },
  ]);
  run.addUsage(report.usage);
  run.setReport({ title: report.title, references: report.references, removedCitations: report.removedCitations });
  if (report.removedCitations.length) {
    run.note(
      `Removed ${report.removedCitations.length} citation(s) that pointed at no retrieved source: [${report.removedCitations.join('], [')}].`,
    );
  }
  if (patched('claim-check')) await checkClaims(run, stepKeys, notes);
  return report;
}

async function checkClaims(run: RunState, stepKeys: string[], notes: string[]): Promise<void> {
  const v = await run.calls.llm.verifyCitations.executeWithOptions({ summary: 'claim check: cited sentences against their sources' }, [
    { researchId: run.id, stepKeys, notes },
  ]);
  run.addUsage(v.usage);
  run.setGrounding(v.grounding);
  if (v.grounding.removed || v.grounding.flagged) run.note(`Claim check: ${v.summary}.`);
}
