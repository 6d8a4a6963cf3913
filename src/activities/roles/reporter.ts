// The reporter: the model writes the report from the findings with numbered references; code
// (shared/report.ts) grounds and renumbers the citations, links the charts and appends the
// reference list. Code also judges the draft: one that is no report worth the name is asked for
// again once, then replaced by a report code puts together from the findings (noted as a fallback).
// Findings too long for one call are written section by section instead (report-outline.ts,
// report-section.ts); the claim check (citation-check.ts) starts from the draft stored here.
import { z } from 'zod';
import {
  assembleReport,
  citationOrder,
  findingsChars,
  groundDraft,
  numberReferences,
  reportFromFindings,
  reporterInputs,
  reportProblem,
  type Finding,
  type Reference,
} from '../../shared/report';
import { ApplicationFailure } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { type ReportLength, type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { flag, jsonPrompt, text } from '../llm/prompt-def';
import { estimateTokens } from '../llm/window';
import type { Store } from '../store';
import { bannedDomainOf } from '../../shared/domains';
import { outsideRange } from '../../shared/time-range';
import { fallbackNotes, modelGaveUp, noteFallback } from './fallbacks';
import { defineRole } from './role';

/** The answer: the report's title and its body. */
export const ReportDraft = z.object({
  title: z.string().min(1),
  markdown: z.string().min(1).describe('The report body in Markdown, citing sources as [n] with the numbers given'),
});
export type ReportDraft = z.infer<typeof ReportDraft>;

export const REPORTER_PROMPT = jsonPrompt(
  {
    file: 'reporter',
    role: 'reporter',
    vars: { question: text, locale: text, findings: text, references: text, notes: text, brief: flag, rejected: text },
    untrusted: { question: 'user_message', findings: 'findings', references: 'references' },
  },
  'ReportDraft',
  ReportDraft,
);

export interface ReportOutput {
  title: string;
  summary: string;
  references: number;
  removedCitations: number[];
  usage: Usage;
  /** Nothing was written: the findings do not fit the reporter's context window in one call, and
   *  the workflow asked to be told (`sectionsIfTooLong`); it writes the report section by section. */
  bySection?: true;
}

/** Share of the reporter's window the findings and references may take in a one-call report. */
const ONE_CALL_SHARE = 0.5;

/** The stored draft of the run's report, before the claim check (src/activities/roles/citation-check.ts). */
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
  // Sources on domains the user banned mid-run, and sources a read showed to be published outside
  // the run's time range, are left out: their citations resolve to nothing.
  const { banned, timeRange } = await store.bans.settings(researchId);
  const sources = order.length ? await store.getSources(researchId, order) : [];
  const refs = numberReferences(
    order,
    sources.filter((s) => !bannedDomainOf(s.url, banned) && !outsideRange(s.published, timeRange)),
  );
  return { findings, refs };
}

/** The notes a report carries: the workflow's, then every fallback the run took, then what code
 *  knows about the run's shape. The reporter and the claim check both publish them. */
export async function reportNotes(store: Store, input: { researchId: string; stepKeys: string[]; notes: string[] }): Promise<string[]> {
  const notes = [...input.notes, ...(await fallbackNotes(store, input.researchId))];
  if (!input.stepKeys.length) notes.push('The run ended without any research step: this report rests on the background search alone.');
  return notes;
}

/** A locale as the model should read it: "German (Germany)" for de-DE. */
export function languageOf(locale: string): string {
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(locale);
    return name && name !== locale ? name : locale;
  } catch {
    return locale;
  }
}

export interface ReportInput {
  researchId: string;
  question: string;
  locale: string;
  stepKeys: string[];
  notes: string[];
  /** Absent in runs started before report lengths: standard. */
  length?: Exclude<ReportLength, 'long'> | undefined;
  /** The workflow can write a report section by section when one call cannot hold the findings. */
  sectionsIfTooLong?: boolean;
}

type ReporterDeps = { llm: Llm; store: Store };
type ReportSources = { findings: Finding[]; refs: Reference[] };

export function createReporterActivities(deps: ReporterDeps) {
  return { writeReport: (input: ReportInput) => writeReport(deps, input) };
}

export const reporter = defineRole({
  does: 'Writes the report in one call from the findings and the numbered references (brief and standard lengths).',
  prompts: { reporter: REPORTER_PROMPT },
  parts: [],
  activities: createReporterActivities,
});

/** Saves the draft (for the claim check) and the assembled report; what the workflow is told. */
export async function saveDraft(
  store: Store,
  input: Pick<ReportInput, 'researchId' | 'locale' | 'notes' | 'stepKeys'>,
  title: string,
  draft: string,
  sources: ReportSources,
) {
  const report = assembleReport({
    researchId: input.researchId,
    title,
    draft,
    findings: sources.findings,
    refs: sources.refs,
    notes: await reportNotes(store, input),
  });
  // The draft as written, for the claim check to start from (on any of its attempts).
  await store.saveDocument(input.researchId, {
    key: REPORT_DRAFT_KEY,
    kind: 'report-draft',
    content: draft,
    summary: summarize(title, 200),
    sourceIds: [],
    meta: { title },
  });
  await store.saveReport({
    researchId: input.researchId,
    title: report.title,
    locale: input.locale,
    markdown: report.markdown,
    references: report.references,
    removedCitations: report.removedCitations,
    removedLinks: report.removedLinks,
  });
  return {
    title: summarize(report.title, 200),
    summary: summarize(report.body, 300),
    references: sources.refs.length,
    removedCitations: report.removedCitations.slice(0, 50),
  };
}

/** The report in one model call (brief and standard lengths); a draft code finds wanting is asked
 *  for once more with the reason, then replaced by the report code puts together. */
async function writeReport(deps: ReporterDeps, input: ReportInput): Promise<ReportOutput> {
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
  try {
    const first = await askReport(deps, input, sources, usage);
    if (!first.problem) return { ...(await saveDraft(deps.store, input, first.title, first.markdown, sources)), usage };
    const second = await askReport(deps, input, sources, usage, first.problem);
    if (!second.problem) return { ...(await saveDraft(deps.store, input, second.title, second.markdown, sources)), usage };
    reason = `its report was not usable twice: ${second.problem}`;
    err = ApplicationFailure.nonRetryable(`the report ${second.problem}`, ErrorType.LlmInvalidOutput);
  } catch (e) {
    if (!modelGaveUp(e)) throw e;
    // The failure's message may quote the model's answer: the report says only what happened.
    reason = 'the model gave no usable answer';
    err = e;
  }
  await noteFallback(deps.store, input.researchId, 'reporter', 'report', 'the report was put together by code from the findings', err);
  const fallback = reportFromFindings({ question: input.question, ...sources, reason });
  return { ...(await saveDraft(deps.store, input, fallback.title, fallback.draft, sources)), usage };
}

/** One draft, its usage added to `usage`, with what code finds wanting in it; `rejected` is the
 *  reason an earlier draft was not accepted. */
async function askReport(deps: ReporterDeps, input: ReportInput, sources: ReportSources, usage: Usage, rejected?: string) {
  const length = input.length ?? 'standard';
  const r = await deps.llm.structured(
    REPORTER_PROMPT,
    {
      question: input.question,
      locale: languageOf(input.locale),
      ...reporterInputs(sources.findings, sources.refs),
      notes: input.notes.join('\n') || '(none)',
      brief: length === 'brief',
      rejected: rejected ?? '',
    },
    { researchId: input.researchId, ...(rejected ? { key: 'rewrite' } : {}) },
  );
  usage.promptTokens += r.usage.promptTokens;
  usage.completionTokens += r.usage.completionTokens;
  usage.costUsd += r.usage.costUsd;
  const problem = reportProblem({
    draft: groundDraft({ researchId: input.researchId, draft: r.output.markdown, ...sources }),
    findingsChars: findingsChars(sources.findings),
    references: sources.refs.length,
    length,
  });
  return { ...r.output, problem };
}
