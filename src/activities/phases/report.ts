// The report's end of a run, each in one activity (one activity task and one workflow task fewer
// than a call each): the one-call report, its claim check and the user-memory step
// (writeCheckedReport); the gap reflection and, when it finds the question answered, that report
// (reflectThenReport). Chains of the reporter, citation-check, user-memory and gap-reflection roles.
import { settlePart, withinCall } from '../attempt';
import type { ReportInput, ReportOutput } from '../role-kit/report-writing';
import type { PlannerDeps } from '../role-kit/plan-repair';
import { verifyCitations, type VerifierLimits, type VerifyOutput } from '../roles/citation-check';
import { createGapReflectionActivities, type GapAnswer, type GapInput } from '../roles/gap-reflection';
import { writeReport } from '../roles/reporter';
import { createUserMemoryActivities, type LearnInput, type LearnOutput } from '../roles/user-memory';

/** The report's input; `learn`: what the user said in the run, for the user's memory to learn
 *  from after the claim check. */
export type CheckedReportInput = ReportInput & { learn?: LearnInput };

/** What the user-memory step made of the run, or why it failed for good (an outage fails the
 *  attempt: the retry reuses the report's and the check's answers from the call log). */
export type LearnedInReport = { value: LearnOutput } | { error: string };

/** The report (unwritten when it must be written by sections), its claim check and what was learned. */
export type CheckedReportOutput = ReportOutput & { claims?: VerifyOutput; learned?: LearnedInReport };

/** reflectThenReport's answer: the reflection, and the report when it found the question answered. */
export interface ReflectedReport {
  gaps: GapAnswer;
  report?: CheckedReportOutput;
}

export type ReportPhaseDeps = PlannerDeps & { limits?: VerifierLimits | undefined };

export function createReportPhaseActivities(deps: ReportPhaseDeps) {
  const { learnAboutUser } = createUserMemoryActivities(deps);
  const { reflectOnGaps } = createGapReflectionActivities(deps);

  /**
   * The one-call report and its claim check: the check reads the draft the report stored; a retry
   * after a failed check reuses the report's logged answer (its model calls have their own keys).
   * A report to be written section by section comes back unwritten and unchecked, as from
   * writeReport. Asked to, it then lets the user's memory learn from the run (learnAboutUser's code).
   */
  async function writeCheckedReport(input: CheckedReportInput): Promise<CheckedReportOutput> {
    const { learn, ...reportInput } = input;
    const report = await writeReport(deps, reportInput);
    if (report.bySection) return report;
    const { researchId, stepKeys, notes, version } = input;
    const claims = await verifyCitations(deps, { researchId, stepKeys, notes, ...(version ? { version } : {}) });
    const learned = learn ? await settlePart(withinCall('memory', () => learnAboutUser(learn))) : undefined;
    return { ...report, claims, ...(learned ? { learned } : {}) };
  }

  /**
   * The gap reflection, and when the findings answer the question, writeCheckedReport's report.
   * With follow-up steps it writes nothing more. Each part is keyed (withinCall), so a retry after
   * the report failed asks the reflection nobody again.
   */
  async function reflectThenReport(input: CheckedReportInput & { gaps: GapInput }): Promise<ReflectedReport> {
    const { gaps, ...report } = input;
    const reflected = await withinCall('gaps', () => reflectOnGaps(gaps));
    if (!reflected.answered) return { gaps: reflected };
    return { gaps: reflected, report: await writeCheckedReport(report) };
  }

  return { writeCheckedReport, reflectThenReport };
}
