// A long report, one call per section: the section from its own findings, with the reference
// numbers of the whole report. A section the model cannot write, or writes uncited or far too
// short, is its findings as they were written. Last, the sections are put together under their
// headings like a one-call report (assembleSections, a PostgreSQL-only activity).
import { z } from 'zod';
import { ApplicationFailure } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { citable, findingsChars, findingText, groundDraft, reporterInputs, reportProblem, type Finding } from '../../shared/report';
import { type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { flag, jsonPrompt, text } from '../llm/prompt-def';
import type { Store } from '../store';
import { modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import {
  callContext,
  loadOutline,
  languageOf,
  reportSources,
  WRITER_BLOCKS,
  WRITER_VARS,
  writerVars,
  saveDraft,
  versionedKey,
  type ReportInput,
  type ReportOutput,
} from '../role-kit/report-writing';
import { defineRole } from '../role-kit/role';
import { DraftStream } from '../role-kit/draft-stream';
import { plural } from '../../shared/plural';

/** The answer: one section's body. */
export const ReportSection = z.object({
  markdown: z.string().min(1).describe('The section body in Markdown, without its heading, citing sources as [n]'),
  summary: z.string().nullish().describe("First section only: the report's executive summary, 2 to 5 sentences citing [n]"),
});
export type ReportSection = z.infer<typeof ReportSection>;

export const REPORT_SECTION_PROMPT = jsonPrompt(
  {
    file: 'report-section',
    role: 'reporter',
    vars: {
      question: text,
      locale: text,
      outline: text,
      heading: text,
      covers: text,
      findings: text,
      references: text,
      first: flag,
      ...WRITER_VARS,
    },
    settings: ['audience', 'instructions', 'locale', 'userMemory'],
    untrusted: {
      question: 'user_message',
      findings: 'findings',
      references: 'references',
      outline: 'outline',
      ...WRITER_BLOCKS,
    },
  },
  'ReportSection',
  ReportSection,
);

const sectionKey = (i: number, version?: number) => versionedKey(`report-section/${i + 1}`, version);

type SectionDeps = { llm: Llm; store: Store };
type SectionInput = ReportInput & { section: number };

export function createReportSectionActivities(deps: SectionDeps) {
  return { writeSection: (input: SectionInput) => writeSection(deps, input) };
}

/** The last step of a long report: PostgreSQL only, so it runs with the store's activities. */
export function createReportAssembly(deps: { store: Store }) {
  return { assembleSections: (input: ReportInput & { sections: number }) => assembleSections(deps.store, input) };
}

export const reportSection = defineRole({
  does: 'Writes one section of a long report from its own findings; the sections are then put together by code.',
  prompts: { reportSection: REPORT_SECTION_PROMPT },
  parts: [],
  activities: createReportSectionActivities,
});

/** A long report, one call per section: the section from its own findings, with the reference
 *  numbers of the whole report. A section the model cannot write, or writes uncited or far too
 *  short, is its findings as they were written. */
async function writeSection(deps: SectionDeps, input: SectionInput): Promise<{ chars: number; usage: Usage }> {
  const outline = await loadOutline(deps.store, input.researchId, input.version);
  const section = outline.sections[input.section];
  if (!section) throw ApplicationFailure.nonRetryable(`the outline has no section ${input.section + 1}`, ErrorType.NotFound);
  const sources = await reportSources(deps.store, input.researchId, input.stepKeys);
  const own = sources.findings.filter((f) => section.findings.includes(f.key));
  const cited = new Set(own.flatMap((f) => f.sourceIds));
  const refs = sources.refs.filter((ref) => cited.has(ref.sourceId));
  let markdown: string;
  let summary: string | undefined;
  let usage: Usage = ZERO_USAGE;
  const draft = new DraftStream(
    deps.store.events,
    input.researchId,
    { part: `section-${input.section + 1}`, heading: section.heading, version: input.version },
    'markdown',
  );
  try {
    const r = await draft.around(
      deps.llm.structured(
        REPORT_SECTION_PROMPT,
        {
          question: input.question,
          locale: languageOf(input.locale),
          outline: outline.sections.map((s, i) => `${i + 1}. ${s.heading}: ${s.covers}`).join('\n'),
          heading: section.heading,
          covers: section.covers,
          ...reporterInputs(own, refs),
          first: input.section === 0,
          ...(await writerVars(deps.store, input)),
        },
        { ...callContext(input), stream: draft },
      ),
    );
    usage = r.usage;
    markdown = r.output.markdown;
    summary = input.section === 0 ? (r.output.summary ?? undefined) : undefined;
    const problem = reportProblem({
      draft: groundDraft({ researchId: input.researchId, draft: markdown, findings: own, refs }),
      findingsChars: findingsChars(own),
      references: citable(refs).length,
      length: 'section',
    });
    if (problem) {
      const err = ApplicationFailure.nonRetryable(`the section ${problem}`, ErrorType.LlmInvalidOutput);
      markdown = await sectionFallback(deps.store, input, section.heading, own, err);
    }
  } catch (err) {
    if (!modelGaveUp(err)) throw err;
    markdown = await sectionFallback(deps.store, input, section.heading, own, err);
  }
  await deps.store.saveDocument(input.researchId, {
    key: sectionKey(input.section, input.version),
    kind: 'report-section',
    content: markdown,
    summary: summarize(section.heading, 200),
    sourceIds: [],
    // The first section's answer carries the report's executive summary, for assembleSections.
    meta: { heading: section.heading, ...(summary ? { summary } : {}) },
  });
  return { chars: markdown.length, usage };
}

async function sectionFallback(
  store: Pick<Store, 'saveDocument'>,
  input: SectionInput,
  heading: string,
  own: Finding[],
  err: unknown,
): Promise<string> {
  await noteFallback(
    store,
    input.researchId,
    'reporter',
    versionedKey(`section-${input.section + 1}`, input.version),
    `section ${input.section + 1} ("${summarize(heading, 60)}") gives its findings as the research wrote them`,
    err,
  );
  const texts = own.filter((f) => f.key !== 'memory' && f.content.trim()).map((f) => findingText(f));
  return texts.join('\n\n') || 'The research produced no findings for this section.';
}

/** A long report, last: the sections under their headings, assembled like a one-call report. */
async function assembleSections(store: Store, input: ReportInput & { sections: number }): Promise<Omit<ReportOutput, 'usage'>> {
  const outline = await loadOutline(store, input.researchId, input.version);
  const docs = await store.getDocuments(
    input.researchId,
    Array.from({ length: input.sections }, (_, i) => sectionKey(i, input.version)),
  );
  if (docs.length !== input.sections) {
    throw ApplicationFailure.nonRetryable(
      `${plural(input.sections - docs.length, 'section')} of the report ${input.sections - docs.length === 1 ? 'is' : 'are'} not stored`,
      ErrorType.NotFound,
    );
  }
  const draft = docs.map((d, i) => `## ${outline.sections[i]!.heading}\n\n${d.content.trim()}`).join('\n\n');
  const sources = await reportSources(store, input.researchId, input.stepKeys);
  const summary = typeof docs[0]?.meta.summary === 'string' ? docs[0].meta.summary : undefined;
  // A report written section by section is a long one (or one too long for a single call).
  return saveDraft(store, input, outline.title, draft, sources, { summary, length: 'long' });
}
