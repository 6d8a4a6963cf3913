// A report as PDF, drawn by pdfmake (pure JS, fonts shipped with the package: nothing is
// downloaded at install or run time). The Markdown is read with marked's lexer and laid out as
// pdfmake content: headings, paragraphs with bold, italics, code and links, lists, tables,
// quotes, the run's charts (PNG/JPEG), citations linking to the numbered references.
import { createRequire } from 'node:module';
import path from 'node:path';
import { marked, type Token, type Tokens } from 'marked';
import type pdfmakeType from 'pdfmake';
import type { ArtifactBytes, ExportableReport } from './html';

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
const RASTER = /^image\/(png|jpeg)$/;

export async function reportPdf(report: ExportableReport, artifacts: ArtifactBytes): Promise<Buffer> {
  const tokens = marked.lexer(report.markdown, { gfm: true });
  // The reference list: the first list after the "References" heading.
  const headingAt = tokens.findIndex((t) => t.type === 'heading' && /^references$/i.test((t as Tokens.Heading).text.trim()));
  const next = headingAt < 0 ? -1 : tokens.findIndex((t, i) => i > headingAt && t.type !== 'space');
  const refsAt = next >= 0 && tokens[next]!.type === 'list' ? next : -1;
  const refCount = refsAt >= 0 ? (tokens[refsAt] as Tokens.List).items.length : 0;

  const inline = (ts: Token[] | undefined, style: Record<string, unknown> = {}): Inline[] =>
    (ts ?? []).flatMap((t): Inline[] => {
      switch (t.type) {
        case 'strong':
          return inline((t as Tokens.Strong).tokens, { ...style, bold: true });
        case 'em':
          return inline((t as Tokens.Em).tokens, { ...style, italics: true });
        case 'codespan':
          return [{ text: decode((t as Tokens.Codespan).text), ...style, style: 'code' }];
        case 'link': {
          const l = t as Tokens.Link;
          return inline(l.tokens, { ...style, link: l.href, color: '#1d4ed8' });
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
          if (tt.tokens?.length) return inline(tt.tokens, style);
          return cite(decode(tt.text), style, refCount);
        }
        default:
          return cite(decode((t as { raw: string }).raw), style, refCount);
      }
    });

  const blocks = (ts: Token[], inRefs = false): unknown[] =>
    ts.flatMap((t, i): unknown[] => {
      switch (t.type) {
        case 'heading': {
          const h = t as Tokens.Heading;
          return [{ text: inline(h.tokens), style: `h${Math.min(h.depth, 3)}`, ...(h.depth === 1 ? {} : { tocItem: false }) }];
        }
        case 'paragraph': {
          const p = t as Tokens.Paragraph;
          const images = (p.tokens ?? []).filter((x) => x.type === 'image') as Tokens.Image[];
          const pictures = images.flatMap((img) => {
            const a = artifacts.get(img.href);
            return a && RASTER.test(a.contentType)
              ? [{ image: `data:${a.contentType};base64,${a.bytes.toString('base64')}`, fit: [460, 300], margin: [0, 6, 0, 6] }]
              : [];
          });
          const rest = (p.tokens ?? []).filter((x) => x.type !== 'image' || !artifacts.has((x as Tokens.Image).href));
          const text = rest.length ? [{ text: inline(rest), margin: [0, 0, 0, 8] }] : [];
          return [...pictures, ...text];
        }
        case 'list': {
          const l = t as Tokens.List;
          const isRefs = inRefs || i === refsAt;
          const items = l.items.map((it, n) => {
            const content = it.tokens.flatMap((x) =>
              x.type === 'text' ? [{ text: inline((x as Tokens.Text).tokens ?? [x]) }] : blocks([x]),
            );
            if (!isRefs) return { stack: content };
            // On paper a reference needs its address in full.
            const href = findLink(it.tokens);
            return {
              stack: [...content, ...(href ? [{ text: href, link: href, color: '#1d4ed8', fontSize: 8.5 }] : [])],
              id: `ref-${n + 1}`,
            };
          });
          return [{ [l.ordered ? 'ol' : 'ul']: items, margin: [0, 0, 0, 8] }];
        }
        case 'table': {
          const tb = t as Tokens.Table;
          const header = tb.header.map((c) => ({ text: inline(c.tokens), bold: true, fillColor: '#f1f3f5' }));
          const rows = tb.rows.map((r) => r.map((c) => ({ text: inline(c.tokens) })));
          return [
            {
              table: { headerRows: 1, widths: header.map(() => '*'), body: [header, ...rows] },
              layout: { hLineColor: () => '#bbbbbb', vLineColor: () => '#bbbbbb' },
              margin: [0, 4, 0, 10],
              fontSize: 9,
            },
          ];
        }
        case 'blockquote':
          return [
            {
              table: {
                widths: ['*'],
                body: [[{ stack: blocks((t as Tokens.Blockquote).tokens), fillColor: '#f8fafc', color: '#334155' }]],
              },
              layout: { hLineWidth: () => 0, vLineWidth: (n: number) => (n === 0 ? 3 : 0), vLineColor: () => '#c7d2fe' },
              margin: [0, 4, 0, 10],
            },
          ];
        case 'code':
          return [{ text: (t as Tokens.Code).text, style: 'code', margin: [0, 4, 0, 10] }];
        case 'hr':
          return [{ canvas: [{ type: 'line', x1: 0, y1: 0, x2: 515, y2: 0, lineColor: '#dddddd' }], margin: [0, 6, 0, 6] }];
        case 'space':
          return [];
        default:
          return [{ text: decode((t as { raw: string }).raw), margin: [0, 0, 0, 8] }];
      }
    });

  const doc = pdfmake().createPdf({
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
    content: blocks(tokens),
  });
  return doc.getBuffer();
}

/** Text with each citation [n] of a known reference linked to it. */
function cite(text: string, style: Record<string, unknown>, refCount: number): Inline[] {
  if (!refCount || !/\[\d/.test(text)) return [{ text, ...style }];
  const out: Inline[] = [];
  let last = 0;
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    const n = Number(m[1]);
    if (n < 1 || n > refCount) continue;
    if (m.index! > last) out.push({ text: text.slice(last, m.index), ...style });
    out.push({ text: `[${n}]`, ...style, linkToDestination: `ref-${n}`, color: '#1d4ed8' });
    last = m.index! + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last), ...style });
  return out;
}

/** The first link's address in a list item. */
function findLink(ts: Token[] | undefined): string | undefined {
  for (const t of ts ?? []) {
    if (t.type === 'link') return (t as Tokens.Link).href;
    const inner = findLink((t as { tokens?: Token[] }).tokens);
    if (inner) return inner;
  }
  return undefined;
}

/** marked keeps HTML entities in token text. */
function decode(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}
