// The reporter: the model writes the report from the findings with numbered references; code
// (shared/report.ts) grounds and renumbers the citations, links the charts and appends the
// reference list. Code also judges the draft: one that is no report worth the name is asked for
// again once, then replaced by a report code puts together from the findings (noted as a fallback).
import {
  assembleReport,
  citationOrder,
  findingHeading,
  findingsChars,
  findingText,
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
import { summarize, ZERO_USAGE, type ReportLength, type Usage } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { estimateTokens } from '../llm/window';
import { PROMPTS } from '../llm/prompts';
import type { Store } from '../store';
import { bannedDomainOf } from '../../shared/domains';
import { fallbackNotes, modelGaveUp, noteFallback } from './fallbacks';

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
  // Sources on domains the user banned mid-run are left out: their citations resolve to nothing.
  const banned = await store.bans.of(researchId);
  const sources = order.length ? await store.getSources(researchId, order) : [];
  const refs = numberReferences(
    order,
    sources.filter((s) => !bannedDomainOf(s.url, banned)),
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

const OUTLINE_KEY = 'report-outline';
const sectionKey = (i: number) => `report-section/${i + 1}`;
/** Sections of a long report, at most. */
export const MAX_SECTIONS = 8;
/** Characters of each finding the outline is planned from. */
const OUTLINE_FINDING_CHARS = 2_000;

interface StoredOutline {
  title: string;
  sections: { heading: string; covers: string; findings: string[] }[];
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

export function createReporterActivities(deps: { llm: Llm; store: Store }) {
  /** Saves the draft (for the claim check) and the assembled report; what the workflow is told. */
  async function saveDraft(
    input: Pick<ReportInput, 'researchId' | 'locale' | 'notes' | 'stepKeys'>,
    title: string,
    draft: string,
    sources: { findings: Finding[]; refs: Reference[] },
  ) {
    const report = assembleReport({
      researchId: input.researchId,
      title,
      draft,
      findings: sources.findings,
      refs: sources.refs,
      notes: await reportNotes(deps.store, input),
    });
    // The draft as written, for the claim check to start from (on any of its attempts).
    await deps.store.saveDocument(input.researchId, {
      key: REPORT_DRAFT_KEY,
      kind: 'report-draft',
      content: draft,
      summary: summarize(title, 200),
      sourceIds: [],
      meta: { title },
    });
    await deps.store.saveReport({
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
  async function writeReport(input: ReportInput): Promise<ReportOutput> {
    const sources = await reportSources(deps.store, input.researchId, input.stepKeys);
    const length = input.length ?? 'standard';
    const usage: Usage = { ...ZERO_USAGE };
    if (input.sectionsIfTooLong && sources.findings.length > 1) {
      const window = await deps.llm.contextWindow(PROMPTS.reporter.role);
      const { findings, references } = reporterInputs(sources.findings, sources.refs);
      if (window && estimateTokens(findings + references) > window * ONE_CALL_SHARE) {
        return { title: '', summary: '', references: 0, removedCitations: [], usage, bySection: true };
      }
    }
    const ask = async (rejected?: string) => {
      const r = await deps.llm.structured(
        PROMPTS.reporter,
        {
          question: input.question,
          locale: languageOf(input.locale),
          ...reporterInputs(sources.findings, sources.refs),
          notes: input.notes.join('\n') || '(none)',
          brief: length === 'brief',
          // A draft code found wanting is asked for again, with the reason.
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
    };
    let reason: string;
    let err: unknown;
    try {
      const first = await ask();
      if (!first.problem) return { ...(await saveDraft(input, first.title, first.markdown, sources)), usage };
      const second = await ask(first.problem);
      if (!second.problem) return { ...(await saveDraft(input, second.title, second.markdown, sources)), usage };
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
    return { ...(await saveDraft(input, fallback.title, fallback.draft, sources)), usage };
  }

  /** A long report, first call: the outline. Finding keys the model made up are dropped; a
   *  section left without findings gets the background. Without a usable outline, one section per
   *  finding. */
  async function outlineReport(input: ReportInput): Promise<{ title: string; headings: string[]; usage: Usage }> {
    const { findings } = await reportSources(deps.store, input.researchId, input.stepKeys);
    const listed = findings.map((f) => `<finding key="${f.key}">\n${f.content.slice(0, OUTLINE_FINDING_CHARS)}\n</finding>`).join('\n');
    let outline: StoredOutline;
    let usage: Usage = ZERO_USAGE;
    try {
      const r = await deps.llm.structured(
        PROMPTS.reportOutline,
        {
          question: input.question,
          locale: languageOf(input.locale),
          findings: listed || '(no findings)',
          notes: input.notes.join('\n') || '(none)',
          maxSections: MAX_SECTIONS,
        },
        { researchId: input.researchId },
      );
      usage = r.usage;
      const keys = new Set(findings.map((f) => f.key));
      const fallback = keys.has('background') ? ['background'] : [...keys].slice(0, 1);
      outline = {
        title: r.output.title,
        sections: r.output.sections.slice(0, MAX_SECTIONS).map((s) => {
          const own = [...new Set(s.findings.filter((k) => keys.has(k)))];
          return { heading: s.heading.replace(/^#+\s*/, '').trim(), covers: s.covers, findings: own.length ? own : fallback };
        }),
      };
    } catch (err) {
      if (!modelGaveUp(err)) throw err;
      await noteFallback(deps.store, input.researchId, 'reporter', 'outline', 'the long report has one section per finding', err);
      outline = outlineFromFindings(input.question, findings);
    }
    await deps.store.saveDocument(input.researchId, {
      key: OUTLINE_KEY,
      kind: 'report-outline',
      content: JSON.stringify(outline),
      summary: summarize(outline.title, 200),
      sourceIds: [],
      meta: {},
    });
    return { title: summarize(outline.title, 200), headings: outline.sections.map((s) => summarize(s.heading, 120)), usage };
  }

  async function loadOutline(researchId: string): Promise<StoredOutline> {
    const [doc] = await deps.store.getDocuments(researchId, [OUTLINE_KEY]);
    if (!doc) throw ApplicationFailure.nonRetryable(`no report outline stored for ${researchId}`, ErrorType.NotFound);
    return JSON.parse(doc.content) as StoredOutline;
  }

  /** A long report, one call per section: the section from its own findings, with the reference
   *  numbers of the whole report. A section the model cannot write, or writes uncited or far too
   *  short, is its findings as they were written. */
  async function writeSection(input: ReportInput & { section: number }): Promise<{ chars: number; usage: Usage }> {
    const outline = await loadOutline(input.researchId);
    const section = outline.sections[input.section];
    if (!section) throw ApplicationFailure.nonRetryable(`the outline has no section ${input.section + 1}`, ErrorType.NotFound);
    const sources = await reportSources(deps.store, input.researchId, input.stepKeys);
    const own = sources.findings.filter((f) => section.findings.includes(f.key));
    const cited = new Set(own.flatMap((f) => f.sourceIds));
    const refs = sources.refs.filter((ref) => cited.has(ref.sourceId));
    let markdown: string;
    let usage: Usage = ZERO_USAGE;
    try {
      const r = await deps.llm.structured(
        PROMPTS.reportSection,
        {
          question: input.question,
          locale: languageOf(input.locale),
          outline: outline.sections.map((s, i) => `${i + 1}. ${s.heading}: ${s.covers}`).join('\n'),
          heading: section.heading,
          covers: section.covers,
          ...reporterInputs(own, refs),
        },
        { researchId: input.researchId },
      );
      usage = r.usage;
      markdown = r.output.markdown;
      const problem = reportProblem({
        draft: groundDraft({ researchId: input.researchId, draft: markdown, findings: own, refs }),
        findingsChars: findingsChars(own),
        references: refs.length,
        length: 'section',
      });
      if (problem) {
        const err = ApplicationFailure.nonRetryable(`the section ${problem}`, ErrorType.LlmInvalidOutput);
        markdown = await sectionFallback(input, section.heading, own, err);
      }
    } catch (err) {
      if (!modelGaveUp(err)) throw err;
      markdown = await sectionFallback(input, section.heading, own, err);
    }
    await deps.store.saveDocument(input.researchId, {
      key: sectionKey(input.section),
      kind: 'report-section',
      content: markdown,
      summary: summarize(section.heading, 200),
      sourceIds: [],
      meta: { heading: section.heading },
    });
    return { chars: markdown.length, usage };
  }

  async function sectionFallback(input: ReportInput & { section: number }, heading: string, own: Finding[], err: unknown): Promise<string> {
    await noteFallback(
      deps.store,
      input.researchId,
      'reporter',
      `section-${input.section + 1}`,
      `section ${input.section + 1} ("${summarize(heading, 60)}") gives its findings as the research wrote them`,
      err,
    );
    const texts = own.filter((f) => f.key !== 'memory' && f.content.trim()).map((f) => findingText(f));
    return texts.join('\n\n') || 'The research produced no findings for this section.';
  }

  /** A long report, last: the sections under their headings, assembled like a one-call report. */
  async function assembleSections(input: ReportInput & { sections: number }): Promise<Omit<ReportOutput, 'usage'>> {
    const outline = await loadOutline(input.researchId);
    const docs = await deps.store.getDocuments(
      input.researchId,
      Array.from({ length: input.sections }, (_, i) => sectionKey(i)),
    );
    if (docs.length !== input.sections) {
      throw ApplicationFailure.nonRetryable(`${input.sections - docs.length} section(s) of the report are not stored`, ErrorType.NotFound);
    }
    const draft = docs.map((d, i) => `## ${outline.sections[i]!.heading}\n\n${d.content.trim()}`).join('\n\n');
    const sources = await reportSources(deps.store, input.researchId, input.stepKeys);
    return saveDraft(input, outline.title, draft, sources);
  }

  return { writeReport, outlineReport, writeSection, assembleSections };
}

/** The outline code plans without the model: one section per finding, in the findings' order. */
function outlineFromFindings(question: string, findings: Finding[]): StoredOutline {
  const own = findings.filter((f) => f.key !== 'memory' && f.content.trim());
  return {
    title: question.replace(/\s+/g, ' ').trim().slice(0, 200) || 'Research report',
    sections: own.length
      ? own.slice(0, MAX_SECTIONS).map((f, i) => ({
          heading: findingHeading(f),
          covers: 'This part of the research, as its findings give it.',
          // Findings past the last section go with it, so none is left out.
          findings: i === MAX_SECTIONS - 1 ? own.slice(i).map((x) => x.key) : [f.key],
        }))
      : [{ heading: 'Findings', covers: 'What the research found.', findings: [] }],
  };
}
