// Report assembly, done by code and not by the prompt: the numbers the reporter is shown, the
// findings it reads (with [S…] ids turned into [n]), and the final Markdown: every citation the
// model wrote, in whatever form, grounded and renumbered 1..k in order of first citation, linked
// charts, the run's notes (grounded the same way) and the reference list.
import { plural } from './plural';
import {
  groundCitations,
  renumberCitations,
  sourceIdsToNumbers,
  withoutSourceHeads,
  type GroundedCitations,
  type RemovedLink,
} from './citations';
import { citeRepeatedSentences } from './repeated-citations';
import { reportMarkdown, sectionsOf, type Reference, type ReportDoc, type ReportNote } from './report-doc';
import { isSnippetOnly } from './source-kinds';

export type { RemovedLink } from './citations';
export { Reference } from './report-doc';

/** Characters of one finding the reporter is shown. */
export const FINDING_CHARS = 12_000;

export interface Finding {
  key: string;
  content: string;
  sourceIds: string[];
  /** The writer's one-line summary (stored findings have one). */
  summary?: string;
  meta?: Record<string, unknown>;
}

/** The API path of an artifact a coder step wrote; the report links charts with it. */
export function artifactPath(researchId: string, artifactId: string): string {
  return `/v1/research/${encodeURIComponent(researchId)}/artifacts/${encodeURIComponent(artifactId)}`;
}

/** Source ids in the order the findings first cite them: the order of the reference numbers. */
export function citationOrder(findings: Finding[]): string[] {
  const order: string[] = [];
  for (const f of findings) for (const id of f.sourceIds) if (!order.includes(id)) order.push(id);
  return order;
}

/** Numbers the sources that exist, in citation order; ids with no stored source get no number. */
export function numberReferences(
  order: string[],
  sources: { sourceId: string; url: string; title: string; provider?: string }[],
): Reference[] {
  const byId = new Map(sources.map((s) => [s.sourceId, s]));
  return order
    .filter((id) => byId.has(id))
    .map((id, i) => {
      const s = byId.get(id)!;
      return { n: i + 1, sourceId: id, url: s.url, title: s.title, ...(isSnippetOnly(s.provider) ? { snippet: true } : {}) };
    });
}

/** The references a report may cite: those whose text the run read (a page, a document, an
 *  abstract), not those it has only a search engine's snippet of. */
export function citable(refs: Reference[]): Reference[] {
  return refs.filter((r) => !r.snippet);
}

/** The reporter's inputs: findings citing [n], and the reference list those numbers point at. Only
 *  the citable references are numbered for it: a finding's citation of a snippet is left out, and
 *  the report lists that source under "Also consulted" (grounding removes any citation of it). */
export function reporterInputs(findings: Finding[], refs: Reference[]): { findings: string; references: string } {
  const numbered = citable(refs);
  const numberOf = new Map(numbered.map((r) => [r.sourceId, r.n]));
  return {
    findings:
      findings
        .map((f) => `<finding key="${f.key}">\n${sourceIdsToNumbers(f.content, numberOf).slice(0, FINDING_CHARS)}\n</finding>`)
        .join('\n') || '(no findings)',
    references: numbered.map((r) => `[${r.n}] ${r.title} — ${r.url}`).join('\n') || '(no sources)',
  };
}

const ARTIFACT_LINK = /\(artifact:([A-Za-z0-9._-]+)\)/g;

/** A citation the claim check flagged (partly supported) or removed (not supported). */
export interface CitationCheckRecord {
  n: number;
  sourceId: string;
  claim: string;
  verdict: 'partial' | 'unsupported';
  reason: string;
  action: 'flagged' | 'removed';
}

/** The artifacts the findings really made, by id. */
function artifactIdsOf(findings: Finding[]): Set<string> {
  return new Set(findings.flatMap((f) => [...f.content.matchAll(ARTIFACT_LINK)].map((m) => m[1]!)));
}

/**
 * A draft as code publishes it: `(artifact:id)` links the findings really made turned into API
 * paths (others into `#`), then every citation grounded against the references the reporter was
 * shown ([n] of those numbers, unknown ones removed) and every other link checked.
 */
export function groundDraft(args: { researchId: string; draft: string; findings: Finding[]; refs: Reference[] }): GroundedCitations {
  const artifactIds = artifactIdsOf(args.findings);
  const path = (id: string) => artifactPath(args.researchId, id);
  const linked = withoutSourceHeads(withoutReferenceList(withoutPromptTags(args.draft)), args.refs).replace(
    ARTIFACT_LINK,
    (_m, id: string) => (artifactIds.has(id) ? `(${path(id)})` : '(#)'),
  );
  const artifacts = new Set([...artifactIds].map(path));
  return groundCitations(linked, args.refs, (url) => url === '#' || artifacts.has(url));
}

/** The blocks the reporter's prompt wraps its inputs in: a small model copies them into its answer. */
const PROMPT_TAG =
  /<\/?(?:findings?|references|notes|background|sources?|source|result|dependencies|user_message|question|outline|transcript)(?:\s[^>]*)?>/gi;

/** The line code writes before the evidence it lists for a writer's text that cited none of its
 *  sources (src/activities/role-kit/cited.ts). */
export const LISTED_BY_CODE = 'Evidence retrieved (listed by code, as the text above cites no source):';
const LISTED_BY_CODE_LINE = new RegExp(`^[ \\t>*_-]*${LISTED_BY_CODE.replace(/[()]/g, '\\$&')}[ \\t*_]*$`, 'gim');
/** A sentence that works the label's words into itself ("Evidence retrieved (listed by code, …) supports this."). */
const LISTED_BY_CODE_SENTENCE = new RegExp(
  `[^.!?\\n]*${/\(.*\)/.exec(LISTED_BY_CODE)![0].replace(/[()]/g, '\\$&')}[^.!?\\n]*[.!?:]?[ \\t]*`,
  'gi',
);

/**
 * The draft without the prompt's own markup: the tags go, and an echoed `<references>` block with
 * them (code writes the list); the text a finding tag wrapped stays, to be grounded like the rest.
 * So does code's label before evidence it listed in a finding, which a small model copies with
 * the evidence (the evidence stays: its sentences are the finding's), and a sentence it worked
 * the label into.
 */
export function withoutPromptTags(draft: string): string {
  return draft
    .replace(LISTED_BY_CODE_LINE, '')
    .replace(LISTED_BY_CODE_SENTENCE, '')
    .replace(/<references>[\s\S]*?(?:<\/references>|(?=\n#{1,6}\s)|$)/gi, '')
    .replace(PROMPT_TAG, '')
    .replace(/\n{3,}/g, '\n\n');
}

/** The name of a reference list, in the languages reports are asked in. */
const REFERENCE_WORDS =
  '(?:references?|sources?|bibliography|works cited|citations|further reading|参考文献|参考资料|来源|出典|참고 ?문헌|quellen|literatur|références|sources et références|fuentes|referencias|fonti|riferimenti|referências|источники|литература)';
/** A heading of a reference list. */
const REFERENCE_HEADING = new RegExp(`^(#{1,6})[ \\t]*\\**[ \\t]*${REFERENCE_WORDS}[ \\t]*:?\\**[ \\t]*$`, 'i');
/** The same name on a line of its own without `#` ("References", "**Sources:**"). */
const REFERENCE_LINE = new RegExp(`^\\**[ \\t]*${REFERENCE_WORDS}[ \\t]*:?[ \\t]*\\**$`, 'i');
/** An entry of a numbered reference list: "[1] Title — …". */
const REFERENCE_ENTRY = /^\s*\[\d+\]\s/;

/**
 * The draft without a reference list of its own: code writes the report's list from the sources
 * the run retrieved. A model's list would show numbers as citations that no sentence makes, and
 * titles and addresses of its own making. The section ends at the next heading of its level or
 * above. A list under a name that is no heading ("References" on its own line) goes when its
 * entries are numbered like the report's ("[1] …"), blank lines between them included, up to the
 * first line that is not one.
 */
export function withoutReferenceList(draft: string): string {
  const lines = draft.split('\n');
  const out: string[] = [];
  let skipping = 0;
  let entries = false;
  for (const [i, line] of lines.entries()) {
    const heading = /^(#{1,6})\s/.exec(line);
    if (skipping && heading && heading[1]!.length <= skipping) skipping = 0;
    if (skipping || (entries && (REFERENCE_ENTRY.test(line) || !line.trim()))) continue;
    // The entries may follow the name after blank lines.
    const next = lines.slice(i + 1).find((l) => l.trim()) ?? '';
    entries = REFERENCE_LINE.test(line.trim()) && REFERENCE_ENTRY.test(next);
    const ref = REFERENCE_HEADING.exec(line.trim());
    if (ref) skipping = ref[1]!.length;
    else if (!entries) out.push(line);
  }
  // The blank lines around a list that went, made one.
  return out.length < lines.length
    ? out
        .join('\n')
        .replace(/\n{3,}/g, '\n\n')
        .trimEnd()
    : draft.trimEnd();
}

export interface AssembledReport {
  /** The title as published: model text, so without citations or links. */
  title: string;
  /** The report as data: what is stored, and every format is rendered from. */
  doc: ReportDoc;
  /** The same, as Markdown (reportMarkdown). */
  markdown: string;
  /** The body as published (renumbered), without title, notes, charts or references. */
  body: string;
  /** Every source of the run with its published number: the cited ones first. */
  references: Reference[];
  /** Citation numbers of the draft that named no reference. */
  removedCitations: number[];
  /** Source ids the model cited that name no source of the run. */
  removedIds: string[];
  /** Links and bare URLs the model made up (not a retrieved source, not an artifact of the run). */
  removedLinks: RemovedLink[];
  /** Citation marks in the draft, the notes and the title, resolvable or not. */
  marks: number;
  /** Of those, the ones that named nothing known: removed. */
  unresolved: number;
  /** Of those, the ones that named a source the run has only a search snippet of: removed. */
  uncited: number;
}

/**
 * Builds the stored report from a draft: citations grounded (see groundDraft) and renumbered in
 * order of first citation, every PNG chart a step produced linked once, the run's notes (in a
 * section after the findings; model text: grounded the same way; a citation of a source the body
 * does not cite is dropped), and the references. `earlier` carries what a first grounding of the same
 * draft removed (the claim check grounds before it cuts citations out).
 */
export function assembleReport(args: {
  researchId: string;
  title: string;
  draft: string;
  findings: Finding[];
  refs: Reference[];
  /** A plain string is the run's own note. */
  notes: (string | ReportNote)[];
  earlier?: GroundedCitations;
  /** The referenced sources' stored texts by id (citeRepeats). */
  stored?: Map<string, { content: string }>;
  /** How many sentences the caller already cited as repeats of the findings (citeRepeats, before
   *  its claim check, whose removals then stand); unset: they are cited here. */
  repeatsCited?: number;
}): AssembledReport {
  const now = groundDraft(args);
  const g = merge(args.earlier, now);
  const repeated =
    args.repeatsCited === undefined
      ? citeRepeats(now.markdown, args.findings, args.refs, args.stored)
      : { markdown: now.markdown, added: args.repeatsCited };
  const numbered = renumberCitations(repeated.markdown, args.refs);
  const body = numbered.markdown.trim();
  const references = numbered.sources;
  const cited = references.filter((r) => r.cited);

  const path = (id: string) => artifactPath(args.researchId, id);
  const charts = [...artifactIdsOf(args.findings)].filter((id) => id.toLowerCase().endsWith('.png') && !body.includes(path(id)));

  // Notes and the title are model text too: their citations become the body's numbers, or go.
  const extra = { marks: 0, unresolved: 0, uncited: 0, links: [] as RemovedLink[], ids: [] as string[] };
  const plain = (text: string, keepCitations: boolean) => {
    const n = groundCitations(text, args.refs);
    extra.marks += n.marks;
    extra.unresolved += n.unresolved;
    extra.uncited += n.uncited;
    extra.links.push(...n.removedLinks);
    extra.ids.push(...n.removedIds);
    return n.markdown
      .replace(/\[(\d+)\]/g, (_m, raw: string) => {
        const to = numbered.numberOf.get(Number(raw));
        return keepCitations && to !== undefined && to <= cited.length ? `[${to}]` : '';
      })
      .replace(/[ \t]+([.,;:!?])/g, '$1')
      .replace(/\s+/g, ' ')
      .trim();
  };
  const title = plain(args.title, false) || args.title.replace(/\s+/g, ' ').trim();
  const notes: ReportNote[] = args.notes
    .map((n) => (typeof n === 'string' ? { text: n, kind: 'run' as const } : n))
    .map((n) => ({ ...n, text: plain(n.text, true) }))
    .filter((n) => n.text);
  const links = [...g.removedLinks, ...extra.links];
  const ids = [...new Set([...g.removedIds, ...extra.ids])];
  const grounding = (text: string) => notes.push({ text, kind: 'grounding' });
  if (links.length) grounding(`Removed ${plural(links.length, 'link')} to addresses this run never retrieved.`);
  // The made-up ids themselves are not repeated: they would be made-up text in the report.
  if (ids.length) grounding(`Removed the citations of ${plural(ids.length, 'source id')} naming no source of this run.`);
  if (repeated.added)
    grounding(
      `Code cited ${plural(repeated.added, 'sentence')} that repeat${repeated.added === 1 ? 's' : ''} the words or figures of a finding or of a page the run read to that source.`,
    );
  const snippets = args.refs.filter((r) => r.snippet).length;
  if (snippets) {
    const them = snippets === 1 ? 'it' : 'them';
    grounding(
      `The run has only a search result snippet of ${plural(snippets, 'source')} the findings drew on (${snippets === 1 ? 'its page was' : 'their pages were'} not read): the report does not cite ${them}, and "Also consulted" lists ${them}, labelled.`,
    );
  }
  if (references.length && !cited.length) {
    grounding(
      `The report cites none of the ${plural(references.length, 'source')} the research retrieved; they are listed under "Also consulted".`,
    );
  }
  const doc: ReportDoc = {
    title,
    notes,
    sections: sectionsOf(body),
    charts: charts.map((id) => ({ artifactId: id, path: path(id) })),
    references,
  };
  return {
    title,
    doc,
    markdown: reportMarkdown(doc),
    body,
    references,
    removedCitations: g.removedNumbers,
    removedIds: ids,
    removedLinks: links,
    marks: g.marks + extra.marks,
    unresolved: g.unresolved + extra.unresolved,
    uncited: g.uncited + extra.uncited,
  };
}

/** Each sentence of a grounded draft that cites nothing and repeats a finding's cited sentence
 *  word for word, or states the figures of one source, given that source where the report may cite
 *  it (shared/repeated-citations.ts); `stored`, the sources' texts, for figures and quotes of them. */
export function citeRepeats(
  draft: string,
  findings: Finding[],
  refs: Reference[],
  stored: Map<string, { content: string }> = new Map(),
): { markdown: string; added: number } {
  const texts = new Map([...stored].map(([id, s]) => [id, s.content]));
  return citeRepeatedSentences(draft, findings, new Map(citable(refs).map((r) => [r.sourceId, r.n])), texts);
}

/** What two groundings of one draft removed together; marks are the first one's (it saw them all). */
function merge(first: GroundedCitations | undefined, second: GroundedCitations): GroundedCitations {
  if (!first) return second;
  return {
    markdown: second.markdown,
    marks: first.marks + second.unresolved,
    unresolved: first.unresolved + second.unresolved,
    uncited: first.uncited + second.uncited,
    removedNumbers: [...new Set([...first.removedNumbers, ...second.removedNumbers])].sort((a, b) => a - b),
    removedIds: [...new Set([...first.removedIds, ...second.removedIds])],
    removedLinks: [...first.removedLinks, ...second.removedLinks],
  };
}

/** Characters of prose in a Markdown body: no markup, no citations, no link targets. */
export function proseChars(markdown: string): number {
  return markdown
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[\d+\]/g, '')
    .replace(/^\s*(?:#+|[-*+]|\d+[.)]|>|\|?[-:| ]+\|?$)/gm, '')
    .replace(/[*_`|]/g, '')
    .replace(/\s+/g, ' ')
    .trim().length;
}

/** Headings of a body, bold lines standing alone ("**Key points**") included. */
const HEADING_LINE = /^(?:#{1,4}\s+\S|\*\*[^*\n]+\*\*:?\s*$)/gm;

/**
 * Why a grounded draft is not a report worth the name, or undefined: too short for the findings
 * it was written from, uncited although the findings cite sources, or (standard length, findings
 * long enough to have parts) without sections.
 */
export function reportProblem(args: {
  draft: GroundedCitations;
  findingsChars: number;
  references: number;
  length: 'brief' | 'standard' | 'section';
}): string | undefined {
  const chars = proseChars(args.draft.markdown);
  // A short report is fine for short findings; below this, any length is.
  const share = args.findingsChars < 1_000 ? 0 : args.length === 'brief' ? 0.06 : 0.12;
  const cap = args.length === 'standard' ? 1_500 : 600;
  const least = Math.min(cap, Math.round(args.findingsChars * share));
  if (chars < least) {
    return `it has ${chars} characters of text, too short for findings of ${args.findingsChars} characters (at least ${least} expected)`;
  }
  if (args.references > 0 && args.draft.marks - args.draft.unresolved - args.draft.uncited === 0) {
    return `it cites none of the ${args.references} numbered references, although the findings cite them`;
  }
  const repeated = repeatedLine(args.draft.markdown);
  if (repeated) return `it repeats itself: the line "${repeated.line.slice(0, 80)}" comes ${repeated.times} times`;
  const headings = args.draft.markdown.match(HEADING_LINE)?.length ?? 0;
  if (args.length === 'standard' && args.findingsChars >= 2_500 && headings < 2) {
    return `it has ${headings === 0 ? 'no' : 'only one'} section heading: a report of this length needs sections (## headings)`;
  }
  return undefined;
}

/** A line of prose (40 characters or more) that a draft has three times or more: a model that went
 *  round in a loop (small models do, until their output limit). */
function repeatedLine(markdown: string): { line: string; times: number } | undefined {
  const seen = new Map<string, number>();
  for (const raw of markdown.split('\n')) {
    const line = raw.trim().replace(/\s+/g, ' ');
    if (line.length < 40 || /^\|/.test(line)) continue;
    const times = (seen.get(line) ?? 0) + 1;
    if (times >= 3) return { line, times };
    seen.set(line, times);
  }
  return undefined;
}

/** Characters of the findings a report is written from (earlier reports of the session not counted). */
export function findingsChars(findings: Finding[]): number {
  return findings.filter((f) => f.key !== 'memory').reduce((sum, f) => sum + Math.min(f.content.length, FINDING_CHARS), 0);
}

/** A heading for a finding: the background, or its step's title as the plan gave it (findings
 *  stored before they kept it: the step's summary, its first sentence, when that is short). */
export function findingHeading(f: Finding): string {
  if (f.key === 'background') return 'Background';
  if (f.key === 'memory') return 'Earlier in this conversation';
  const title = typeof f.meta?.stepTitle === 'string' ? f.meta.stepTitle.replace(/\s+/g, ' ').trim() : '';
  if (title && title.length <= 120) return title;
  const stepId = typeof f.meta?.stepId === 'string' ? f.meta.stepId : (/^step\/([^/]+)/.exec(f.key)?.[1] ?? f.key);
  const first = (f.summary ?? '')
    .split(/(?<=[.!?])\s/)[0]!
    .replace(/\s+/g, ' ')
    .trim();
  return first && first.length <= 120 ? first.replace(/[.:]$/, '') : `Research step ${stepId}`;
}

/** A finding's text as part of a report: its headings below the section's, cut at FINDING_CHARS. */
export function findingText(f: Finding): string {
  const text = f.content.length > FINDING_CHARS ? `${f.content.slice(0, FINDING_CHARS).trimEnd()} …` : f.content;
  return text.replace(/^(#{1,6})(?=\s)/gm, (h) => '#'.repeat(Math.min(6, Math.max(3, h.length + 1)))).trim();
}

/**
 * The report code writes when the model gives none worth the name: the question as the title, a
 * short overview saying what this is and why, then one section per finding (the background, then
 * each step) with its own text and citations. The draft cites source ids; assembly numbers them.
 */
export function reportFromFindings(args: { question: string; findings: Finding[]; refs: Reference[]; reason: string }): {
  title: string;
  draft: string;
} {
  const title = args.question.replace(/\s+/g, ' ').trim().slice(0, 200) || 'Research report';
  const parts = args.findings.filter((f) => f.key !== 'memory' && f.content.trim());
  const steps = parts.filter((f) => f.key !== 'background').length;
  const cited = new Set(parts.flatMap((f) => f.sourceIds)).size;
  const overview = [
    `This report was put together by code from the research findings, because the model did not write a usable report (${args.reason}).`,
    parts.length
      ? `It gives ${parts.some((f) => f.key === 'background') ? 'the background search and ' : ''}the findings of ${plural(steps, 'research step')} as the research team wrote them, citing ${plural(cited, 'source')}; it has no analysis beyond them, and its summary repeats their first cited sentences.`
      : 'The research produced no findings to report.',
  ].join(' ');
  const sections = parts.map((f) => `## ${findingHeading(f)}\n\n${findingText(f)}`);
  return { title, draft: [`## Overview\n\n${overview}`, ...sections].join('\n\n') };
}

/**
 * A draft that goes on to repeat its own prompt, as small models do once they run out of report:
 * the prompt's data blocks (`<findings>`, `<finding key=…>`, a block's label as a heading, "User
 * message" for `user_message`) or its date line. The draft is kept up to where that starts (a
 * heading that introduces it included); `cut` says whether anything was left out.
 */
export function cutPromptEcho(markdown: string, blockLabels: readonly string[]): { markdown: string; cut: boolean } {
  const labels = [...new Set([...blockLabels, 'finding', 'source'])];
  const tag = new RegExp(`^\\s*</?(?:${labels.join('|')})\\b`, 'i');
  const named = labels.filter((l) => l.includes('_')).map((l) => l.replace(/_/g, ' '));
  const heading = new RegExp(`^#{1,6}\\s*(?:${[...named, 'current date(?: and time)?'].join('|')})\\s*:?\\s*$`, 'i');
  const lines = markdown.split('\n');
  const at = lines.findIndex((l) => tag.test(l) || heading.test(l.trim()) || /^\s*current date(?: and time)?:/i.test(l));
  if (at < 0) return { markdown, cut: false };
  let from = at;
  while (from > 0 && !lines[from - 1]!.trim()) from--;
  if (from > 0 && /^#{1,6}\s/.test(lines[from - 1]!.trim()) && !heading.test(lines[from - 1]!.trim())) from--;
  return { markdown: lines.slice(0, from).join('\n').trimEnd(), cut: true };
}

const squeeze = (s: string) =>
  s
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/\s+/g, ' ')
    .replace(/[\s.:;,]+$/, '')
    .trim();

/**
 * Headings as a reader expects them from a model that copied its prompt's layout: a heading that
 * goes on with the prompt's own words after a colon ("## Key points: 3 to 6 bullets, each …")
 * keeps its name, a trailing colon goes, and a heading left with nothing under it before the next
 * heading of its level or above is dropped; so is a last line cut off inside its Markdown (an
 * unclosed bold or link). `promptText`: the prompt the draft was written from.
 */
export function tidyHeadings(markdown: string, promptText: string): { markdown: string; changed: boolean } {
  const prompt = squeeze(promptText);
  const all = markdown.split('\n');
  // A last line cut off mid-Markdown ("- **Velmar", an open link) ends the draft as no reader would.
  const broken = (l: string) => (l.match(/\*\*/g)?.length ?? 0) % 2 === 1 || /\[[^\]]*$|\]\([^)]*$/.test(l);
  const ends = (l: string) => !l.trim() || broken(l) || /^#{1,6}\s/.test(l.trim());
  while (all.length && ends(all.at(-1)!)) all.pop();
  const lines = all.map((line) => {
    const m = /^(#{1,6})\s+([^:\n]{1,80}?)\s*:\s*(.*)$/.exec(line.trim());
    if (!m) return line;
    const rest = squeeze(m[3]!);
    return !rest || (rest.length >= 12 && prompt.includes(rest)) ? `${m[1]} ${m[2]}` : line;
  });
  const level = (l: string) => /^(#{1,6})\s/.exec(l.trim())?.[1]!.length;
  const kept = lines.filter((l, i) => {
    const own = level(l);
    if (own === undefined) return true;
    const next = lines.slice(i + 1).find((x) => x.trim());
    const nextLevel = next === undefined ? 0 : level(next);
    return !(nextLevel !== undefined && nextLevel <= own);
  });
  const out = kept
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+/, '');
  return { markdown: out, changed: out !== markdown };
}
