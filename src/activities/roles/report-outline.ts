// A long report, first call: the outline, planned from the findings. Finding keys the model made
// up are dropped; a section left without findings gets the background. A model that gives no
// usable outline: one section per finding. Each section is then written by report-section.ts.
import { z } from 'zod';
import type { Finding } from '../../shared/report';
import { type Usage } from '../../shared/schemas';
import { summarize, ZERO_USAGE } from '../../shared/plain';
import type { Llm } from '../llm/call';
import { count, jsonPrompt, text } from '../llm/prompt-def';
import type { Store } from '../store';
import { findingHeading } from '../../shared/report';
import { modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import {
  callContext,
  languageOf,
  OUTLINE_KEY,
  reportSources,
  WRITER_BLOCKS,
  WRITER_VARS,
  writerVars,
  versionedKey,
  type ReportInput,
  type StoredOutline,
} from '../role-kit/report-writing';
import { defineRole } from '../role-kit/role';

/** The answer: the report's sections in order, each with the findings it draws on. */
export const ReportOutline = z.object({
  title: z.string().min(1),
  sections: z
    .array(
      z.object({
        heading: z.string().min(1).describe('The section heading, without #'),
        covers: z.string().describe('What the section says and argues, in one or two sentences'),
        findings: z.array(z.string()).describe('Keys of the findings this section draws on'),
      }),
    )
    .min(1),
});
export type ReportOutline = z.infer<typeof ReportOutline>;

export const REPORT_OUTLINE_PROMPT = jsonPrompt(
  {
    file: 'report-outline',
    role: 'reporter',
    vars: {
      question: text,
      locale: text,
      findings: text,
      notes: text,
      maxSections: count,
      ...WRITER_VARS,
    },
    settings: ['audience', 'instructions', 'locale', 'maxSections', 'userMemory'],
    untrusted: {
      question: 'user_message',
      findings: 'findings',
      ...WRITER_BLOCKS,
    },
  },
  'ReportOutline',
  ReportOutline,
);

/** Sections of a long report, at most. */
export const MAX_SECTIONS = 8;
/** Characters of each finding the outline is planned from. */
const OUTLINE_FINDING_CHARS = 2_000;

type OutlineDeps = { llm: Llm; store: Store };

export function createReportOutlineActivities(deps: OutlineDeps) {
  return { outlineReport: (input: ReportInput) => outlineReport(deps, input) };
}

export const reportOutline = defineRole({
  does: 'Plans a long report: its sections in order, each with the findings it draws on.',
  prompts: { reportOutline: REPORT_OUTLINE_PROMPT },
  parts: [],
  activities: createReportOutlineActivities,
});

/** A long report, first call: the outline. Finding keys the model made up are dropped; a
 *  section left without findings gets the background. Without a usable outline, one section per
 *  finding. */
async function outlineReport(deps: OutlineDeps, input: ReportInput): Promise<{ title: string; headings: string[]; usage: Usage }> {
  const { findings } = await reportSources(deps.store, input.researchId, input.stepKeys);
  const listed = findings.map((f) => `<finding key="${f.key}">\n${f.content.slice(0, OUTLINE_FINDING_CHARS)}\n</finding>`).join('\n');
  let outline: StoredOutline;
  let usage: Usage = ZERO_USAGE;
  try {
    const r = await deps.llm.structured(
      REPORT_OUTLINE_PROMPT,
      {
        question: input.question,
        locale: languageOf(input.locale),
        findings: listed || '(no findings)',
        notes: input.notes.join('\n') || '(none)',
        maxSections: MAX_SECTIONS,
        ...(await writerVars(deps.store, input)),
      },
      callContext(input),
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
    const key = versionedKey('outline', input.version);
    await noteFallback(deps.store, input.researchId, 'reporter', key, 'the long report has one section per finding', err);
    outline = outlineFromFindings(input.question, findings);
  }
  await deps.store.saveDocument(input.researchId, {
    key: versionedKey(OUTLINE_KEY, input.version),
    kind: 'report-outline',
    content: JSON.stringify(outline),
    summary: summarize(outline.title, 200),
    sourceIds: [],
    meta: {},
  });
  return { title: summarize(outline.title, 200), headings: outline.sections.map((s) => summarize(s.heading, 120)), usage };
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
