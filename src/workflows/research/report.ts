// Phase 7, the reporter: the report is written from the accepted step results and the background;
// code numbers the references and removes citations that resolve to nothing. A long report is
// written section by section: an outline, then every section from its own findings (in parallel),
// then code puts them together, so no single completion's length cuts it. Then the claim check:
// each cited sentence is compared with its source's stored evidence, and a
// citation the evidence does not support is removed; the figures go into the status and report.
import type { LearnInput } from '../../activities/roles/user-memory';
import type { MemoryOwner } from '../../shared/memory';
import type { LlmActivities } from '../../activities';
import type { Grounding } from '../../shared/messages';
import type { Plan, StepOutput, Usage } from '../../shared/schemas';
import type { RunState } from './run-state';
import { learnWithReport } from './user-memory';

/** The document keys of the accepted step results, in plan order. */
export function acceptedKeys(plan: Plan, accepted: Map<string, StepOutput>): string[] {
  return plan.steps.map((s) => accepted.get(s.id)?.key).filter((k): k is string => k !== undefined);
}

export async function writeReport(run: RunState, plan: Plan, researchQuestion: string, accepted: Map<string, StepOutput>) {
  run.moveTo('reporting');
  const stepKeys = acceptedKeys(plan, accepted);
  const notes = [...run.notes];
  const input = {
    researchId: run.id,
    question: researchQuestion,
    locale: run.locale,
    stepKeys,
    notes,
    ...(run.memoryOf ? { memoryOf: run.memoryOf } : {}),
  };
  const length = run.options.reportLength ?? 'standard';
  const learn = learnWithReport(run);
  // A one-call report whose findings do not fit the reporter's context window comes back unwritten
  // (bySection) and is written section by section; a history recorded before that has no such answer.
  // Its claim check runs in the same activity (runs started before: an activity of its own).
  const oneCall =
    length === 'long' ? undefined : await writeInOneCall(run, { ...input, length, sectionsIfTooLong: true, ...(learn ? { learn } : {}) });
  if (oneCall?.bySection) {
    const why = 'The findings did not fit the model in one call: the report was written section by section.';
    run.note(why);
    notes.push(why);
  }
  const report = oneCall && !oneCall.bySection ? oneCall : await writeBySection(run, { ...input, notes: [...notes] });
  run.addUsage(report.usage);
  run.setReport({ title: report.title, references: report.references, removedCitations: report.removedCitations });
  if (report.removedCitations.length) {
    run.note(
      `Removed ${report.removedCitations.length} citation(s) that pointed at no retrieved source: [${report.removedCitations.join('], [')}].`,
    );
  }
  if (oneCall?.claims) applyClaims(run, oneCall.claims);
  else await checkClaims(run, stepKeys, notes);
  return { title: report.title, summary: report.summary, ...(oneCall?.learned ? { learned: oneCall.learned } : {}) };
}

/** Runs started before it checked the one-call report's claims in an activity of their own. */
export const REPORT_WITH_CHECK_PATCH = 'report-with-claim-check';

/** The report and its claim check: two model calls (the LLM proxy's 5 minutes is one); with the
 *  user-memory step after them, three. */
const REPORT_AND_CHECK_TIMEOUT = '10 minutes';
const REPORT_CHECK_AND_LEARN_TIMEOUT = '15 minutes';

function writeInOneCall(
  run: RunState,
  input: ReportInput & { length: 'brief' | 'standard'; sectionsIfTooLong: true; learn?: LearnInput },
): Promise<Awaited<ReturnType<LlmActivities['writeCheckedReport']>>> {
  const summary = `reporter: report from ${input.stepKeys.length} step results`;
  if (!run.patches.has(REPORT_WITH_CHECK_PATCH)) return run.calls.llm.writeReport.executeWithOptions({ summary }, [input]);
  return run.calls.llm.writeCheckedReport.executeWithOptions(
    input.learn
      ? { summary: `${summary}, then its claim check and the user memory`, startToCloseTimeout: REPORT_CHECK_AND_LEARN_TIMEOUT }
      : { summary: `${summary}, then its claim check`, startToCloseTimeout: REPORT_AND_CHECK_TIMEOUT },
    [input],
  );
}

type ReportInput = {
  researchId: string;
  question: string;
  locale: string;
  stepKeys: string[];
  notes: string[];
  memoryOf?: MemoryOwner;
};

async function writeBySection(run: RunState, input: ReportInput) {
  const outline = await run.calls.llm.outlineReport.executeWithOptions({ summary: 'reporter: outline of a long report' }, [input]);
  run.addUsage(outline.usage);
  run.note(`Long report in ${outline.headings.length} sections: ${outline.headings.join('; ')}.`);
  const n = outline.headings.length;
  const written = await Promise.all(
    outline.headings.map((heading, section) =>
      run.calls.llm.writeSection.executeWithOptions({ summary: `reporter: section ${section + 1} of ${n}: ${heading}` }, [
        { ...input, section },
      ]),
    ),
  );
  for (const w of written) run.addUsage(w.usage);
  const report = await run.calls.store.assembleSections.executeWithOptions({ summary: `report: ${n} sections put together` }, [
    { ...input, sections: n },
  ]);
  return { ...report, usage: { promptTokens: 0, completionTokens: 0, costUsd: 0 } };
}

async function checkClaims(run: RunState, stepKeys: string[], notes: string[]): Promise<void> {
  const v = await run.calls.llm.verifyCitations.executeWithOptions({ summary: 'claim check: cited sentences against their sources' }, [
    { researchId: run.id, stepKeys, notes },
  ]);
  applyClaims(run, v);
}

function applyClaims(run: RunState, v: { usage: Usage; grounding: Grounding; summary: string }): void {
  run.addUsage(v.usage);
  run.setGrounding(v.grounding);
  if (v.grounding.removed || v.grounding.flagged) run.note(`Claim check: ${v.summary}.`);
}
