// Phase 7, the reporter: the report is written from the accepted step results and the background;
// code numbers the references and removes citations that resolve to nothing. A long report is
// written section by section: an outline, then every section from its own findings (in parallel),
// then code puts them together, so no single completion's length cuts it. Then the claim check:
// each cited sentence is compared with its source's stored evidence, and a
// citation the evidence does not support is removed; the figures go into the status and report.
import { plural } from '../../shared/plural';
import type { CheckedReportOutput, LearnedInReport } from '../../activities/phases/report';
import type { GapAnswer, GapInput } from '../../activities/roles/gap-reflection';
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

/** The report as the run keeps it: its title and summary, and what the user-memory step learned
 *  when it ran in the report's activity (src/workflows/research/user-memory.ts). */
export interface WrittenReport {
  title: string;
  summary: string;
  learned?: LearnedInReport;
}

export async function writeReport(
  run: RunState,
  plan: Plan,
  researchQuestion: string,
  accepted: Map<string, StepOutput>,
): Promise<WrittenReport> {
  const prepared = prepareReport(run, plan, researchQuestion, accepted);
  // A one-call report whose findings do not fit the reporter's context window comes back unwritten
  // (bySection) and is written section by section. Its claim check runs in the same activity.
  const oneCall = prepared.length === 'long' ? undefined : await writeInOneCall(run, prepared.oneCall);
  return takeReport(run, prepared, oneCall);
}

/** Whether the gap reflection writes the report in its activity when it finds nothing missing:
 *  runs whose report is one call, not sections. */
export function reportsWithReflection(run: RunState): boolean {
  return (run.options.reportLength ?? 'standard') !== 'long';
}

/** Four model calls at most: the reflection, the report, its claim check, the user-memory step. */
const REFLECT_AND_REPORT_TIMEOUT = '20 minutes';

/**
 * The gap reflection, and the report in the same activity when the findings answer the question
 * (reportsWithReflection): one activity task and one workflow task fewer than each on its own.
 * The run is in the reporting phase while it runs; with follow-up steps nothing is written, and
 * the caller goes back to research.
 */
export async function reflectThenReport(
  run: RunState,
  plan: Plan,
  researchQuestion: string,
  accepted: Map<string, StepOutput>,
  gaps: GapInput,
): Promise<{ gaps: GapAnswer; report?: WrittenReport }> {
  const prepared = prepareReport(run, plan, researchQuestion, accepted);
  const r = await run.calls.llm.reflectThenReport.executeWithOptions(
    {
      summary: `gap reflection, then the report from ${prepared.stepKeys.length} step results if nothing is missing`,
      startToCloseTimeout: REFLECT_AND_REPORT_TIMEOUT,
    },
    [{ ...prepared.oneCall, gaps }],
  );
  return r.report ? { gaps: r.gaps, report: await takeReport(run, prepared, r.report) } : { gaps: r.gaps };
}

type PreparedReport = ReturnType<typeof prepareReport>;

/** Enters the reporting phase; the report's input as it stands now (the notes so far). */
function prepareReport(run: RunState, plan: Plan, researchQuestion: string, accepted: Map<string, StepOutput>) {
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
  const oneCall = {
    ...input,
    length: length === 'long' ? ('standard' as const) : length,
    sectionsIfTooLong: true as const,
    ...(learn ? { learn } : {}),
  };
  return { input, stepKeys, notes, length, oneCall };
}

/** The one-call answer kept (or, when it says so or there is none, the report written by sections),
 *  its notes, and its claim check's figures (checked now if the activity did not). */
async function takeReport(run: RunState, prepared: PreparedReport, oneCall: CheckedReportOutput | undefined): Promise<WrittenReport> {
  const { input, stepKeys, notes } = prepared;
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
      `Removed ${plural(report.removedCitations.length, 'citation')} that pointed at no retrieved source: [${report.removedCitations.join('], [')}].`,
    );
  }
  if (oneCall?.claims) applyClaims(run, oneCall.claims);
  else await checkClaims(run, stepKeys, notes);
  return { title: report.title, summary: report.summary, ...(oneCall?.learned ? { learned: oneCall.learned } : {}) };
}

/** The report and its claim check: two model calls (the LLM proxy's 5 minutes is one); with the
 *  user-memory step after them, three. */
const REPORT_AND_CHECK_TIMEOUT = '10 minutes';
const REPORT_CHECK_AND_LEARN_TIMEOUT = '15 minutes';

function writeInOneCall(
  run: RunState,
  input: ReportInput & { length: 'brief' | 'standard'; sectionsIfTooLong: true; learn?: LearnInput },
): Promise<Awaited<ReturnType<LlmActivities['writeCheckedReport']>>> {
  const summary = `reporter: report from ${input.stepKeys.length} step results`;
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
