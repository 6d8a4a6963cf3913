// A report as a Word document (.docx), written by the `docx` package (pure JS: nothing is fetched).
// As the PDF export does, the report's Markdown (title, notes, body, charts) is read with marked's
// lexer and laid out block by block: headings as Word headings, paragraphs with bold, italics, code
// and links, lists, Markdown tables as Word tables, quotes, code blocks line by line (a collapsible
// part as its label and its code), the run's charts (PNG/JPEG) as pictures, each citation [n] an
// internal link to a bookmark on its reference; the references, from the report's data, each with
// its address a hyperlink.
import type * as DocxModule from 'docx';
import type { FileChild, ParagraphChild } from 'docx';
import type { Token, Tokens } from 'marked';
import { lazyRequire } from '../../infra/lazy';
import type { ArtifactBytes, ExportableReport } from './html';
import { imageSize, RASTER } from './images';
import { citationPieces, decode, expandTabs, referenceEntries, type ReferenceEntry, reportTokens, summaryLabel } from './tokens';

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
  /** The numbers of the cited references: a citation [n] of one links to its bookmark. */
  citable: ReadonlySet<number>;
  /** Each ordered list restarts its numbering: the next numbering instance. */
  nextList: number;
}

/** Word bookmark names are letters, digits and underscores, starting with a letter. */
export const referenceBookmark = (n: number) => `ref_${n}`;

export async function reportDocx(report: ExportableReport, artifacts: ArtifactBytes): Promise<Buffer> {
  const { Document, Packer, AlignmentType, LevelFormat } = docx();
  const { cited, consulted, citable } = referenceEntries(report.doc);
  const layout: Layout = { artifacts, citable, nextList: 1 };
  // The text opens with the title as its heading (the report's Markdown does).
  const body = reportTokens(report.doc).flatMap((t) => block(t, layout, 0));
  const refs = referenceBlocks(cited, consulted, layout);
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
    sections: [{ children: [...body, ...refs] }],
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
function block(t: Token, layout: Layout, level: number): FileChild[] {
  const { Paragraph, TextRun } = docx();
  switch (t.type) {
    case 'heading': {
      const h = t as Tokens.Heading;
      return [heading(inline(h.tokens, layout), h.depth)];
    }
    case 'paragraph':
      return paragraph(t as Tokens.Paragraph, layout);
    case 'list':
      return list(t as Tokens.List, layout, level);
    case 'table':
      return [table(t as Tokens.Table, layout)];
    case 'blockquote':
      return quote(t as Tokens.Blockquote, layout);
    case 'code': {
      // One run a line, its leading spaces kept (written with xml:space="preserve").
      const lines = expandTabs((t as Tokens.Code).text).split('\n');
      const runs = lines.map((line, i) => new TextRun({ text: line, font: CODE_FONT, size: 18, ...(i ? { break: 1 } : {}) }));
      return [new Paragraph({ children: runs, shading: { type: 'clear', fill: 'F1F3F5', color: 'auto' }, spacing: { after: 160 } })];
    }
    case 'hr':
      return [new Paragraph({ border: { bottom: { style: 'single', size: 6, color: 'DDDDDD', space: 1 } }, children: [] })];
    case 'html': {
      // Markup in a model's text is not drawn (the HTML and PDF exports drop it too); a collapsible
      // part (a coder step's program) keeps its summary as a label over the code that follows.
      const label = summaryLabel((t as Tokens.HTML).raw);
      return label
        ? [new Paragraph({ children: [new TextRun({ text: label, bold: true })], keepNext: true, spacing: { before: 120, after: 60 } })]
        : [];
    }
    case 'space':
      return [];
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

function list(l: Tokens.List, layout: Layout, level: number): FileChild[] {
  const { Paragraph } = docx();
  const instance = l.ordered ? layout.nextList++ : 0;
  const marker = l.ordered
    ? { numbering: { reference: ORDERED, level: Math.min(level, 3), instance } }
    : { bullet: { level: Math.min(level, 3) } };
  return l.items.flatMap((item) => {
    const own = item.tokens.filter((x) => x.type === 'text' || x.type === 'paragraph');
    const nested = item.tokens.filter((x) => x.type !== 'text' && x.type !== 'paragraph');
    const children = own.flatMap((x) => inline((x as Tokens.Text).tokens ?? [x], layout));
    return [new Paragraph({ ...marker, children }), ...nested.flatMap((x) => block(x, layout, level + 1))];
  });
}

/** "References" (a numbered list, each entry the bookmark its citations link to) and "Also
 *  consulted", from the report's data: each entry its title, linked, and its address in full. */
function referenceBlocks(cited: ReferenceEntry[], consulted: ReferenceEntry[], layout: Layout): FileChild[] {
  const { Paragraph, Bookmark } = docx();
  const instance = layout.nextList++;
  return [
    ...(cited.length ? [heading('References', 2)] : []),
    ...cited.map(
      (r) =>
        new Paragraph({
          numbering: { reference: ORDERED, level: 0, instance },
          children: [new Bookmark({ id: referenceBookmark(r.n), children: [titleRun(r)] }), ...urlLine(r)],
        }),
    ),
    ...(consulted.length ? [heading('Also consulted', 2)] : []),
    ...consulted.map((r) => new Paragraph({ bullet: { level: 0 }, children: [titleRun(r), ...urlLine(r)] })),
  ];
}

/** A reference's title, a hyperlink to its address when that is a web address. */
function titleRun(r: ReferenceEntry): ParagraphChild {
  const { ExternalHyperlink, TextRun } = docx();
  return r.href && /^https?:/i.test(r.href)
    ? new ExternalHyperlink({ link: r.href, children: [new TextRun({ text: r.title, style: 'Hyperlink' })] })
    : new TextRun(r.title);
}

/** A reference's address on its own line, a hyperlink when it is a web address. */
function urlLine(r: ReferenceEntry): ParagraphChild[] {
  const { ExternalHyperlink, TextRun } = docx();
  if (!r.href) return [];
  const text = new TextRun({ text: r.href, style: 'Hyperlink', size: 18 });
  return [new TextRun({ text: '', break: 1 }), /^https?:/i.test(r.href) ? new ExternalHyperlink({ link: r.href, children: [text] }) : text];
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
    if (t.type !== 'paragraph') return block(t, layout, 0);
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
      return cite(decode(tt.text), style, layout.citable);
    }
    default:
      return cite(decode((t as { raw: string }).raw), style, layout.citable);
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

/** Text with each citation [n] of a cited reference linked to its bookmark. */
function cite(text: string, style: RunStyle, citable: ReadonlySet<number>): ParagraphChild[] {
  const { InternalHyperlink } = docx();
  if (style.linked) return [run(text, style)];
  return citationPieces(text, citable).map((p) =>
    'n' in p
      ? new InternalHyperlink({ anchor: referenceBookmark(p.n), children: [run(`[${p.n}]`, { ...style, linked: true })] })
      : run(p.text, style),
  );
}
