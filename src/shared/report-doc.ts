// The report as data: what the reporter's result is stored as, and what every format is rendered
// from (the stored Markdown, the JSON export, HTML, PDF, Word, slides, the user's memory, the eval
// command). Title, notes (with what kind each is: the run's, a fallback taken, what grounding
// removed), sections (the body, cut at its `##` headings), the charts linked after the body, and
// the references (the cited ones numbered 1..k, then the ones consulted). Nothing reads the
// references back out of the Markdown: they are here.
import { z } from 'zod';
import { markdownLink } from './markdown-link';
import { SNIPPET_LABEL } from './source-kinds';

/** One entry of a report's reference list, as the report is stored and its JSON export lists it. */
export const Reference = z.object({
  n: z.number().int(),
  sourceId: z.string(),
  url: z.string(),
  title: z.string(),
  /** In a stored report: true for the sources the text cites (numbered 1..k under References),
   *  false for those listed under "Also consulted" (numbered after them). */
  cited: z.boolean().optional(),
  /** True when the run has only a web search engine's snippet of it: its page was not read. */
  snippet: z.boolean().optional(),
});
export type Reference = z.infer<typeof Reference>;

export const ReportNote = z.object({
  text: z.string(),
  /** `run`: the workflow's own notes; `fallback`: a role's answer was replaced by code's;
   *  `grounding`: what code removed from the model's text (links, made-up source ids). */
  kind: z.enum(['run', 'fallback', 'grounding']),
});
export type ReportNote = z.infer<typeof ReportNote>;

export const ReportSection = z.object({
  /** The `##` heading's text; empty for the text before the first heading. */
  heading: z.string(),
  /** The section's Markdown, its heading not included; citations are `[n]` of the references. */
  markdown: z.string(),
});
export type ReportSection = z.infer<typeof ReportSection>;

export const ReportChart = z.object({ artifactId: z.string(), path: z.string() });
export type ReportChart = z.infer<typeof ReportChart>;

export const ReportDoc = z.object({
  title: z.string(),
  notes: z.array(ReportNote),
  sections: z.array(ReportSection),
  /** Charts (PNG files of the run's coder steps) the body does not show itself, listed after it. */
  charts: z.array(ReportChart),
  references: z.array(Reference),
});
export type ReportDoc = z.infer<typeof ReportDoc>;

/** The sections of a Markdown body: cut before each `##` heading outside a code fence. */
export function sectionsOf(body: string): ReportSection[] {
  const out: ReportSection[] = [{ heading: '', markdown: '' }];
  let fence: string | undefined;
  const lines: string[][] = [[]];
  for (const line of body.split('\n')) {
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (f && (!fence || (f[0] === fence[0] && f.length >= fence.length))) fence = fence ? undefined : f;
    const heading = !fence && /^##[ \t]+(.*?)[ \t#]*$/.exec(line);
    if (heading) {
      out.push({ heading: heading[1]!.trim(), markdown: '' });
      lines.push([]);
    } else lines.at(-1)!.push(line);
  }
  out.forEach((s, i) => (s.markdown = lines[i]!.join('\n').trim()));
  return out.filter((s, i) => i > 0 || s.markdown);
}

/** The body's Markdown: its sections with their headings. */
export function bodyMarkdown(doc: Pick<ReportDoc, 'sections'>): string {
  return doc.sections.map((s) => (s.heading ? `## ${s.heading}${s.markdown ? `\n\n${s.markdown}` : ''}` : s.markdown)).join('\n\n');
}

/** The cited references (numbered 1..k) and the consulted ones. */
export function referenceLists(doc: Pick<ReportDoc, 'references'>): { cited: Reference[]; consulted: Reference[] } {
  return { cited: doc.references.filter((r) => r.cited), consulted: doc.references.filter((r) => !r.cited) };
}

export interface MarkdownOptions {
  /** Leave the reference lists out (the exports draw them from the data). */
  references?: boolean;
  /** Prefix for the run's own links (`/v1/…`): an absolute origin, for Markdown read away from the API. */
  base?: string;
}

/** The heading of the section that keeps the run's own notes (fallbacks taken, corrections, what
 *  grounding removed), after the findings: the report's audience reads the findings first. */
export const NOTES_HEADING = 'Notes on this run';

/**
 * The report as Markdown: the title, the body, the charts the body does not show, the run's notes
 * in a section of their own, the references and the sources consulted.
 */
export function reportMarkdown(doc: ReportDoc, opts: MarkdownOptions = {}): string {
  const { cited, consulted } = referenceLists(doc);
  const notes = doc.notes.map((n) => n.text);
  const noteBlock = notes.length ? `\n\n## ${NOTES_HEADING}\n\n${notes.map((n) => `> ${n}`).join('\n>\n')}` : '';
  const chartMd = doc.charts.length ? `\n\n## Charts\n\n${doc.charts.map((c) => `![${c.artifactId}](${c.path})`).join('\n\n')}` : '';
  // A source's URL and title come from the web: escaped, each entry is one link and plain text.
  const entry = (x: Reference) => `${markdownLink(x.title, x.url)}${x.snippet ? ` (${SNIPPET_LABEL})` : ''}`;
  const refMd =
    opts.references === false
      ? ''
      : (cited.length ? `\n\n## References\n\n${cited.map((x) => `${x.n}. ${entry(x)}`).join('\n')}\n` : '') +
        (consulted.length ? `\n${cited.length ? '' : '\n'}## Also consulted\n\n${consulted.map((x) => `- ${entry(x)}`).join('\n')}\n` : '');
  const markdown = `# ${doc.title}\n\n${bodyMarkdown(doc)}${chartMd}${noteBlock}${refMd}`;
  return opts.base ? absoluteLinks(markdown, opts.base) : markdown;
}

/** The run's own links (`](/v1/…`) made absolute with `base` (an origin such as `https://host`). */
export function absoluteLinks(markdown: string, base: string): string {
  const origin = base.replace(/\/+$/, '');
  return markdown.replace(/\]\((<?)\/v1\//g, (_m, angle: string) => `](${angle}${origin}/v1/`);
}

/**
 * A report stored before reports were kept as data: its Markdown as one section (its own reference
 * list stays in that text, as written then), nothing else known.
 */
export function legacyDoc(title: string, markdown: string): ReportDoc {
  const body = markdown.replace(/^# [^\n]*\n+/, '');
  return { title, notes: [], sections: [{ heading: '', markdown: body.trim() }], charts: [], references: [] };
}
