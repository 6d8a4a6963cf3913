// What the PDF, Word and slide exports read alike from a report: its text as marked's tokens (the
// report's Markdown without the reference lists, which come from the data), its references as
// entries to list, a text cut at its citations of cited references, the label of a collapsible
// part (`<details><summary>…`), and entities marked keeps.
import { marked, type Token } from 'marked';
import { linkDestination, markdownText } from '../../shared/markdown-link';
import { referenceLists, reportMarkdown, type ReportDoc } from '../../shared/report-doc';
import { SNIPPET_LABEL } from '../../shared/source-kinds';

/** The report's title (as plain text, its markup characters escaped), notes, body and charts as
 *  Markdown, without the reference lists. */
export function exportMarkdown(doc: ReportDoc): string {
  return reportMarkdown({ ...doc, title: markdownText(doc.title) }, { references: false });
}

/** The report's title, notes, body and charts as marked's tokens (no reference list among them). */
export function reportTokens(doc: ReportDoc): Token[] {
  return marked.lexer(exportMarkdown(doc), { gfm: true });
}

/** One entry of a reference list as an export shows it. */
export interface ReferenceEntry {
  n: number;
  /** The source's title as given (whitespace collapsed), its address when it has none. */
  title: string;
  /** The address as a link destination (http(s), or a path on this service); none for anything else. */
  href?: string | undefined;
}

/** The cited references (numbered, each the target of its citations), the ones only consulted, and
 *  the numbers a citation `[n]` may link to. */
export function referenceEntries(doc: ReportDoc): { cited: ReferenceEntry[]; consulted: ReferenceEntry[]; citable: ReadonlySet<number> } {
  const { cited, consulted } = referenceLists(doc);
  const entry = (r: { n: number; title: string; url: string; snippet?: boolean | undefined }): ReferenceEntry => {
    const title = r.title.replace(/\s+/g, ' ').trim() || r.url.trim();
    return { n: r.n, title: r.snippet ? `${title} (${SNIPPET_LABEL})` : title, href: linkDestination(r.url) };
  };
  return { cited: cited.map(entry), consulted: consulted.map(entry), citable: new Set(cited.map((r) => r.n)) };
}

/** A text's pieces: plain text, and each citation `[n]` of a cited reference. */
export function citationPieces(text: string, citable: ReadonlySet<number>): ({ text: string } | { n: number })[] {
  if (!citable.size || !/\[\d/.test(text)) return [{ text }];
  const out: ({ text: string } | { n: number })[] = [];
  let last = 0;
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    const n = Number(m[1]);
    if (!citable.has(n)) continue;
    if (m.index > last) out.push({ text: text.slice(last, m.index) });
    out.push({ n });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last) });
  return out;
}

/**
 * The label of a collapsible part, from the HTML block that opens it (`<details><summary>Program
 * (ok)</summary>`, as a coder step writes it): the summary's text, its tags gone. Undefined for any
 * other HTML, which the PDF and Word exports drop.
 */
export function summaryLabel(raw: string): string | undefined {
  const m = /<summary\b[^>]*>([\s\S]*?)<\/summary\s*>/i.exec(raw);
  const text = m
    ? decode(m[1]!.replace(/<[^>]*>/g, ''))
        .replace(/\s+/g, ' ')
        .trim()
    : '';
  return text || undefined;
}

/** A code block's text with each tab widened to the next multiple of 4 columns (PDF and Word fonts
 *  draw a tab as nothing or as one space, which flattens indented code). */
export function expandTabs(code: string): string {
  return code
    .split('\n')
    .map((line) => {
      let out = '';
      for (const c of line) out += c === '\t' ? ' '.repeat(4 - (out.length % 4)) : c;
      return out;
    })
    .join('\n');
}

/** marked keeps HTML entities in token text. */
export function decode(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}
