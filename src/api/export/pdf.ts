// A report as PDF, drawn by pdfmake (pure JS, fonts shipped with the package: nothing is
// downloaded at install or run time). The report's Markdown (title, notes, body, charts) is read
// with marked's lexer and laid out as pdfmake content: headings, paragraphs with bold, italics, code
// and links, lists, tables, quotes, code blocks with their indentation (a collapsible part as its
// label and its code), the run's charts (PNG/JPEG), citations linking to the numbered references,
// which are drawn from the report's data, each with its address in full.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Token, Tokens } from 'marked';
import type pdfmakeType from 'pdfmake';
import type { ReportDoc } from '../../shared/report-doc';
import type { ArtifactBytes, ExportableReport } from './html';
import { RASTER } from './images';
import { citationPieces, decode, expandTabs, referenceEntries, type ReferenceEntry, reportTokens, summaryLabel } from './tokens';

const require = createRequire(import.meta.url);
const FONT_DIR = path.join(path.dirname(require.resolve('pdfmake/package.json')), 'fonts', 'Roboto');
let loaded: typeof pdfmakeType | undefined;
/** pdfmake, loaded at the first export (it holds 13 MB). */
function pdfmake(): typeof pdfmakeType {
  if (loaded) return loaded;
  const p = require('pdfmake') as typeof pdfmakeType;
  p.setFonts({
    Roboto: {
      normal: path.join(FONT_DIR, 'Roboto-Regular.ttf'),
      bold: path.join(FONT_DIR, 'Roboto-Medium.ttf'),
      italics: path.join(FONT_DIR, 'Roboto-Italic.ttf'),
      bolditalics: path.join(FONT_DIR, 'Roboto-MediumItalic.ttf'),
    },
    // One of the PDF standard fonts (PDFKit has their metrics; a reader has the font): code's.
    [MONO]: { normal: 'Courier', bold: 'Courier-Bold', italics: 'Courier-Oblique', bolditalics: 'Courier-BoldOblique' },
  });
  // The document holds only what the report gives it: no URL is fetched, no file but the fonts read.
  p.setUrlAccessPolicy(() => false);
  p.setLocalAccessPolicy((f) => STANDARD_FONTS.has(f) || path.resolve(f).startsWith(FONT_DIR));
  return (loaded = p);
}

const MONO = 'Courier';
const STANDARD_FONTS = new Set(['Courier', 'Courier-Bold', 'Courier-Oblique', 'Courier-BoldOblique']);
/** What a standard font can draw (WinAnsi); code holding anything else is set in Roboto. */
const WIN_ANSI = /^[\n\x20-\x7e\xa0-\xff€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ]*$/;
/** Code's font: monospace when its characters allow. */
const codeFont = (text: string) => (WIN_ANSI.test(text) ? { font: MONO } : {});

type Inline = string | Record<string, unknown>;
type Style = Record<string, unknown>;
type DocumentDefinition = Parameters<typeof pdfmakeType.createPdf>[0];
const LINK_COLOR = '#1d4ed8';

/** What laying out one report needs besides its tokens. */
interface Layout {
  artifacts: ArtifactBytes;
  /** The numbers of the cited references: a citation [n] of one links to its entry. */
  citable: ReadonlySet<number>;
}

export async function reportPdf(report: ExportableReport, artifacts: ArtifactBytes): Promise<Buffer> {
  return pdfmake()
    .createPdf(documentDefinition(report, reportContent(report.doc, artifacts)))
    .getBuffer();
}

/** The report's blocks as pdfmake lays them out: its text, then its reference lists. */
export function reportContent(doc: ReportDoc, artifacts: ArtifactBytes): unknown[] {
  const { cited, consulted, citable } = referenceEntries(doc);
  return [...blocks(reportTokens(doc), { artifacts, citable }), ...referenceBlocks(cited, consulted)];
}

/** A heading or a label: moved to the next page when nothing after it is laid out on its own. */
const KEEP_WITH_NEXT = { tocItem: false, headlineLevel: 1 };

/** A short text (a reference and its address) moved to the next page rather than cut between two.
 *  (pdfmake's `unbreakable` does that too, but leaves the nodes' recorded pages as they were before
 *  the move, which misleads KEEP_WITH_NEXT.) */
const KEEP_TOGETHER = { headlineLevel: 2 };

/** A laid out node as pdfmake's page break hook sees it. */
interface LaidOut {
  headlineLevel?: number;
  style?: unknown;
  pageNumbers: number[];
}
type PageBreakBefore = (node: LaidOut, around: { getFollowingNodesOnPage(): LaidOut[] }) => boolean;

/** What stays on a page after a heading: drawn content, but not the page's footer, nor a
 *  KEEP_TOGETHER text that runs over to the next page (it is moved there whole). */
const staysAfter = (n: LaidOut) =>
  n.style !== 'footer' &&
  ['text', 'image', 'canvas', 'svg', 'qr'].some((k) => k in n) &&
  !(n.headlineLevel === 2 && n.pageNumbers.length > 1);

/** The page, the styles and the footer around the report's content. */
function documentDefinition(report: ExportableReport, content: unknown[]): DocumentDefinition {
  const definition: DocumentDefinition & { pageBreakBefore: PageBreakBefore } = {
    pageBreakBefore: (node, around) =>
      node.headlineLevel === 1
        ? !around.getFollowingNodesOnPage().some(staysAfter)
        : node.headlineLevel === 2 && node.pageNumbers.length > 1,
    info: { title: report.title, subject: 'deep-research report' },
    language: report.locale ?? 'en',
    pageMargins: [48, 56, 48, 56],
    defaultStyle: { font: 'Roboto', fontSize: 10.5, lineHeight: 1.25 },
    styles: {
      h1: { fontSize: 20, bold: true, margin: [0, 0, 0, 12] },
      h2: { fontSize: 14, bold: true, margin: [0, 14, 0, 6] },
      h3: { fontSize: 12, bold: true, margin: [0, 10, 0, 4] },
      code: { fontSize: 9, background: '#f1f3f5' },
      codeBlock: { fontSize: 8.5, lineHeight: 1.3 },
      footer: { alignment: 'center', fontSize: 8, color: '#888888' },
    },
    footer: (page: number, pages: number) => ({ text: `${page} / ${pages}`, style: 'footer' }),
    content,
  };
  return definition;
}

function inline(ts: Token[] | undefined, layout: Layout, style: Style = {}): Inline[] {
  return (ts ?? []).flatMap((t) => inlineToken(t, layout, style));
}

function inlineToken(t: Token, layout: Layout, style: Style): Inline[] {
  switch (t.type) {
    case 'strong':
      return inline((t as Tokens.Strong).tokens, layout, { ...style, bold: true });
    case 'em':
      return inline((t as Tokens.Em).tokens, layout, { ...style, italics: true });
    case 'codespan': {
      const text = decode((t as Tokens.Codespan).text);
      return [{ text, ...style, ...codeFont(text), style: 'code' }];
    }
    case 'link': {
      const l = t as Tokens.Link;
      return inline(l.tokens, layout, { ...style, link: l.href, color: LINK_COLOR });
    }
    case 'image':
      return [{ text: (t as Tokens.Image).text, ...style, italics: true }];
    case 'br':
      return ['\n'];
    case 'html':
      return []; // markup in a model's text is not drawn (the HTML export drops it too)
    case 'text':
    case 'escape': {
      const tt = t as Tokens.Text;
      if (tt.tokens?.length) return inline(tt.tokens, layout, style);
      return cite(decode(tt.text), style, layout.citable);
    }
    default:
      return cite(decode((t as { raw: string }).raw), style, layout.citable);
  }
}

/** Blocks of the report, of a quote or of a list item. */
function blocks(ts: Token[], layout: Layout): unknown[] {
  return ts.flatMap((t) => block(t, layout));
}

function block(t: Token, layout: Layout): unknown[] {
  switch (t.type) {
    case 'heading': {
      const h = t as Tokens.Heading;
      return [{ text: inline(h.tokens, layout), style: `h${Math.min(h.depth, 3)}`, ...(h.depth === 1 ? {} : KEEP_WITH_NEXT) }];
    }
    case 'paragraph':
      return paragraph(t as Tokens.Paragraph, layout);
    case 'list':
      return [list(t as Tokens.List, layout)];
    case 'table':
      return [table(t as Tokens.Table, layout)];
    case 'blockquote':
      return [quote(t as Tokens.Blockquote, layout)];
    case 'code':
      return [codeBlock((t as Tokens.Code).text)];
    case 'html': {
      // Markup in a model's text is not drawn; a collapsible part (a coder step's program) keeps
      // its summary as a label over the code that follows.
      const label = summaryLabel((t as Tokens.HTML).raw);
      return label ? [{ text: label, bold: true, margin: [0, 4, 0, 2], ...KEEP_WITH_NEXT }] : [];
    }
    case 'hr':
      return [{ canvas: [{ type: 'line', x1: 0, y1: 0, x2: 515, y2: 0, lineColor: '#dddddd' }], margin: [0, 6, 0, 6] }];
    case 'space':
      return [];
    default:
      return [{ text: decode((t as { raw: string }).raw), margin: [0, 0, 0, 8] }];
  }
}

/** A paragraph: its charts (raster artifacts of the run) drawn first, then its text. */
function paragraph(p: Tokens.Paragraph, layout: Layout): unknown[] {
  const { artifacts } = layout;
  const images = (p.tokens ?? []).filter((x) => x.type === 'image') as Tokens.Image[];
  const pictures = images.flatMap((img) => {
    const a = artifacts.get(img.href);
    return a && RASTER.test(a.contentType)
      ? [{ image: `data:${a.contentType};base64,${a.bytes.toString('base64')}`, fit: [460, 300], margin: [0, 6, 0, 6] }]
      : [];
  });
  const rest = (p.tokens ?? []).filter((x) => x.type !== 'image' || !artifacts.has((x as Tokens.Image).href));
  const text = rest.length ? [{ text: inline(rest, layout), margin: [0, 0, 0, 8] }] : [];
  return [...pictures, ...text];
}

/** A code block in a tinted box, in monospace, each line's leading spaces kept (Python's
 *  indentation is its structure). */
function codeBlock(code: string) {
  const text = expandTabs(code);
  return {
    table: { widths: ['*'], body: [[{ text, style: 'codeBlock', ...codeFont(text), preserveLeadingSpaces: true, fillColor: '#f1f3f5' }]] },
    layout: {
      hLineWidth: () => 0,
      vLineWidth: () => 0,
      paddingLeft: () => 6,
      paddingRight: () => 6,
      paddingTop: () => 4,
      paddingBottom: () => 4,
    },
    margin: [0, 2, 0, 10],
  };
}

function list(l: Tokens.List, layout: Layout) {
  const items = l.items.map((it) => ({
    stack: it.tokens.flatMap((x) =>
      x.type === 'text' ? [{ text: inline((x as Tokens.Text).tokens ?? [x], layout) }] : blocks([x], layout),
    ),
  }));
  return { [l.ordered ? 'ol' : 'ul']: items, margin: [0, 0, 0, 8] };
}

/** "References" (each entry the destination ref-n of its citations) and "Also consulted", from the
 *  report's data; each entry its title, linked, and its address in full, as on paper it needs it. */
function referenceBlocks(cited: ReferenceEntry[], consulted: ReferenceEntry[]): unknown[] {
  // One text, not cut between two pages (its title on one, its address on the next).
  const entry = (r: ReferenceEntry) => ({
    ...KEEP_TOGETHER,
    text: r.href
      ? [
          { text: r.title, link: r.href, color: LINK_COLOR },
          { text: `\n${r.href}`, link: r.href, color: LINK_COLOR, fontSize: 8.5 },
        ]
      : r.title,
  });
  return [
    ...(cited.length
      ? [
          { text: 'References', style: 'h2', ...KEEP_WITH_NEXT },
          { ol: cited.map((r) => ({ ...entry(r), id: `ref-${r.n}`, counter: r.n })), margin: [0, 0, 0, 8] },
        ]
      : []),
    ...(consulted.length
      ? [
          { text: 'Also consulted', style: 'h2', ...KEEP_WITH_NEXT },
          { ul: consulted.map(entry), margin: [0, 0, 0, 8] },
        ]
      : []),
  ];
}

function table(tb: Tokens.Table, layout: Layout) {
  const header = tb.header.map((c) => ({ text: inline(c.tokens, layout), bold: true, fillColor: '#f1f3f5' }));
  const rows = tb.rows.map((r) => r.map((c) => ({ text: inline(c.tokens, layout) })));
  return {
    table: { headerRows: 1, widths: header.map(() => '*'), body: [header, ...rows] },
    layout: { hLineColor: () => '#bbbbbb', vLineColor: () => '#bbbbbb' },
    margin: [0, 4, 0, 10],
    fontSize: 9,
  };
}

/** A quote: its blocks in a tinted cell with a bar on the left. */
function quote(q: Tokens.Blockquote, layout: Layout) {
  return {
    table: {
      widths: ['*'],
      body: [[{ stack: blocks(q.tokens, layout), fillColor: '#f8fafc', color: '#334155' }]],
    },
    layout: { hLineWidth: () => 0, vLineWidth: (n: number) => (n === 0 ? 3 : 0), vLineColor: () => '#c7d2fe' },
    margin: [0, 4, 0, 10],
  };
}

/** Text with each citation [n] of a cited reference linked to it. */
function cite(text: string, style: Style, citable: ReadonlySet<number>): Inline[] {
  return citationPieces(text, citable).map((p) =>
    'n' in p ? { text: `[${p.n}]`, ...style, linkToDestination: `ref-${p.n}`, color: LINK_COLOR } : { text: p.text, ...style },
  );
}
