// Uploaded documents to text with their structure: sections that keep the heading path and the
// page (PDF page, slide) they come from. Well-kept parsers do the reading: pdf.js, mammoth (DOCX),
// ExcelJS (XLSX), JSZip with fast-xml-parser (PPTX), Readability (HTML).
import ExcelJS from 'exceljs';
import { XMLParser } from 'fast-xml-parser';
import { JSDOM, VirtualConsole } from 'jsdom';
import JSZip from 'jszip';
import mammoth from 'mammoth';
import { htmlToMarkdown } from '../crawl/extract';

export const DOC_FORMATS = ['pdf', 'docx', 'pptx', 'xlsx', 'csv', 'html', 'markdown', 'text'] as const;
export type DocFormat = (typeof DOC_FORMATS)[number];

const CONTENT_TYPES: Record<DocFormat, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv',
  html: 'text/html',
  markdown: 'text/markdown',
  text: 'text/plain',
};

export function contentTypeOf(format: DocFormat): string {
  return CONTENT_TYPES[format];
}

export interface Section {
  headingPath: string[];
  page?: number;
  text: string;
}

export interface ParsedDocument {
  title: string;
  sections: Section[];
  pages?: number;
}

/** A file the parser cannot read: corrupt, encrypted, or without text. The message says why. */
export class DocumentUnreadable extends Error {
  override readonly name = 'DocumentUnreadable';
}

const EXTENSIONS: Record<string, DocFormat> = {
  pdf: 'pdf',
  docx: 'docx',
  pptx: 'pptx',
  xlsx: 'xlsx',
  csv: 'csv',
  html: 'html',
  htm: 'html',
  md: 'markdown',
  markdown: 'markdown',
  txt: 'text',
  text: 'text',
};

/**
 * The format by magic bytes first (a PDF is %PDF; Office files are ZIPs, told apart by the name,
 * the content type or their entries), then content type, then extension. Undefined for anything
 * else: images, executables, legacy binary Office files (OLE), a ".pdf" that is not a PDF.
 */
export function detectFormat(name: string, contentType: string | undefined, head: Buffer): DocFormat | undefined {
  const ext = EXTENSIONS[name.toLowerCase().split('.').pop() ?? ''];
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const byType = (Object.entries(CONTENT_TYPES) as [DocFormat, string][]).find(([, t]) => t === type)?.[0];
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (head.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) {
    for (const f of [ext, byType]) if (f === 'docx' || f === 'pptx' || f === 'xlsx') return f;
    const entries = head.toString('latin1');
    if (entries.includes('word/')) return 'docx';
    if (entries.includes('ppt/')) return 'pptx';
    if (entries.includes('xl/')) return 'xlsx';
    return undefined;
  }
  if (ext === 'pdf' || byType === 'pdf' || ext === 'docx' || ext === 'pptx' || ext === 'xlsx') return undefined; // claims a binary format, is not one
  if (looksBinary(head)) return undefined;
  if (type === 'text/x-markdown') return 'markdown';
  if (type === 'application/xhtml+xml') return 'html';
  if (byType && type !== 'text/plain') return byType;
  if (ext) return ext;
  if (byType) return byType;
  return type.startsWith('text/') ? 'text' : undefined;
}

function looksBinary(head: Buffer): boolean {
  const sample = head.subarray(0, 1024);
  let control = 0;
  for (const b of sample) if (b === 0 || (b < 7 && b !== 0)) control++;
  return control > 0;
}

export async function parseDocument(
  bytes: Buffer,
  format: DocFormat,
  name: string,
  limits: { maxPages?: number; maxChars?: number } = {},
): Promise<ParsedDocument> {
  const maxPages = limits.maxPages ?? 500;
  const maxChars = limits.maxChars ?? 2_000_000;
  const fallbackTitle = name.replace(/\.[^.]+$/, '');
  let doc: ParsedDocument;
  try {
    switch (format) {
      case 'pdf':
        doc = await parsePdf(bytes, maxPages);
        break;
      case 'docx':
        doc = await parseDocx(bytes);
        break;
      case 'pptx':
        doc = await parsePptx(bytes, maxPages);
        break;
      case 'xlsx':
        doc = await parseXlsx(bytes);
        break;
      case 'csv':
        doc = { title: '', sections: [{ headingPath: [fallbackTitle], text: renderRows(parseCsv(bytes.toString('utf8'))) }] };
        break;
      case 'html': {
        const readable = htmlToMarkdown(bytes.toString('utf8'), 'https://upload.invalid/');
        doc = { title: readable.title, sections: markdownSections(readable.markdown) };
        break;
      }
      case 'markdown':
        doc = { title: '', sections: markdownSections(bytes.toString('utf8')) };
        break;
      case 'text':
        doc = { title: '', sections: [{ headingPath: [], text: bytes.toString('utf8') }] };
        break;
    }
  } catch (err) {
    if (err instanceof DocumentUnreadable) throw err;
    throw new DocumentUnreadable(`${format.toUpperCase()}: ${(err as Error).message || String(err)}`);
  }
  let left = maxChars;
  const sections: Section[] = [];
  for (const s of doc.sections) {
    const text = s.text
      .replace(/\r\n?/g, '\n')
      .replace(/[ \t]+\n/g, '\n')
      .trim();
    if (!text || left <= 0) continue;
    sections.push({ ...s, text: text.slice(0, left) });
    left -= text.length;
  }
  if (!sections.length) throw new DocumentUnreadable(`${format.toUpperCase()}: no text found in ${name}`);
  return { ...doc, title: doc.title.trim() || sections.find((s) => s.headingPath.length)?.headingPath[0] || fallbackTitle, sections };
}

async function parsePdf(bytes: Buffer, maxPages: number): Promise<ParsedDocument> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const pdf = await pdfjs.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  }).promise;
  try {
    const sections: Section[] = [];
    for (let i = 1; i <= Math.min(pdf.numPages, maxPages); i++) {
      const content = await (await pdf.getPage(i)).getTextContent();
      let text = '';
      for (const it of content.items) {
        if (!('str' in it)) continue;
        text += it.str + (it.hasEOL ? '\n' : ' ');
      }
      sections.push({ headingPath: [], page: i, text: text.replace(/[ \t]+/g, ' ') });
    }
    const info = (await pdf.getMetadata().catch(() => undefined))?.info as { Title?: string } | undefined;
    return { title: info?.Title ?? '', sections, pages: pdf.numPages };
  } finally {
    await pdf.destroy();
  }
}

/** DOCX through mammoth's HTML: headings become the path, paragraphs, lists and tables the text. */
async function parseDocx(bytes: Buffer): Promise<ParsedDocument> {
  const { value: html } = await mammoth.convertToHtml({ buffer: bytes });
  const dom = new JSDOM(`<body>${html}</body>`, { virtualConsole: new VirtualConsole() });
  const path: string[] = [];
  const sections: Section[] = [];
  let current: string[] = [];
  const flush = () => {
    if (current.length) sections.push({ headingPath: [...path], text: current.join('\n\n') });
    current = [];
  };
  for (const el of Array.from(dom.window.document.body.children)) {
    const level = /^H([1-6])$/.exec(el.tagName)?.[1];
    if (level) {
      flush();
      path.splice(Number(level) - 1);
      while (path.length < Number(level) - 1) path.push('');
      path.push(el.textContent?.trim() ?? '');
      continue;
    }
    if (el.tagName === 'TABLE') {
      const rows = Array.from(el.querySelectorAll('tr')).map((tr) =>
        Array.from(tr.querySelectorAll('td,th'))
          .map((c) => c.textContent?.trim() ?? '')
          .join(' | '),
      );
      current.push(rows.join('\n'));
    } else if (el.tagName === 'UL' || el.tagName === 'OL') {
      current.push(
        Array.from(el.querySelectorAll('li'))
          .map((li) => `- ${li.textContent?.trim() ?? ''}`)
          .join('\n'),
      );
    } else {
      const t = el.textContent?.trim();
      if (t) current.push(t);
    }
  }
  flush();
  dom.window.close();
  return { title: '', sections: sections.map((s) => ({ ...s, headingPath: s.headingPath.filter(Boolean) })) };
}

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', preserveOrder: false, isArray: () => false });

/** Every value of `key` anywhere under `node`, in document order. */
function collect(node: unknown, key: string, out: unknown[] = []): unknown[] {
  if (Array.isArray(node)) for (const n of node) collect(n, key, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === key) out.push(...(Array.isArray(v) ? v : [v]));
      else collect(v, key, out);
    }
  }
  return out;
}

const textOf = (v: unknown): string =>
  typeof v === 'string' || typeof v === 'number' ? String(v) : ((v as { '#text'?: string })?.['#text'] ?? '');

/** PPTX: one section per slide, the title placeholder as its heading, text by paragraph. */
async function parsePptx(bytes: Buffer, maxSlides: number): Promise<ParsedDocument> {
  const zip = await JSZip.loadAsync(bytes);
  const slides = Object.keys(zip.files)
    .map((f) => /^ppt\/slides\/slide(\d+)\.xml$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]));
  if (!slides.length) throw new DocumentUnreadable('PPTX: the file has no slides');
  const sections: Section[] = [];
  for (const m of slides.slice(0, maxSlides)) {
    const tree = xml.parse(await zip.file(m[0])!.async('string'));
    let title = '';
    const body: string[] = [];
    for (const shape of collect(tree, 'p:sp')) {
      const ph = collect(shape, 'p:ph')[0] as { '@type'?: string } | undefined;
      const paragraphs = collect(shape, 'a:p')
        .map((p) => collect(p, 'a:t').map(textOf).join('').trim())
        .filter(Boolean);
      if (ph && (ph['@type'] === 'title' || ph['@type'] === 'ctrTitle') && !title) title = paragraphs.join(' ');
      else body.push(...paragraphs);
    }
    // Decks made without layout placeholders: the first text box is the title by convention.
    if (!title && body.length > 1) title = body.shift()!;
    const slide = Number(m[1]);
    sections.push({ headingPath: title ? [title] : [], page: slide, text: body.join('\n') || title });
  }
  return { title: '', sections, pages: slides.length };
}

/** XLSX: a section per sheet, each row as "header: value" pairs under the sheet's name. */
async function parseXlsx(bytes: Buffer): Promise<ParsedDocument> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.load(bytes as unknown as ArrayBuffer);
  const sections: Section[] = [];
  book.eachSheet((sheet) => {
    const rows: string[][] = [];
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const values = (row.values as unknown[]).slice(1).map(cellText);
      if (values.some((v) => v !== '')) rows.push(values);
    });
    if (rows.length) sections.push({ headingPath: [sheet.name], text: renderRows(rows) });
  });
  return { title: book.title ?? '', sections };
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  if (typeof v === 'object') {
    const o = v as { result?: unknown; text?: string; richText?: { text: string }[]; hyperlink?: string };
    if (o.richText) return o.richText.map((r) => r.text).join('');
    if (o.text !== undefined) return String(o.text);
    if (o.result !== undefined) return cellText(o.result);
    return '';
  }
  return String(v).trim();
}

/** Rows under their header, one line per row, so each row stays together in a chunk. */
const MAX_ROWS = 20_000;
function renderRows(rows: string[][]): string {
  const [header, ...data] = rows;
  if (!header) return '';
  if (!data.length) return header.join(' | ');
  return data
    .slice(0, MAX_ROWS)
    .map((r) =>
      r
        .map((v, i) => (v === '' ? '' : `${header[i] || `column ${i + 1}`}: ${v}`))
        .filter(Boolean)
        .join('; '),
    )
    .join('\n');
}

/** RFC 4180: quoted fields, doubled quotes, CRLF, newlines inside quotes. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') {
      row.push(field.trim());
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field.trim());
      if (row.some((f) => f !== '')) rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  row.push(field.trim());
  if (row.some((f) => f !== '')) rows.push(row);
  return rows;
}

/** Markdown by ATX headings: each heading's text is a section under the path of headings above it. */
export function markdownSections(markdown: string): Section[] {
  const sections: Section[] = [];
  const path: string[] = [];
  let lines: string[] = [];
  let fence = false;
  const flush = () => {
    const text = lines.join('\n').trim();
    if (text) sections.push({ headingPath: path.filter(Boolean), text });
    lines = [];
  };
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const h = fence ? null : /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      flush();
      const level = h[1]!.length;
      path.splice(level - 1);
      while (path.length < level - 1) path.push('');
      path.push(h[2]!);
      continue;
    }
    lines.push(line);
  }
  flush();
  return sections;
}
