// The reporter: the model writes the report from the findings with numbered references; code
// (shared/report.ts) checks the citations, links the charts and appends the reference list.
import { assembleReport, citationOrder, numberReferences, reporterInputs, type Finding, type Reference } from '../../shared/report';
import { ApplicationFailure } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { summarize, type ReportLength, type Usage } from '../../shared/schemas';
import type { Llm } from '../llm/call';
import { PROMPTS } from '../llm/prompts';
import type { Store } from '../store';
import { bannedDomainOf } from '../../shared/domains';

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
  // Sources on domains the user banned mid-run are left out: their citations resolve to nothing.
  const banned = await store.bans.of(researchId);
  const sources = order.length ? await store.getSources(researchId, order) : [];
  const refs = numberReferences(
    order,
    sources.filter((s) => !bannedDomainOf(s.url, banned)),
  );
  return { findings, refs };
}

/** How long a one-call report should be, in the prompt's words. */
const LENGTH: Record<Exclude<ReportLength, 'long'>, string> = {
  brief: 'brief: about 250 to 500 words, key points and a short overview; no long analysis.',
  standard: 'about 800 to 1,500 words; longer only where the findings carry it.',
};

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
}

export function createReporterActivities(deps: { llm: Llm; store: Store }) {
  /** Saves the draft (for the claim check) and the assembled report; what the workflow is told. */
  async function saveDraft(
    input: Pick<ReportInput, 'researchId' | 'locale' | 'notes'>,
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
      notes: input.notes,
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
      title,
      locale: input.locale,
      markdown: report.markdown,
      references: sources.refs,
      removedCitations: report.removedCitations,
      removedLinks: report.removedLinks,
    });
    return {
      title: summarize(title, 200),
      summary: summarize(report.body, 300),
      references: sources.refs.length,
      removedCitations: report.removedCitations.slice(0, 50),
    };
  }

  /** The report in one model call (brief and standard lengths). */
  async function writeReport(input: ReportInput): Promise<ReportOutput> {
    const sources = await reportSources(deps.store, input.researchId, input.stepKeys);
    const r = await deps.llm.structured(
      PROMPTS.reporter,
      {
        question: input.question,
        locale: languageOf(input.locale),
        ...reporterInputs(sources.findings, sources.refs),
        notes: input.notes.join('\n') || '(none)',
        length: LENGTH[input.length ?? 'standard'],
      },
      { researchId: input.researchId },
    );
    return { ...(await saveDraft(input, r.output.title, r.output.markdown, sources)), usage: r.usage };
  }

  /** A long report, first call: the outline. Finding keys the model made up are dropped; a
   *  section left without findings gets the background. */
  async function outlineReport(input: ReportInput): Promise<{ title: string; headings: string[]; usage: Usage }> {
    const { findings } = await reportSources(deps.store, input.researchId, input.stepKeys);
    const listed = findings.map((f) => `<finding key="${f.key}">\n${f.content.slice(0, OUTLINE_FINDING_CHARS)}\n</finding>`).join('\n');
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
    const keys = new Set(findings.map((f) => f.key));
    const fallback = keys.has('background') ? ['background'] : [...keys].slice(0, 1);
    const outline: StoredOutline = {
      title: r.output.title,
      sections: r.output.sections.slice(0, MAX_SECTIONS).map((s) => {
        const own = [...new Set(s.findings.filter((k) => keys.has(k)))];
        return { heading: s.heading.replace(/^#+\s*/, '').trim(), covers: s.covers, findings: own.length ? own : fallback };
      }),
    };
    await deps.store.saveDocument(input.researchId, {
      key: OUTLINE_KEY,
      kind: 'report-outline',
      content: JSON.stringify(outline),
      summary: summarize(outline.title, 200),
      sourceIds: [],
      meta: {},
    });
    return { title: summarize(outline.title, 200), headings: outline.sections.map((s) => summarize(s.heading, 120)), usage: r.usage };
  }

  async function loadOutline(researchId: string): Promise<StoredOutline> {
    const [doc] = await deps.store.getDocuments(researchId, [OUTLINE_KEY]);
    if (!doc) throw ApplicationFailure.nonRetryable(`no report outline stored for ${researchId}`, ErrorType.NotFound);
    return JSON.parse(doc.content) as StoredOutline;
  }

  /** A long report, one call per section: the section from its own findings, with the reference
   *  numbers of the whole report. */
  async function writeSection(input: ReportInput & { section: number }): Promise<{ chars: number; usage: Usage }> {
    const outline = await loadOutline(input.researchId);
    const section = outline.sections[input.section];
    if (!section) throw ApplicationFailure.nonRetryable(`the outline has no section ${input.section + 1}`, ErrorType.NotFound);
    const sources = await reportSources(deps.store, input.researchId, input.stepKeys);
    const own = sources.findings.filter((f) => section.findings.includes(f.key));
    const cited = new Set(own.flatMap((f) => f.sourceIds));
    const r = await deps.llm.structured(
      PROMPTS.reportSection,
      {
        question: input.question,
        locale: languageOf(input.locale),
        outline: outline.sections.map((s, i) => `${i + 1}. ${s.heading}: ${s.covers}`).join('\n'),
        heading: section.heading,
        covers: section.covers,
        ...reporterInputs(
          own,
          sources.refs.filter((ref) => cited.has(ref.sourceId)),
        ),
      },
      { researchId: input.researchId },
    );
    await deps.store.saveDocument(input.researchId, {
      key: sectionKey(input.section),
      kind: 'report-section',
      content: r.output.markdown,
      summary: summarize(section.heading, 200),
      sourceIds: [],
      meta: { heading: section.heading },
    });
    return { chars: r.output.markdown.length, usage: r.usage };
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
