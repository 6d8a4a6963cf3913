// A report as a Word document (.docx), written by the `docx` package (pure JS: nothing is fetched).
// As the PDF export does, the Markdown is read with marked's lexer and laid out block by block:
// headings as Word headings, paragraphs with bold, italics, code and links, lists, Markdown tables
// as Word tables, quotes, the run's charts (PNG/JPEG) as pictures, each citation [n] an internal
// link to a bookmark on its reference, and each reference's address a hyperlink.
import type * as DocxModule from 'docx';
import type { FileChild, ParagraphChild } from 'docx';
import { marked, type Token, type Tokens } from 'marked';
import { lazyRequire } from '../../infra/lazy';
import type { ArtifactBytes, ExportableReport } from './html';
import { imageSize, RASTER } from './images';
import { citationPieces, decode, findLink, referenceListAt } from './tokens';

export { imageSize } from './images';

/** docx, loaded at the first export (it holds a megabyte of code most processes never run). */
const docx = lazyRequire<typeof DocxModule>('docx');

const ORDERED = 'ordered';
const CODE_FONT = 'Consolas';
/** The widest a chart is drawn, in pixels at 96 to the inch (a page's text width is about 624). */
const MAX_IMAGE = { width: 600, height: 420 };

interface RunStyle {
  bold?: boolean;
  italics?: boolean;
  code?: boolean;
  /** Inside a hyperlink: no link within it. */
  linked?: boolean;
}

/** What laying out one report needs besides its tokens. */
interface Layout {
  artifacts: ArtifactBytes;
  /** The index of the reference list among the report's tokens, -1 when it has none. */
  refsAt: number;
  refCount: number;
  /** Each ordered list restarts its numbering: the next numbering instance. */
  nextList: number;
}

/** Word bookmark names are letters, digits and underscores, starting with a letter. */
export const referenceBookmark = (n: number) => `ref_${n}`;

export async function reportDocx(report: ExportableReport, artifacts: ArtifactBytes): Promise<Buffer> {
  const { Document, Packer, AlignmentType, LevelFormat } = docx();
  const tokens = marked.lexer(report.markdown, { gfm: true });
  const refsAt = referenceListAt(tokens);
  const layout: Layout = { artifacts, refsAt, refCount: refsAt >= 0 ? (tokens[refsAt] as Tokens.List).items.length : 0, nextList: 1 };
  const body = tokens.flatMap((t, i) => block(t, i === refsAt, layout, 0));
  // A report written without its title as a heading still opens with it.
  const titled =
    tokens.find((t) => t.type !== 'space')?.type === 'heading' && (tokens.find((t) => t.type !== 'space') as Tokens.Heading).depth === 1;
  const doc = new Document({
    title: report.title,
    subject: 'deep-research report',
    creator: 'deep-research',
    styles: { default: { document: { run: { font: 'Calibri', size: 22 } } } },
    numbering: {
      config: [
        {
          reference: ORDERED,
          levels: [0, 1, 2, 3].map((level) => ({
            level,
            format: LevelFormat.DECIMAL,
            text: `%${level + 1}.`,
            alignment: AlignmentType.START,
            style: { paragraph: { indent: { left: 720 * (level + 1), hanging: 360 } } },
          })),
        },
      ],
    },
    sections: [{ children: [...(titled ? [] : [heading(report.title, 1)]), ...body] }],
  });
  return Packer.toBuffer(doc);
}

function heading(text: string | ParagraphChild[], depth: number): FileChild {
  const { Paragraph, TextRun, HeadingLevel } = docx();
  const levels = [HeadingLevel.HEADING_1, HeadingLevel.HEADING_2, HeadingLevel.HEADING_3, HeadingLevel.HEADING_4];
  const children = typeof text === 'string' ? [new TextRun(text)] : text;
  return new Paragraph({ heading: levels[Math.min(depth, 4) - 1], children });
}

/** One block of the report; `level` is the list nesting it sits in. */
function block(t: Token, isRefs: boolean, layout: Layout, level: number): FileChild[] {
  const { Paragraph, TextRun } = docx();
  switch (t.type) {
    case 'heading': {
      const h = t as Tokens.Heading;
      return [heading(inline(h.tokens, layout), h.depth)];
    }
    case 'paragraph':
      return paragraph(t as Tokens.Paragraph, layout);
    case 'list':
      return list(t as Tokens.List, isRefs, layout, level);
    case 'table':
      return [table(t as Tokens.Table, layout)];
    case 'blockquote':
      return quote(t as Tokens.Blockquote, layout);
    case 'code': {
      const lines = (t as Tokens.Code).text.split('\n');
      const runs = lines.map((line, i) => new TextRun({ text: line, font: CODE_FONT, size: 18, ...(i ? { break: 1 } : {}) }));
      return [new Paragraph({ children: runs, shading: { type: 'clear', fill: 'F1F3F5', color: 'auto' }, spacing: { after: 160 } })];
    }
    case 'hr':
      return [new Paragraph({ border: { bottom: { style: 'single', size: 6, color: 'DDDDDD', space: 1 } }, children: [] })];
    case 'space':
    case 'html':
      return []; // markup in a model's text is not drawn (the HTML and PDF exports drop it too)
    default:
      return [new Paragraph({ children: [new TextRun(decode((t as { raw: string }).raw))] })];
  }
}

/** A paragraph: its charts (raster artifacts of the run) drawn first, then its text. */
function paragraph(p: Tokens.Paragraph, layout: Layout): FileChild[] {
  const { Paragraph } = docx();
  const tokens = p.tokens ?? [];
  const charts = tokens.filter((x) => x.type === 'image' && isChart((x as Tokens.Image).href, layout)) as Tokens.Image[];
  const pictures = charts.map(
    (img) => new Paragraph({ children: [picture(img, layout.artifacts.get(img.href)!)], spacing: { after: 120 } }),
  );
  const rest = tokens.filter((x) => !charts.includes(x as Tokens.Image));
  const text = rest.length ? [new Paragraph({ children: inline(rest, layout), spacing: { after: 160 } })] : [];
  return [...pictures, ...text];
}

const isChart = (href: string, layout: Layout) => RASTER.test(layout.artifacts.get(href)?.contentType ?? '');

function picture(img: Tokens.Image, a: { contentType: string; bytes: Buffer }): ParagraphChild {
  const { ImageRun } = docx();
  const size = imageSize(a.bytes) ?? { width: MAX_IMAGE.width, height: Math.round(MAX_IMAGE.width * 0.6) };
  const scale = Math.min(1, MAX_IMAGE.width / size.width, MAX_IMAGE.height / size.height);
  return new ImageRun({
    type: a.contentType === 'image/png' ? 'png' : 'jpg',
    data: a.bytes,
    transformation: { width: Math.round(size.width * scale), height: Math.round(size.height * scale) },
    altText: { name: img.text || 'chart', description: img.text || 'chart', title: img.title ?? (img.text || 'chart') },
  });
}

function list(l: Tokens.List, isRefs: boolean, layout: Layout, level: number): FileChild[] {
  const { Paragraph, Bookmark } = docx();
  const instance = l.ordered ? layout.nextList++ : 0;
  const marker = l.ordered
    ? { numbering: { reference: ORDERED, level: Math.min(level, 3), instance } }
    : { bullet: { level: Math.min(level, 3) } };
  return l.items.flatMap((item, n) => {
    const own = item.tokens.filter((x) => x.type === 'text' || x.type === 'paragraph');
    const nested = item.tokens.filter((x) => x.type !== 'text' && x.type !== 'paragraph');
    let children = own.flatMap((x) => inline((x as Tokens.Text).tokens ?? [x], layout));
    // Item n (from 0) of the reference list: the target of citation [n+1], with its address in full.
    if (isRefs) {
      const href = findLink(item.tokens);
      children = [new Bookmark({ id: referenceBookmark(n + 1), children }), ...(href ? urlLine(href) : [])];
    }
    return [new Paragraph({ ...marker, children }), ...nested.flatMap((x) => block(x, false, layout, level + 1))];
  });
}

/** A reference's address as a hyperlink on its own line. */
function urlLine(href: string): ParagraphChild[] {
  const { ExternalHyperlink, TextRun } = docx();
  return [
    new TextRun({ text: '', break: 1 }),
    new ExternalHyperlink({ link: href, children: [new TextRun({ text: href, style: 'Hyperlink', size: 18 })] }),
  ];
}

function table(tb: Tokens.Table, layout: Layout): FileChild {
  const { Table, TableRow, TableCell, Paragraph, WidthType } = docx();
  const cell = (c: Tokens.TableCell, header: boolean) =>
    new TableCell({
      children: [new Paragraph({ children: inline(c.tokens, layout, header ? { bold: true } : {}) })],
      ...(header ? { shading: { type: 'clear' as const, fill: 'F1F3F5', color: 'auto' } } : {}),
    });
  return new Table({
    width: { size: 100, type: WidthType.PERCENTAGE },
    rows: [
      new TableRow({ tableHeader: true, children: tb.header.map((c) => cell(c, true)) }),
      ...tb.rows.map((r) => new TableRow({ children: r.map((c) => cell(c, false)) })),
    ],
  });
}

/** A quote: its paragraphs indented, with a bar on the left. */
function quote(q: Tokens.Blockquote, layout: Layout): FileChild[] {
  const { Paragraph } = docx();
  return q.tokens.flatMap((t) => {
    if (t.type !== 'paragraph') return block(t, false, layout, 0);
    return [
      new Paragraph({
        children: inline((t as Tokens.Paragraph).tokens, layout, { italics: true }),
        indent: { left: 360 },
        border: { left: { style: 'single', size: 18, color: 'C7D2FE', space: 8 } },
        spacing: { after: 120 },
      }),
    ];
  });
}

function inline(ts: Token[] | undefined, layout: Layout, style: RunStyle = {}): ParagraphChild[] {
  return (ts ?? []).flatMap((t) => inlineToken(t, layout, style));
}

function inlineToken(t: Token, layout: Layout, style: RunStyle): ParagraphChild[] {
  const { ExternalHyperlink, TextRun } = docx();
  switch (t.type) {
    case 'strong':
      return inline((t as Tokens.Strong).tokens, layout, { ...style, bold: true });
    case 'em':
      return inline((t as Tokens.Em).tokens, layout, { ...style, italics: true });
    case 'codespan':
      return [run(decode((t as Tokens.Codespan).text), { ...style, code: true })];
    case 'link': {
      const l = t as Tokens.Link;
      if (style.linked || !/^(https?|mailto):/i.test(l.href)) return inline(l.tokens, layout, style);
      return [new ExternalHyperlink({ link: l.href, children: inline(l.tokens, layout, { ...style, linked: true }) })];
    }
    case 'image':
      return [run((t as Tokens.Image).text, { ...style, italics: true })];
    case 'br':
      return [new TextRun({ text: '', break: 1 })];
    case 'html':
      return [];
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

function run(text: string, style: RunStyle): ParagraphChild {
  const { TextRun } = docx();
  return new TextRun({
    text,
    ...(style.bold ? { bold: true } : {}),
    ...(style.italics ? { italics: true } : {}),
    ...(style.code ? { font: CODE_FONT, shading: { type: 'clear' as const, fill: 'F1F3F5', color: 'auto' } } : {}),
    ...(style.linked ? { style: 'Hyperlink' } : {}),
  });
}

/** Text with each citation [n] of a known reference linked to its bookmark. */
function cite(text: string, style: RunStyle, refCount: number): ParagraphChild[] {
  const { InternalHyperlink } = docx();
  if (style.linked) return [run(text, style)];
  return citationPieces(text, refCount).map((p) =>
    'n' in p
      ? new InternalHyperlink({ anchor: referenceBookmark(p.n), children: [run(`[${p.n}]`, { ...style, linked: true })] })
      : run(p.text, style),
  );
}
