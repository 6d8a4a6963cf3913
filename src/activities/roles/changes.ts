// "What changed since <date>": a run a schedule started is compared with the schedule's previous
// report. New sources and sources no longer found are set differences of the stored sources (a
// source id is a hash of its normalised URL). Changed claims and figures come from one model call
// over the previous report and the current findings, and code keeps only those it can check: the
// source must be one the current findings cite, every figure of `before` must be written in the
// previous report or findings, every figure of `now` in the current findings or that source's
// evidence. The section goes at the top of the stored report. The model's words in it are grounded
// like the report's (no citations of its own, no links); a source is cited by the number the
// published report gives it, or linked where the report does not cite it. A model that gives no
// usable comparison is the role's fallback: the section says claims were not compared, and the
// summary says so (claimsCompared false) so that no alert claims a change nobody saw.
import { z } from 'zod';
import { groundCitations, type CitableSource, type RemovedLink } from '../../shared/citations';
import { CHANGES_LISTED, type RunChanges } from '../../shared/changes';
import type { Usage } from '../../shared/schemas';
import { summarize } from '../../shared/plain';
import { markdownLink } from '../../shared/markdown-link';
import type { Finding, Reference } from '../../shared/report';
import { reportMarkdown, type ReportDoc } from '../../shared/report-doc';
import type { Llm } from '../llm/call';
import { jsonPrompt, text } from '../llm/prompt-def';
import type { ReportRecord, ScheduledReport, Store, StoredSource } from '../store';
import { modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { reportSources } from '../role-kit/report-writing';
import { defineRole } from '../role-kit/role';

/** The answer: the claims and figures that changed between the two reports. */
export const ReportChanges = z.object({
  changes: z.array(
    z.object({
      about: z.string().describe('What the claim or figure is about, in a few words'),
      before: z.string().describe('What the earlier report said, with its figure where it had one'),
      now: z.string().describe('What the current findings say instead, with the new figure'),
      source: z.string().describe('The id of the current source that says it, e.g. S3f9a01c2'),
    }),
  ),
});
export type ReportChanges = z.infer<typeof ReportChanges>;

export const CHANGES_PROMPT = jsonPrompt(
  {
    file: 'changes',
    role: 'reporter',
    vars: { question: text, previous: text, current: text },
    untrusted: { question: 'user_message', previous: 'earlier_report', current: 'current_findings' },
  },
  'ReportChanges',
  ReportChanges,
);

/** Characters of the previous report and of the current findings the comparison reads. */
const PREVIOUS_CHARS = 12_000;
const CURRENT_CHARS = 16_000;
/** Entries per list in the section. */
const MAX_LISTED = 12;

export interface ChangesInput {
  researchId: string;
  scheduleId: string;
  /** The run's start (ISO): orders the schedule's reports. */
  startedAt: string;
  question: string;
  stepKeys: string[];
}

export interface ChangesOutput {
  /** The run compared with, or undefined for a schedule's first report. */
  previousId?: string;
  since?: string;
  newSources: number;
  goneSources: number;
  changedClaims: number;
  /** Changes the model named that the stored texts do not bear out. */
  droppedClaims: number;
  /** What changed, for the run's view and its alert (absent for a first report). */
  changes?: RunChanges;
  usage: Usage;
}

const NO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, costUsd: 0 };

/** Figures in a text: numbers with their decimal part, normalised ("1,200" → "1200"). */
export function figuresIn(text: string): string[] {
  return [...text.matchAll(/\d[\d,]*(?:\.\d+)?/g)].map((m) => m[0].replace(/,(?=\d{3}\b)/g, '').replace(/,/g, '.'));
}

/** True when every figure of `claim` is written in `text`. */
function figuresFound(claim: string, text: string): boolean {
  const written = new Set(figuresIn(text));
  return figuresIn(claim).every((f) => written.has(f));
}

/** The day of a date in the report's language, e.g. "23 November 2026". */
export function dayOf(date: Date, locale: string): string {
  const opts = { dateStyle: 'long', timeZone: 'UTC' } as const;
  try {
    return new Intl.DateTimeFormat(locale || 'en', opts).format(date);
  } catch {
    return new Intl.DateTimeFormat('en', opts).format(date);
  }
}

const entry = (s: { title: string; url: string }) => markdownLink(s.title, s.url);

/** Model text for the section: on one line, its citations and links taken out (a link keeps its
 *  text), what it pointed at recorded. */
export function groundedWords(text: string, known: CitableSource[], removed: RemovedLink[]): { text: string; unresolved: number } {
  const g = groundCitations(text, known);
  removed.push(...g.removedLinks);
  const plain = g.markdown.replace(/\[\d+\]/g, '').replace(/[ \t]+([.,;:!?])/g, '$1');
  return { text: plain.replace(/\s+/g, ' ').trim(), unresolved: g.unresolved };
}

const HEADING = '## What changed since ';

/** The report with the section first in its body, after the title and the notes; a section an
 *  earlier attempt inserted is replaced. `section` is Markdown whose first line is its heading. */
export function withChangesSection(doc: ReportDoc, section: string): ReportDoc {
  const [first, ...rest] = section.trim().split('\n');
  const heading = first!.replace(/^##\s+/, '').trim();
  const others = doc.sections.filter((s) => !`## ${s.heading}`.startsWith(HEADING));
  return { ...doc, sections: [{ heading, markdown: rest.join('\n').trim() }, ...others] };
}

type ChangesDeps = { llm: Llm; store: Store };
type Changed = { about: string; before: string; now: string; ref: Reference };
type Compared = { changed: Changed[]; dropped: number; usage: Usage; compared: boolean };

export function createChangesActivities(deps: ChangesDeps) {
  return { compareWithPrevious: (input: ChangesInput) => compareWithPrevious(deps, input) };
}

export const changes = defineRole({
  does: "For a scheduled run: the claims and figures that changed since the schedule's previous report.",
  prompts: { changes: CHANGES_PROMPT },
  parts: [],
  activities: createChangesActivities,
});

async function compareWithPrevious(deps: ChangesDeps, input: ChangesInput): Promise<ChangesOutput> {
  const { researchId } = input;
  const startedAt = new Date(input.startedAt);
  await deps.store.scheduledReports.record({ scheduleId: input.scheduleId, researchId, startedAt, stepKeys: input.stepKeys });
  const previous = await deps.store.scheduledReports.before(input.scheduleId, startedAt);
  const report = await deps.store.getReport(researchId);
  if (!previous || !report) return { newSources: 0, goneSources: 0, changedClaims: 0, droppedClaims: 0, usage: NO_USAGE };

  const [before, beforeReport, current] = await Promise.all([
    deps.store.getSources(previous.researchId),
    deps.store.getReport(previous.researchId),
    reportSources(deps.store, researchId, input.stepKeys),
  ]);
  const seenBefore = new Set(before.map((s) => s.sourceId));
  const nowSources = await deps.store.getSources(researchId);
  const seenNow = new Set(nowSources.map((s) => s.sourceId));
  const fresh = current.refs.filter((r) => !seenBefore.has(r.sourceId));
  // Reports stored before references were marked cited list only what they numbered.
  const citedBefore = new Set((beforeReport?.references ?? []).filter((r) => r.cited !== false).map((r) => r.sourceId));
  const gone = before.filter((s) => citedBefore.has(s.sourceId) && !seenNow.has(s.sourceId));

  // What the earlier run knew: its report, its findings and the evidence of the sources it cited.
  const previousFindings = await deps.store.getDocuments(previous.researchId, ['background', ...previous.stepKeys]);
  const previousText = [
    beforeReport?.markdown ?? '',
    ...previousFindings.map((f) => f.content),
    ...before.filter((s) => citedBefore.has(s.sourceId)).map((s) => s.content),
  ].join('\n\n');
  const claims = await changedClaims(deps, input, { previousText, previousReport: beforeReport?.markdown, current, nowSources });

  const since = dayOf(previous.startedAt, report.locale);
  const section = changesSection(report, { since, previous, fresh, claims, gone });
  // An earlier attempt that inserted the section counted what it removed already.
  if (report.doc.sections.some((s) => `## ${s.heading}`.startsWith(HEADING))) section.removedLinks.length = section.unresolved = 0;
  const doc = withChangesSection(report.doc, section.lines.join('\n'));
  await deps.store.saveReport({
    ...report,
    doc,
    markdown: reportMarkdown(doc),
    removedLinks: [...(report.removedLinks ?? []), ...section.removedLinks],
    ...(report.grounding
      ? {
          grounding: {
            ...report.grounding,
            citations: report.grounding.citations + section.unresolved,
            unresolved: report.grounding.unresolved + section.unresolved,
            linksRemoved: report.grounding.linksRemoved + section.removedLinks.length,
          },
        }
      : {}),
  });
  const changes = summaryOf(previous, fresh, claims, gone.length);
  await deps.store.scheduledReports.saveChanges(input.scheduleId, researchId, changes);
  return {
    previousId: previous.researchId,
    since: previous.startedAt.toISOString(),
    newSources: fresh.length,
    goneSources: gone.length,
    changedClaims: claims.changed.length,
    droppedClaims: claims.dropped,
    changes,
    usage: claims.usage,
  };
}

/** The comparison as the run's view and its alert carry it: counts, and the first few of each. */
function summaryOf(previous: ScheduledReport, fresh: Reference[], claims: Compared, gone: number): RunChanges {
  const source = (r: Reference) => ({ title: summarize(r.title || r.url, 200), url: r.url });
  return {
    previousId: previous.researchId,
    since: previous.startedAt.toISOString(),
    newSources: fresh.slice(0, CHANGES_LISTED).map(source),
    newSourceCount: fresh.length,
    changedClaims: claims.changed.slice(0, CHANGES_LISTED).map((c) => ({
      about: summarize(c.about, 120),
      before: summarize(c.before, 300),
      now: summarize(c.now, 300),
      source: source(c.ref),
    })),
    changedClaimCount: claims.changed.length,
    goneSourceCount: gone,
    claimsCompared: claims.compared,
  };
}

/** Claims and figures: one model call, then only what the stored texts bear out. */
async function changedClaims(
  deps: ChangesDeps,
  input: ChangesInput,
  texts: {
    previousText: string;
    previousReport: string | undefined;
    current: { findings: Finding[]; refs: Reference[] };
    nowSources: StoredSource[];
  },
): Promise<Compared> {
  const { previousText, current } = texts;
  const changed: Changed[] = [];
  if (!current.findings.length || !previousText.trim()) return { changed, dropped: 0, usage: NO_USAGE, compared: true };
  const currentText = current.findings.map((f) => `<finding key="${f.key}">\n${f.content}\n</finding>`).join('\n');
  let r;
  try {
    r = await deps.llm.structured(
      CHANGES_PROMPT,
      {
        question: input.question,
        previous: summarize(texts.previousReport || previousText, PREVIOUS_CHARS),
        current: summarize(currentText, CURRENT_CHARS),
      },
      { researchId: input.researchId, key: 'changes' },
    );
  } catch (err) {
    if (!modelGaveUp(err)) throw err;
    await noteFallback(deps.store, input.researchId, 'changes', 'changes', 'claims and figures were not compared (new sources were)', err);
    return { changed, dropped: 0, usage: NO_USAGE, compared: false };
  }
  const citedNow = new Map(current.refs.map((ref) => [ref.sourceId, ref]));
  const evidence = new Map<string, StoredSource>(texts.nowSources.map((s) => [s.sourceId, s]));
  const findingsText = current.findings.map((f) => f.content).join('\n');
  let dropped = 0;
  for (const c of r.output.changes) {
    const id = /S[0-9a-f]{8}/.exec(c.source)?.[0];
    const ref = id ? citedNow.get(id) : undefined;
    const nowText = `${findingsText}\n${(id && evidence.get(id)?.content) || ''}`;
    const checks =
      ref !== undefined && c.before.trim() !== c.now.trim() && figuresFound(c.before, previousText) && figuresFound(c.now, nowText);
    if (checks && changed.length < MAX_LISTED) changed.push({ about: c.about, before: c.before, now: c.now, ref: ref! });
    else dropped++;
  }
  return { changed, dropped, usage: r.usage, compared: true };
}

/** The section's lines, with the links its model words lost and the citations that resolved to nothing. */
function changesSection(
  report: ReportRecord,
  what: { since: string; previous: ScheduledReport; fresh: Reference[]; claims: Compared; gone: StoredSource[] },
): { lines: string[]; removedLinks: RemovedLink[]; unresolved: number } {
  const { since, previous, fresh, gone } = what;
  const { changed, compared } = what.claims;
  const published = new Map(report.references.map((r) => [r.sourceId, r]));
  const cite = (r: Reference) => {
    const p = published.get(r.sourceId);
    return p?.cited === false || !p ? `(${entry(r)})` : `[${p.n}]`;
  };
  const lines = [`${HEADING}${since}`, ''];
  lines.push(
    `Compared with this schedule's report of ${since}, ${previous.startedAt.toISOString().slice(11, 16)} UTC (${previous.researchId}).`,
    '',
  );
  if (fresh.length) {
    lines.push('**New sources**', '');
    for (const r of fresh.slice(0, MAX_LISTED)) {
      const p = published.get(r.sourceId);
      lines.push(`- ${entry(r)}${p?.cited === false || !p ? '' : ` [${p.n}]`}`);
    }
    if (fresh.length > MAX_LISTED) lines.push(`- and ${fresh.length - MAX_LISTED} more in the references`);
    lines.push('');
  }
  const removedLinks: RemovedLink[] = [];
  let unresolved = 0;
  const words = (text: string, max: number) => {
    const g = groundedWords(text, report.references, removedLinks);
    unresolved += g.unresolved;
    return summarize(g.text, max);
  };
  if (changed.length) {
    lines.push('**Claims and figures that changed**', '');
    for (const c of changed)
      lines.push(`- ${words(c.about, 120)}: then "${words(c.before, 300)}", now "${words(c.now, 300)}" ${cite(c.ref)}`);
    lines.push('');
  }
  if (gone.length) {
    lines.push('**Cited then, not found this time**', '');
    for (const s of gone.slice(0, MAX_LISTED)) lines.push(`- ${entry(s)}`);
    lines.push('');
  }
  if (!compared) lines.push('Claims and figures were not compared this time: the model gave no usable comparison.', '');
  else if (!fresh.length && !changed.length && !gone.length) lines.push('No new sources, and no claim or figure changed.', '');
  return { lines, removedLinks, unresolved };
}
