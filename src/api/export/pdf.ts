// A report as PDF, drawn by pdfmake (pure JS, fonts shipped with the package: nothing is
// downloaded at install or run time). The Markdown is read with marked's lexer and laid out as
// pdfmake content: headings, paragraphs with bold, italics, code and links, lists, tables,
// quotes, the run's charts (PNG/JPEG), citations linking to the numbered references.
import { createRequire } from 'node:module';
import path from 'node:path';
import { marked, type Token, type Tokens } from 'marked';
import type pdfmakeType from 'pdfmake';
import type { ArtifactBytes, ExportableReport } from './html';
import { RASTER } from './images';
import { citationPieces, decode, findLink, referenceListAt } from './tokens';

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
  });
  // The document holds only what the report gives it: no URL is fetched, no file but the fonts read.
  p.setUrlAccessPolicy(() => false);
  p.setLocalAccessPolicy((f) => path.resolve(f).startsWith(FONT_DIR));
  return (loaded = p);
}

type Inline = string | Record<string, unknown>;
type Style = Record<string, unknown>;
type DocumentDefinition = Parameters<typeof pdfmakeType.createPdf>[0];
const LINK_COLOR = '#1d4ed8';

/** What laying out one report needs besides its tokens. */
interface Layout {
  artifacts: ArtifactBytes;
  /** The index of the reference list among the report's tokens, -1 when it has none. */
  refsAt: number;
  refCount: number;
}

export async function reportPdf(report: ExportableReport, artifacts: ArtifactBytes): Promise<Buffer> {
  return pdfmake()
    .createPdf(documentDefinition(report, reportContent(report.markdown, artifacts)))
    .getBuffer();
}

/** The report's blocks as pdfmake lays them out. */
export function reportContent(markdown: string, artifacts: ArtifactBytes): unknown[] {
  const tokens = marked.lexer(markdown, { gfm: true });
  const refsAt = referenceListAt(tokens);
  const refCount = refsAt >= 0 ? (tokens[refsAt] as Tokens.List).items.length : 0;
  return blocks(tokens, { artifacts, refsAt, refCount }, true);
}

/** The page, the styles and the footer around the report's content. */
function documentDefinition(report: ExportableReport, content: unknown[]): DocumentDefinition {
  return {
    info: { title: report.title, subject: 'deep-research report' },
    language: report.locale ?? 'en',
    pageMargins: [48, 56, 48, 56],
    defaultStyle: { font: 'Roboto', fontSize: 10.5, lineHeight: 1.25 },
    styles: {
      h1: { fontSize: 20, bold: true, margin: [0, 0, 0, 12] },
      h2: { fontSize: 14, bold: true, margin: [0, 14, 0, 6] },
      h3: { fontSize: 12, bold: true, margin: [0, 10, 0, 4] },
      code: { fontSize: 9, background: '#f1f3f5' },
    },
    footer: (page: number, pages: number) => ({ text: `${page} / ${pages}`, alignment: 'center', fontSize: 8, color: '#888888' }),
    content,
  };
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
    case 'codespan':
      return [{ text: decode((t as Tokens.Codespan).text), ...style, style: 'code' }];
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
      return cite(decode(tt.text), style, layout.refCount);
    }
    default:
      return cite(decode((t as { raw: string }).raw), style, layout.refCount);
  }
}

/** Blocks of the report (`topLevel`) or of a quote or list item, where no reference list is. */
function blocks(ts: Token[], layout: Layout, topLevel = false): unknown[] {
  return ts.flatMap((t, i) => block(t, topLevel && i === layout.refsAt, layout));
}

function block(t: Token, isRefs: boolean, layout: Layout): unknown[] {
  switch (t.type) {
    case 'heading': {
      const h = t as Tokens.Heading;
      return [{ text: inline(h.tokens, layout), style: `h${Math.min(h.depth, 3)}`, ...(h.depth === 1 ? {} : { tocItem: false }) }];
    }
    case 'paragraph':
      return paragraph(t as Tokens.Paragraph, layout);
    case 'list':
      return [list(t as Tokens.List, isRefs, layout)];
    case 'table':
      return [table(t as Tokens.Table, layout)];
    case 'blockquote':
      return [quote(t as Tokens.Blockquote, layout)];
    case 'code':
      return [{ text: (t as Tokens.Code).text, style: 'code', margin: [0, 4, 0, 10] }];
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

function list(l: Tokens.List, isRefs: boolean, layout: Layout) {
  const items = l.items.map((it, n) => {
    const content = it.tokens.flatMap((x) =>
      x.type === 'text' ? [{ text: inline((x as Tokens.Text).tokens ?? [x], layout) }] : blocks([x], layout),
    );
    return isRefs ? reference(content, it, n) : { stack: content };
  });
  return { [l.ordered ? 'ol' : 'ul']: items, margin: [0, 0, 0, 8] };
}

/** Item n (from 0) of the reference list: a destination for its citations, with its address in
 *  full, as on paper a reference needs it. */
function reference(content: unknown[], it: Tokens.ListItem, n: number) {
  const href = findLink(it.tokens);
  return {
    stack: [...content, ...(href ? [{ text: href, link: href, color: LINK_COLOR, fontSize: 8.5 }] : [])],
    id: `ref-${n + 1}`,
  };
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

/** Text with each citation [n] of a known reference linked to it. */
function cite(text: string, style: Style, refCount: number): Inline[] {
  return citationPieces(text, refCount).map((p) =>
    'n' in p ? { text: `[${p.n}]`, ...style, linkToDestination: `ref-${p.n}`, color: LINK_COLOR } : { text: p.text, ...style },
  );
}
