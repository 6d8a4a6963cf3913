// The reporter: the model writes the report from the findings with numbered references; code
// (shared/report.ts) grounds and renumbers the citations, links the charts and appends the
// reference list. Code also judges the draft: one that is no report worth the name is asked for
// again once, then replaced by a report code puts together from the findings (noted as a fallback).
// Findings too long for one call are written section by section instead (report-outline.ts,
// report-section.ts); the claim check (citation-check.ts) starts from the draft stored here.
import { z } from 'zod';
import {
  findingsChars,
  citable,
  groundDraft,
  reportFromFindings,
  reporterInputs,
  reportProblem,
  cutPromptEcho,
  tidyHeadings,
} from '../../shared/report';
import { ApplicationFailure } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { type Usage } from '../../shared/schemas';
import { addUsage, ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { flag, jsonPrompt, text } from '../llm/prompt-def';
import { estimateTokens } from '../llm/window';
import type { Store } from '../store';
import { takeCutMark } from '../role-kit/cut-answer';
import { modelGaveUp, noteCorrection, noteFallback } from '../role-kit/fallbacks';
import {
  callContext,
  languageOf,
  reportSources,
  salvageCutReport,
  saveDraft,
  versionedKey,
  WRITER_BLOCKS,
  WRITER_VARS,
  writerVars,
  type ReportInput,
  type ReportOutput,
  type ReportSources,
} from '../role-kit/report-writing';
import { defineRole } from '../role-kit/role';
import { DraftStream } from '../role-kit/draft-stream';
import { loadTemplate } from '../llm/render';

/** The answer: the report's title and its body. */
export const ReportDraft = z.object({
  title: z.string().min(1),
  markdown: z.string().min(1).describe('The report body in Markdown, citing sources as [n] with the numbers given'),
  summary: z.string().nullish().describe('The executive summary: 2 to 5 sentences, citing sources as [n]'),
});
export type ReportDraft = z.infer<typeof ReportDraft>;

export const REPORTER_PROMPT = jsonPrompt(
  {
    file: 'reporter',
    role: 'reporter',
    vars: {
      question: text,
      locale: text,
      findings: text,
      references: text,
      notes: text,
      brief: flag,
      rejected: text,
      ...WRITER_VARS,
    },
    settings: ['audience', 'brief', 'instructions', 'locale', 'userMemory'],
    untrusted: {
      question: 'user_message',
      findings: 'findings',
      references: 'references',
      ...WRITER_BLOCKS,
    },
  },
  'ReportDraft',
  ReportDraft,
);

/** The reporter prompt's own text, which a draft's headings may copy (read once). */
const REPORTER_LAYOUT = (() => {
  let text: string | undefined;
  return () => (text ??= loadTemplate(REPORTER_PROMPT.file));
})();

/** Share of the reporter's window the findings and references may take in a one-call report. */
const ONE_CALL_SHARE = 0.5;

type ReporterDeps = { llm: Llm; store: Store };

export function createReporterActivities(deps: ReporterDeps) {
  return { writeReport: (input: ReportInput) => writeReport(deps, input) };
}

export const reporter = defineRole({
  does: 'Writes the report in one call from the findings and the numbered references (brief and standard lengths).',
  prompts: { reporter: REPORTER_PROMPT },
  parts: [],
  activities: createReporterActivities,
});

/** The report in one model call (brief and standard lengths); a draft code finds wanting is asked
 *  for once more with the reason, then replaced by the report code puts together. */
export async function writeReport(deps: ReporterDeps, input: ReportInput): Promise<ReportOutput> {
  const sources = await reportSources(deps.store, input.researchId, input.stepKeys);
  const usage: Usage = { ...ZERO_USAGE };
  if (input.sectionsIfTooLong && sources.findings.length > 1) {
    const window = await deps.llm.contextWindow(REPORTER_PROMPT.role);
    const { findings, references } = reporterInputs(sources.findings, sources.refs);
    if (window && estimateTokens(findings + references) > window * ONE_CALL_SHARE) {
      return { title: '', summary: '', references: 0, removedCitations: [], usage, bySection: true };
    }
  }
  let reason: string;
  let err: unknown;
  // One draft for both asks: the second is the report written again.
  const draft = new DraftStream(deps.store.events, input.researchId, { part: 'report', version: input.version }, 'markdown');
  try {
    const first = await askReport(deps, input, sources, usage, draft);
    if (!first.problem) return { ...(await keepDraft(deps, input, sources, first)), usage };
    const second = await askReport(deps, input, sources, usage, draft, first.problem);
    if (!second.problem) return { ...(await keepDraft(deps, input, sources, second)), usage };
    reason = `its report was not usable twice: ${second.problem}`;
    err = ApplicationFailure.nonRetryable(`the report ${second.problem}`, ErrorType.LlmInvalidOutput);
  } catch (e) {
    if (!modelGaveUp(e)) throw e;
    // The failure's message may quote the model's answer: the report says only what happened.
    reason = 'the model gave no usable answer';
    err = e;
  }
  const key = versionedKey('report', input.version);
  await noteFallback(deps.store, input.researchId, 'reporter', key, 'the report was put together by code from the findings', err);
  const fallback = reportFromFindings({ question: input.question, ...sources, reason });
  return { ...(await saveDraft(deps.store, input, fallback.title, fallback.draft, sources, { byCode: true })), usage };
}

/** Saves an accepted draft; one kept from an answer cut off at its output limit is said so in the notes. */
async function keepDraft(deps: ReporterDeps, input: ReportInput, sources: ReportSources, d: Awaited<ReturnType<typeof askReport>>) {
  if (d.cut) {
    const what = "the model's answer was cut off at its output limit: the report keeps the paragraphs it finished";
    await noteCorrection(deps.store, input.researchId, 'reporter', versionedKey('report-cut', input.version), what);
  }
  if (d.echoed) {
    const what = "the model's report went on to repeat its instructions and data blocks: the report ends before that";
    await noteCorrection(deps.store, input.researchId, 'reporter', versionedKey('report-echo', input.version), what);
  }
  return saveDraft(deps.store, input, d.title, d.markdown, sources, d);
}

/** One draft, its usage added to `usage`, with what code finds wanting in it; `rejected` is the
 *  reason an earlier draft was not accepted. */
async function askReport(
  deps: ReporterDeps,
  input: ReportInput,
  sources: ReportSources,
  usage: Usage,
  draft: DraftStream,
  rejected?: string,
) {
  const length = input.length ?? 'standard';
  const r = await draft.around(
    deps.llm.structured(
      REPORTER_PROMPT,
      {
        question: input.question,
        locale: languageOf(input.locale),
        ...reporterInputs(sources.findings, sources.refs),
        notes: input.notes.join('\n') || '(none)',
        brief: length === 'brief',
        rejected: rejected ?? '',
        ...(await writerVars(deps.store, input)),
      },
      // A report cut off at its limit is kept up to its last finished paragraph, not paid for again.
      { ...callContext(input, rejected ? 'rewrite' : undefined), stream: draft, salvage: salvageCutReport },
    ),
  );
  const { text: kept, cut } = takeCutMark(r.output.markdown);
  // A draft that goes on to repeat its prompt is kept up to where it starts.
  const echo = cutPromptEcho(
    kept,
    Object.values(REPORTER_PROMPT.untrusted).filter((l): l is string => Boolean(l)),
  );
  const echoed = echo.cut;
  // Headings that copy the prompt's layout keep their names; empty ones go.
  const { markdown } = tidyHeadings(echo.markdown, REPORTER_LAYOUT());
  Object.assign(usage, addUsage(usage, r.usage));
  const problem = reportProblem({
    draft: groundDraft({ researchId: input.researchId, draft: markdown, ...sources }),
    findingsChars: findingsChars(sources.findings),
    references: citable(sources.refs).length,
    length,
  });
  return { ...r.output, markdown, cut, echoed, problem };
}
