// What the writing roles share (reporter, report outline, report section, the claim check and
// rewrites): the inputs and outputs of a report call, the blocks every writing prompt holds, the
// sources and notes a report is written from, and how a draft is saved. Code, not a model call.
import { ApplicationFailure } from '@temporalio/activity';
import {
  assembleReport,
  citable,
  citationOrder,
  citeRepeats,
  groundDraft,
  numberReferences,
  type Finding,
  type Reference,
} from '../../shared/report';
import type { ReportNote } from '../../shared/report-doc';
import { bannedDomainOf } from '../../shared/domains';
import { ErrorType } from '../../shared/errors';
import type { MemoryOwner } from '../../shared/memory';
import { summarize } from '../../shared/plain';
import { type ReportLength, type Usage } from '../../shared/schemas';
import { withSummary } from '../../shared/summary';
import { outsideRange } from '../../shared/time-range';
import { partialField } from '../llm/partial-json';
import { text } from '../llm/prompt-def';
import type { Store, StoredSource } from '../store';
import { finishedPart, markedCut } from './cut-answer';
import { fallbackNotes, noteCorrection } from './fallbacks';
import { readUserMemory } from './memory-block';

/** The blocks every writing prompt (report, outline, section) shares: a rewrite's audience and
 *  instructions, and the user's memory; as template variables, and as the untrusted blocks they fill. */
export const WRITER_VARS = { audience: text, instructions: text, userMemory: text } as const;
export const WRITER_BLOCKS = { audience: 'audience', instructions: 'rewrite_instructions', userMemory: 'user_memory' } as const;

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

/** The stored draft of the run's report, before the claim check (src/activities/roles/citation-check.ts). */
export const REPORT_DRAFT_KEY = 'report-draft';

/** A document or note key of one report version: the run's own report (no version, or 1) keeps
 *  the key as it was; a rewrite's is `<key>@v<n>`, so no rewrite touches what version 1 stored. */
export function versionedKey(key: string, version: number | undefined): string {
  return version !== undefined && version > 1 ? `${key}@v${version}` : key;
}

/** The writer blocks' values: a rewrite's wishes (absent, the prompts read as for the run's own
 *  report) and the user's memory, read now, so a fact deleted a moment ago is not in it. */
export async function writerVars(store: Store, input: Pick<ReportInput, 'audience' | 'instructions' | 'memoryOf'>) {
  return {
    audience: input.audience ?? '',
    instructions: input.instructions ?? '',
    userMemory: await readUserMemory(store, input.memoryOf),
  };
}

/** The model call's context: a rewrite may name another model for its writing calls. */
export function callContext(input: Pick<ReportInput, 'researchId' | 'model'>, key?: string) {
  return { researchId: input.researchId, ...(key ? { key } : {}), ...(input.model ? { model: input.model } : {}) };
}

/** What the report is written from: the findings, the numbered references they cite and those
 *  sources as stored. The session's memory (earlier reports, citing their sources) comes last: this
 *  run's own findings take the first reference numbers. */
export async function reportSources(store: Store, researchId: string, stepKeys: string[]): Promise<ReportSources> {
  const findings = await store.getDocuments(researchId, ['background', ...stepKeys, 'memory']);
  const order = citationOrder(findings);
  // Sources on domains the user banned mid-run, and sources a read showed to be published outside
  // the run's time range, are left out: their citations resolve to nothing.
  const { banned, timeRange } = await store.bans.settings(researchId);
  const sources = order.length ? await store.getSources(researchId, order) : [];
  const kept = sources.filter((s) => !bannedDomainOf(s.url, banned) && !outsideRange(s.published, timeRange));
  const refs = numberReferences(order, kept);
  return { findings, refs, stored: new Map(kept.map((s) => [s.sourceId, s])) };
}

/** The notes a report carries: the workflow's, then every fallback the run took, then what code
 *  knows about the run's shape. The reporter and the claim check both publish them. */
export async function reportNotes(
  store: Store,
  input: { researchId: string; stepKeys: string[]; notes: string[]; version?: number | undefined },
): Promise<ReportNote[]> {
  const notes: ReportNote[] = [
    ...input.notes.map((text) => ({ text, kind: 'run' as const })),
    ...(await fallbackNotes(store, input.researchId, input.version)).map((text) => ({ text, kind: 'fallback' as const })),
  ];
  if (!input.stepKeys.length)
    notes.push({ text: 'The run ended without any research step: this report rests on the background search alone.', kind: 'run' });
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
  /** Absent: standard. */
  length?: Exclude<ReportLength, 'long'> | undefined;
  /** The workflow can write a report section by section when one call cannot hold the findings. */
  sectionsIfTooLong?: boolean;
  /** A rewrite (POST /v1/research/:id/report): the version it writes (2 and up), for whom, what
   *  else the user asked, and the model its writing calls use. Absent: the run's own report. */
  version?: number | undefined;
  audience?: string | undefined;
  instructions?: string | undefined;
  model?: string | undefined;
  /** Whose memory the prompts hold (absent: none). */
  memoryOf?: MemoryOwner | undefined;
}

export type ReportSources = {
  findings: Finding[];
  refs: Reference[];
  /** The referenced sources as stored, by id: what each states, for citing sentences that repeat it. */
  stored: Map<string, StoredSource>;
};

/**
 * What a report answer cut off at its output limit still gives (the `salvage` of a structured
 * call): its title, its summary when that was finished, and the part of its body the model
 * finished (role-kit/cut-answer.ts). Nothing when it finished too little: the answer is then asked
 * for again, as any cut-off answer is.
 */
export function salvageCutReport(raw: string): { title: string; markdown: string; summary: string | null } | undefined {
  const title = partialField(raw, 'title');
  const body = partialField(raw, 'markdown');
  if (!title?.complete || !title.text.trim() || !body) return undefined;
  const summary = partialField(raw, 'summary');
  const kept = body.complete ? body.text : finishedPart(body.text);
  if (!kept?.trim()) return undefined;
  return { title: title.text, markdown: markedCut(kept), summary: summary?.complete ? summary.text : null };
}

/** Saves the draft (for the claim check) and the assembled report; what the workflow is told. The
 *  executive summary goes on top of the draft (shared/summary.ts): the model's `summary` when it is
 *  usable, else code's from the cited key points, noted unless code wrote the whole report. */
export async function saveDraft(
  store: Store,
  input: Pick<ReportInput, 'researchId' | 'locale' | 'notes' | 'stepKeys' | 'version' | 'length'> & { question?: string },
  title: string,
  written: string,
  sources: ReportSources,
  given: { summary?: string | null | undefined; byCode?: boolean; length?: ReportLength } = {},
) {
  // Grounded as the claim check grounds it, so code's summary may take sentences that repeat a source.
  const ground = (text: string) => {
    const g = groundDraft({ researchId: input.researchId, draft: text, ...sources });
    return { ...g, markdown: citeRepeats(g.markdown, sources.findings, sources.refs, sources.stored).markdown };
  };
  const top = withSummary({
    draft: written,
    summary: given.summary,
    locale: input.locale,
    references: citable(sources.refs).length,
    ground,
  });
  if (top.problem && !given.byCode) {
    const what = `the executive summary was taken from the report's cited key points, because the model ${top.problem}`;
    await noteCorrection(store, input.researchId, 'reporter', versionedKey('summary', input.version), what);
  }
  const draft = top.draft;
  const report = assembleReport({
    researchId: input.researchId,
    title,
    draft,
    findings: sources.findings,
    refs: sources.refs,
    stored: sources.stored,
    notes: await reportNotes(store, input),
  });
  // The draft as written, for the claim check to start from (on any of its attempts).
  await store.saveDocument(input.researchId, {
    key: versionedKey(REPORT_DRAFT_KEY, input.version),
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
    doc: report.doc,
    markdown: report.markdown,
    references: report.references,
    removedCitations: report.removedCitations,
    removedLinks: report.removedLinks,
    version: input.version,
    // What a rewrite of this report reads: kept with the run's own report.
    ...(input.version === undefined && input.question !== undefined
      ? {
          basis: {
            question: input.question,
            stepKeys: input.stepKeys,
            notes: input.notes,
            length: given.length ?? input.length ?? 'standard',
          },
        }
      : {}),
  });
  return {
    title: summarize(report.title, 200),
    summary: summarize(report.body, 300),
    references: sources.refs.length,
    removedCitations: report.removedCitations.slice(0, 50),
  };
}

/** The stored outline of a long report (report-outline.ts writes it, report-section.ts reads it). */
export const OUTLINE_KEY = 'report-outline';

export interface StoredOutline {
  title: string;
  sections: { heading: string; covers: string; findings: string[] }[];
}

/** The outline the first call stored (of a rewrite: its own). */
export async function loadOutline(store: Pick<Store, 'getDocuments'>, researchId: string, version?: number): Promise<StoredOutline> {
  const [doc] = await store.getDocuments(researchId, [versionedKey(OUTLINE_KEY, version)]);
  if (!doc) throw ApplicationFailure.nonRetryable(`no report outline stored for ${researchId}`, ErrorType.NotFound);
  return JSON.parse(doc.content) as StoredOutline;
}
