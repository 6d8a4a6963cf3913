// Uploaded documents to text with their structure: sections that keep the heading path and the
// page (PDF page, slide) they come from. Well-kept parsers do the reading: pdf.js, mammoth (DOCX),
// ExcelJS (XLSX), JSZip with fast-xml-parser (PPTX), Readability + Turndown (HTML); CSV and
// Markdown are small enough to read here. Every format is held to the document's caps
// (parse-caps.ts): Office files are checked by zip-guard.ts before a parser opens them, PDF
// streams are counted as pdf.js decodes them. Uploads are parsed on the parse thread
// (parse-thread.ts), never on the thread that runs the worker's activities.
import path from 'node:path';
import type ExcelJS from 'exceljs';
import { XMLParser } from 'fast-xml-parser';
import JSZip from 'jszip';
import { lazyRequire } from '../../infra/lazy';
import { htmlToMarkdown } from '../crawl/extract';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { capCount, DEFAULT_PARSE_CAPS, DocumentUnreadable, InflateBudget, type ParseCaps } from './parse-caps';
import { checkZip, type ZipEntry } from './zip-guard';

export { DocumentTooLarge, DocumentUnreadable } from './parse-caps';

// Each parser is loaded with the first document of its format.
const excel = lazyRequire<typeof ExcelJS>('exceljs');
const jsdom = lazyRequire<typeof import('jsdom')>('jsdom');
const mammothLib = lazyRequire<typeof import('mammoth')>('mammoth');

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

/** The canonical MIME type of a format (what the store records and the API serves). */
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

// ---------------------------------------------------------------------------------------------
// Detection

const EXTENSIONS: Record<string, DocFormat> = {
  pdf: 'pdf',
  docx: 'docx',
  pptx: 'pptx',
  xlsx: 'xlsx',
  csv: 'csv',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  md: 'markdown',
  markdown: 'markdown',
  txt: 'text',
  text: 'text',
};

/** Content types by what they name; aliases that clients and servers send in the wild included. */
const TYPES: Record<string, DocFormat> = {
  ...Object.fromEntries(Object.entries(CONTENT_TYPES).map(([f, t]) => [t, f as DocFormat])),
  'application/x-pdf': 'pdf',
  'application/csv': 'csv',
  'text/comma-separated-values': 'csv',
  'application/xhtml+xml': 'html',
  'text/x-markdown': 'markdown',
};

const BINARY_FORMATS = new Set<DocFormat | undefined>(['pdf', 'docx', 'pptx', 'xlsx']);
const OFFICE_FOLDERS: [string, DocFormat][] = [
  ['word/', 'docx'],
  ['ppt/', 'pptx'],
  ['xl/', 'xlsx'],
];
const PDF_MAGIC = Buffer.from('%PDF-', 'latin1');
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/**
 * The format by magic bytes first (a PDF starts with %PDF-; Office files are ZIPs, told apart by
 * the entries in their first local headers, else by name or content type), then content type,
 * then extension. Undefined for anything else: images, executables, legacy binary Office files
 * (OLE), other ZIPs, and a file that claims a binary format (".pdf", application/pdf, ".docx")
 * without its magic bytes — refused here rather than left to fail in the parser, so an upload of
 * the wrong thing is a 415, not a failed ingestion.
 */
export function detectFormat(name: string, contentType: string | undefined, head: Buffer): DocFormat | undefined {
  const ext = EXTENSIONS[path.extname(name).slice(1).toLowerCase()];
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const byType = TYPES[type];
  if (head.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) return 'pdf';
  if (head.subarray(0, ZIP_MAGIC.length).equals(ZIP_MAGIC)) {
    // The entries are the stronger evidence (a misnamed file); name and type decide when the
    // entries that say it lie beyond the head.
    const names = zipEntryNames(head);
    const byEntries = OFFICE_FOLDERS.find(([folder]) => names.some((n) => n.startsWith(folder)))?.[1];
    return byEntries ?? [ext, byType].find((f) => f === 'docx' || f === 'pptx' || f === 'xlsx');
  }
  if (BINARY_FORMATS.has(ext) || BINARY_FORMATS.has(byType)) return undefined;
  if (!textBom(head) && looksBinary(head)) return undefined;
  // Browsers send text/plain (or nothing) for .md and .csv: a specific type wins, a generic one not.
  if (byType && type !== 'text/plain') return byType;
  if (ext) return ext;
  if (byType) return byType;
  return type.startsWith('text/') ? 'text' : undefined;
}

/** Names in the ZIP local file headers found in `head` (the signature is searched, not followed:
 *  entries written with data descriptors do not say their size up front). */
function zipEntryNames(head: Buffer): string[] {
  const names: string[] = [];
  for (let at = head.indexOf(ZIP_MAGIC); at >= 0 && at + 30 <= head.length; at = head.indexOf(ZIP_MAGIC, at + 30)) {
    names.push(head.toString('latin1', at + 30, Math.min(head.length, at + 30 + head.readUInt16LE(at + 26))));
  }
  return names;
}

function textBom(head: Buffer): 'utf8' | 'utf16le' | 'utf16be' | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf16be';
  return undefined;
}

/** NUL or other C0 controls that text files do not carry (tab, newlines, form feed, escape do). */
function looksBinary(head: Buffer): boolean {
  for (const b of head.subarray(0, 1024)) if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d && b !== 0x1b) return true;
  return false;
}

/** Text by its byte-order mark, UTF-8 without one (the mark itself is not text). */
function decodeText(bytes: Buffer): string {
  switch (textBom(bytes)) {
    case 'utf8':
      return bytes.toString('utf8', 3);
    case 'utf16le':
      return bytes.toString('utf16le', 2);
    case 'utf16be':
      return Buffer.from(bytes.subarray(2)).swap16().toString('utf16le');
    default:
      return bytes.toString('utf8');
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing

/** Formats whose first heading names the document when it carries no title of its own. */
const TITLED_BY_HEADING = new Set<DocFormat>(['docx', 'pptx', 'html', 'markdown']);

/**
 * The document's text as sections. Throws DocumentUnreadable (the parser's reason in the
 * message, prefixed by the format) for a corrupt, encrypted or empty file, and DocumentTooLarge
 * for one past a cap (decompressed bytes, pages, slides, sheets, rows, columns); text longer
 * than maxChars is cut, not refused.
 */
export async function parseDocument(
  bytes: Buffer,
  format: DocFormat,
  name: string,
  caps: Partial<ParseCaps> = {},
): Promise<ParsedDocument> {
  const label = format.toUpperCase();
  const lim: ParseCaps = { ...DEFAULT_PARSE_CAPS, ...caps };
  if (!bytes.length) throw new DocumentUnreadable(`${label}: the file is empty`);
  let doc: ParsedDocument;
  try {
    doc = await readFormat(bytes, format, name, lim);
  } catch (err) {
    if (err instanceof DocumentUnreadable) {
      err.message = err.message.startsWith(`${label}: `) ? err.message : `${label}: ${err.message}`;
      throw err;
    }
    throw new DocumentUnreadable(`${label}: ${reason(err)}`);
  }
  const sections = clean(doc.sections, lim.maxChars);
  if (!sections.length) throw new DocumentUnreadable(`${label}: no text found in ${name}`);
  const heading = TITLED_BY_HEADING.has(format) ? sections.find((s) => s.headingPath.length)?.headingPath[0] : undefined;
  const title = oneLine(doc.title) || heading || path.basename(name, path.extname(name)) || name;
  return { title, sections, ...(doc.pages !== undefined ? { pages: doc.pages } : {}) };
}

function reason(err: unknown): string {
  if (err instanceof Error && err.name === 'PasswordException') return 'the file is encrypted (a password is needed)';
  return (err instanceof Error ? err.message : String(err)).trim() || 'unknown parser error';
}

function readFormat(bytes: Buffer, format: DocFormat, name: string, lim: ParseCaps): Promise<ParsedDocument> | ParsedDocument {
  switch (format) {
    case 'pdf':
      return parsePdf(bytes, lim);
    case 'docx':
      return parseDocx(bytes, lim);
    case 'pptx':
      return parsePptx(bytes, lim);
    case 'xlsx':
      return parseXlsx(bytes, lim);
    case 'csv':
      return {
        title: '',
        sections: [{ headingPath: [name], text: renderRows(parseCsv(decodeText(bytes), undefined, lim), lim.maxChars) }],
      };
    case 'html':
      return parseHtml(bytes);
    case 'markdown':
      return { title: '', sections: markdownSections(decodeText(bytes)) };
    case 'text':
      return { title: '', sections: [{ headingPath: [], text: decodeText(bytes) }] };
  }
}

/** C0 controls but tab, newline, form feed and carriage return; DEL. PostgreSQL refuses NUL in
 *  text, and the others are noise to a model. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/g;

/** Normalised text, empty sections dropped, the total cut at maxChars. */
function clean(sections: Section[], maxChars: number): Section[] {
  const out: Section[] = [];
  let left = maxChars;
  for (const s of sections) {
    if (left <= 0) break;
    const text = s.text
      .replace(/\r\n?/g, '\n')
      .replace(CONTROLS, '')
      .replace(/\f/g, '\n')
      .replace(/[ \t]+\n/g, '\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    if (!text) continue;
    const kept = text.slice(0, left);
    out.push({ headingPath: s.headingPath.map(oneLine).filter(Boolean), ...(s.page !== undefined ? { page: s.page } : {}), text: kept });
    left -= kept.length;
  }
  return out;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The hook patches/pdfjs-dist+4.9.155.patch calls with the bytes each decoded stream grows by. */
type PdfDecodeHook = ((bytes: number) => void) | undefined;
const hooks = globalThis as { __deepResearchPdfDecoded?: PdfDecodeHook };

/**
 * PDF page by page. Every stream pdf.js decodes counts against the inflate cap as it grows (one
 * content stream shared by 500 pages counts 500 times: it is decoded 500 times); pdf.js recovers
 * from the refusal inside a page as from any broken stream, so the budget is checked after each.
 * The hook is global to the thread: a parse thread parses one document at a time.
 */
async function parsePdf(bytes: Buffer, lim: ParseCaps): Promise<ParsedDocument> {
  const budget = new InflateBudget(lim.maxInflatedBytes);
  const checkDecoded = () => {
    if (budget.spent > budget.max) budget.take(0, 'the PDF');
  };
  const outer = hooks.__deepResearchPdfDecoded;
  hooks.__deepResearchPdfDecoded = (n) => budget.take(n, 'the PDF');
  try {
    const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
    const pdf = await pdfjs.getDocument({
      data: new Uint8Array(bytes),
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      verbosity: 0,
    }).promise;
    try {
      return await readPdfPages(pdf, lim, checkDecoded);
    } finally {
      await pdf.destroy();
    }
  } catch (err) {
    checkDecoded(); // pdf.js hands the refusal on as an error of its own: the cap is the reason
    throw err;
  } finally {
    hooks.__deepResearchPdfDecoded = outer;
  }
}

/** The pages' text until maxChars; the page cap and the decode budget checked as it goes. */
async function readPdfPages(pdf: PDFDocumentProxy, lim: ParseCaps, checkDecoded: () => void): Promise<ParsedDocument> {
  checkDecoded();
  capCount(pdf.numPages, lim.maxPages, 'pages', 'KB_PARSE_MAX_PAGES');
  const sections: Section[] = [];
  let chars = 0;
  for (let i = 1; i <= pdf.numPages && chars <= lim.maxChars; i++) {
    const page = await pdf.getPage(i);
    const content = await page.getTextContent();
    // pdf.js puts the spaces it infers into the items and marks line ends: joined as they are,
    // a word split across items (a font change mid-word) stays one word.
    let text = '';
    for (const it of content.items) if ('str' in it) text += it.str + (it.hasEOL ? '\n' : '');
    checkDecoded();
    sections.push({ headingPath: [], page: i, text: text.replace(/[ \t]+/g, ' ') });
    chars += text.length;
    page.cleanup();
  }
  const info = (await pdf.getMetadata().catch(() => undefined))?.info as { Title?: unknown } | undefined;
  checkDecoded();
  return { title: typeof info?.Title === 'string' ? info.Title : '', sections, pages: pdf.numPages };
}

/** HTML as the crawler reads a page (here, on the parse thread: no extraction thread of its own). */
function parseHtml(bytes: Buffer): ParsedDocument {
  const readable = htmlToMarkdown(decodeText(bytes), 'https://upload.invalid/');
  return { title: readable.title, sections: markdownSections(readable.markdown) };
}

/** DOCX through mammoth's HTML: headings become the path, paragraphs, lists and tables the text. */
async function parseDocx(bytes: Buffer, lim: ParseCaps): Promise<ParsedDocument> {
  await checkZip(bytes, lim, new InflateBudget(lim.maxInflatedBytes));
  // Images are not text: an empty src spares base64-encoding every picture into the HTML.
  const mammoth = mammothLib();
  const { JSDOM, VirtualConsole } = jsdom();
  const convertImage = mammoth.images.imgElement(() => Promise.resolve({ src: '' }));
  const { value: html } = await mammoth.convertToHtml({ buffer: bytes }, { convertImage });
  const dom = new JSDOM(`<!doctype html><body>${html}</body>`, { virtualConsole: new VirtualConsole() });
  const headings: string[] = [];
  const sections: Section[] = [];
  let blocks: string[] = [];
  const flush = () => {
    if (blocks.length) sections.push({ headingPath: headings.filter(Boolean), text: blocks.join('\n\n') });
    blocks = [];
  };
  for (const el of Array.from(dom.window.document.body.children)) {
    const level = Number(/^H([1-6])$/.exec(el.tagName)?.[1] ?? 0);
    if (level) {
      flush();
      headings.splice(level - 1);
      while (headings.length < level - 1) headings.push(''); // a skipped level leaves no gap in the path
      headings.push(oneLine(el.textContent ?? ''));
    } else if (el.tagName === 'TABLE') blocks.push(tableText(el as HTMLTableElement));
    else if (el.tagName === 'UL' || el.tagName === 'OL') blocks.push(listText(el));
    else blocks.push(blockText(el));
  }
  flush();
  dom.window.close();
  return { title: '', sections };
}

const BLOCK_TAGS = new Set(['P', 'DIV', 'LI', 'UL', 'OL', 'TABLE', 'TR', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'BLOCKQUOTE', 'PRE']);

/** An element's text with line breaks where the document has them (textContent glues
 *  paragraphs and <br>-separated lines into one word). */
function blockText(el: Element): string {
  let out = '';
  const walk = (n: Node) => {
    if (n.nodeType === 3) out += n.nodeValue ?? '';
    else if (n.nodeName === 'BR') out += '\n';
    else {
      const block = BLOCK_TAGS.has(n.nodeName);
      if (block) out += '\n';
      n.childNodes.forEach(walk);
      if (block) out += '\n';
    }
  };
  walk(el);
  return out.split('\n').map(oneLine).filter(Boolean).join('\n');
}

/** A table as "a | b | c" rows; only this table's own rows (a nested table stays in its cell). */
function tableText(table: HTMLTableElement): string {
  return Array.from(table.rows)
    .map((row) =>
      Array.from(row.cells)
        .map((cell) => blockText(cell).replace(/\n/g, ' '))
        .join(' | '),
    )
    .filter((line) => line.replace(/[ |]/g, ''))
    .join('\n');
}

/** A list as "- item" lines, nested lists indented under their item, ordered ones numbered. */
function listText(list: Element, depth = 0): string {
  const lines: string[] = [];
  let n = 0;
  for (const li of Array.from(list.children)) {
    if (li.tagName !== 'LI') continue;
    n++;
    const own = li.cloneNode(true) as Element;
    const nested = Array.from(li.children).filter((c) => c.tagName === 'UL' || c.tagName === 'OL');
    for (const c of Array.from(own.children)) if (c.tagName === 'UL' || c.tagName === 'OL') c.remove();
    const marker = list.tagName === 'OL' ? `${n}.` : '-';
    lines.push(`${'  '.repeat(depth)}${marker} ${blockText(own).replace(/\n/g, ' ')}`);
    for (const sub of nested) lines.push(listText(sub, depth + 1));
  }
  return lines.join('\n');
}

// PPTX XML read in document order (preserveOrder), values as written: no number parsing ("007",
// "1.50" stay text) and no trimming (the spaces between runs are the spaces between words).
const xml = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
});
type XNode = Record<string, unknown>;
const tagOf = (n: XNode) => Object.keys(n).find((k) => k !== ':@') ?? '';
const childrenOf = (n: XNode): XNode[] => (Array.isArray(n[tagOf(n)]) ? (n[tagOf(n)] as XNode[]) : []);
const attrsOf = (n: XNode) => (n[':@'] ?? {}) as Record<string, string>;

/** Every element called `tag` under `nodes`, in document order, not looking inside a match. */
function findAll(nodes: XNode[], tag: string, out: XNode[] = []): XNode[] {
  for (const n of nodes) {
    if (tagOf(n) === tag) out.push(n);
    else findAll(childrenOf(n), tag, out);
  }
  return out;
}

/** A DrawingML paragraph's text: its runs and fields (a:t) in order, a:br as a line break. */
function paragraphText(p: XNode): string {
  let out = '';
  const walk = (n: XNode) => {
    const tag = tagOf(n);
    if (tag === 'a:br') out += '\n';
    else if (tag === 'a:t')
      out += childrenOf(n)
        .map((c) => String(c['#text'] ?? ''))
        .join('');
    else childrenOf(n).forEach(walk);
  };
  walk(p);
  return out.trim();
}

/** The text of one shape or table, by paragraph (tables as "a | b" rows). */
function shapeText(node: XNode): string[] {
  const tables = findAll([node], 'a:tbl');
  if (tables.length) {
    return tables.flatMap((t) =>
      findAll(childrenOf(t), 'a:tr').map((tr) =>
        findAll(childrenOf(tr), 'a:tc')
          .map((tc) => findAll(childrenOf(tc), 'a:p').map(paragraphText).filter(Boolean).join(' '))
          .join(' | '),
      ),
    );
  }
  return findAll([node], 'a:p').map(paragraphText).filter(Boolean);
}

/** PPTX: one section per slide (slides in file-number order), the title placeholder as heading. */
async function parsePptx(bytes: Buffer, lim: ParseCaps): Promise<ParsedDocument> {
  const entries = await checkZip(bytes, lim, new InflateBudget(lim.maxInflatedBytes));
  capCount(countEntries(entries, /^ppt\/slides\/slide\d+\.xml$/), lim.maxPages, 'slides', 'KB_PARSE_MAX_PAGES');
  const zip = await JSZip.loadAsync(bytes);
  const slides = Object.keys(zip.files)
    .map((f) => /^ppt\/slides\/slide(\d+)\.xml$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]));
  if (!slides.length) throw new DocumentUnreadable('PPTX: the file has no slides');
  const sections: Section[] = [];
  for (const m of slides) {
    const tree = xml.parse(await zip.file(m[0])!.async('string')) as XNode[];
    let title = '';
    const body: string[] = [];
    const shapes = findAll(tree, 'p:spTree').flatMap((t) => childrenOf(t).flatMap(flattenGroups));
    for (const shape of shapes) {
      const ph = findAll([shape], 'p:ph')[0];
      const type = ph ? attrsOf(ph).type : undefined;
      const text = shapeText(shape);
      if (!title && (type === 'title' || type === 'ctrTitle')) title = text.join(' ');
      else body.push(...text);
    }
    // Decks made without layout placeholders: a short first text box is the title by convention.
    if (!title && body.length > 1 && body[0]!.length <= 150 && !body[0]!.includes('\n')) title = body.shift()!;
    sections.push({ headingPath: title ? [title] : [], page: Number(m[1]), text: body.join('\n') || title });
  }
  return { title: '', sections, pages: slides.length };
}

/** A group shape's members in place of the group, so each keeps its own placeholder. */
function flattenGroups(n: XNode): XNode[] {
  const tag = tagOf(n);
  if (tag === 'p:sp' || tag === 'p:graphicFrame') return [n];
  if (tag === 'p:grpSp') return childrenOf(n).flatMap(flattenGroups);
  // Content newer than the file's baseline comes twice (Choice, Fallback): the first is read.
  if (tag === 'mc:AlternateContent') return childrenOf(childrenOf(n).find((c) => tagOf(c) === 'mc:Choice') ?? {}).flatMap(flattenGroups);
  return [];
}

const countEntries = (entries: ZipEntry[], name: RegExp) => entries.filter((e) => name.test(e.name)).length;

/** XLSX: a section per sheet under the sheet's name, each row as "header: value" pairs. */
async function parseXlsx(bytes: Buffer, lim: ParseCaps): Promise<ParsedDocument> {
  const entries = await checkZip(bytes, lim, new InflateBudget(lim.maxInflatedBytes));
  capCount(countEntries(entries, /^xl\/worksheets\/[^/]+\.xml$/), lim.maxSheets, 'worksheets', 'KB_PARSE_MAX_SHEETS');
  const book = new (excel().Workbook)();
  await book.xlsx.load(bytes as unknown as ArrayBuffer);
  capCount(book.worksheets.length, lim.maxSheets, 'worksheets', 'KB_PARSE_MAX_SHEETS');
  const sections: Section[] = [];
  for (const sheet of book.worksheets) {
    capCount(sheet.actualRowCount, lim.maxRows, `rows in sheet "${sheet.name}"`, 'KB_PARSE_MAX_ROWS');
    capCount(sheet.columnCount, lim.maxColumns, `columns in sheet "${sheet.name}"`, 'KB_PARSE_MAX_COLUMNS');
    const rows: string[][] = [];
    sheet.eachRow({ includeEmpty: false }, (row) => {
      capCount(row.cellCount, lim.maxColumns, `columns in sheet "${sheet.name}"`, 'KB_PARSE_MAX_COLUMNS');
      // row.values is 1-based and sparse: made dense so empty cells keep their column.
      const values = Array.from({ length: row.cellCount }, (_, i) => cellText(row.getCell(i + 1).value));
      if (values.some((v) => v !== '')) rows.push(values);
    });
    if (rows.length) sections.push({ headingPath: [sheet.name], text: renderRows(rows, lim.maxChars) });
  }
  return { title: book.title ?? '', sections };
}

function cellText(v: ExcelJS.CellValue | undefined): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) {
    const iso = v.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 16).replace('T', ' ');
  }
  if (typeof v === 'object') {
    if ('richText' in v) return oneLine(v.richText.map((r) => r.text).join(''));
    if ('error' in v) return String(v.error);
    if ('formula' in v || 'sharedFormula' in v) return cellText(v.result as ExcelJS.CellValue);
    if ('text' in v) return oneLine(typeof v.text === 'string' ? v.text : cellText(v.text as ExcelJS.CellValue));
    return '';
  }
  return oneLine(String(v));
}

/**
 * Rows as "header: value; header: value" lines under the first non-empty row: one line per row,
 * so a chunk never separates a value from its column name, and a model reads it as it would a record.
 */
function renderRows(rows: string[][], maxChars: number): string {
  const [header, ...data] = rows;
  if (!header) return '';
  if (!data.length) return header.join(' | ');
  const lines: string[] = [];
  let size = 0;
  for (const r of data) {
    const line = r
      .map((v, i) => (v === '' ? '' : `${header[i] || `column ${i + 1}`}: ${v}`))
      .filter(Boolean)
      .join('; ');
    lines.push(line);
    size += line.length + 1;
    if (size > maxChars) break;
  }
  return lines.join('\n');
}

/**
 * CSV by RFC 4180: quoted fields, doubled quotes, CRLF, newlines inside quotes. The delimiter is
 * the one of , ; tab most used in the first line (spreadsheets in many locales write ";"). A file
 * past the row or column cap is refused as soon as the parser reaches the one too many.
 */
export function parseCsv(
  text: string,
  delimiter = sniffDelimiter(text),
  caps: Pick<ParseCaps, 'maxRows' | 'maxColumns'> = DEFAULT_PARSE_CAPS,
): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field.trim());
    field = '';
    capCount(row.length, caps.maxColumns, 'columns in a row', 'KB_PARSE_MAX_COLUMNS', true);
  };
  const endRow = () => {
    endField();
    if (row.some((f) => f !== '')) rows.push(row);
    row = [];
    capCount(rows.length, caps.maxRows, 'rows', 'KB_PARSE_MAX_ROWS', true);
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch !== '"') field += ch;
      else if (text[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (ch === '"' && field.trim() === '') {
      quoted = true;
      field = '';
    } else if (ch === delimiter) {
      endField();
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else field += ch;
  }
  endRow();
  return rows;
}

function sniffDelimiter(text: string): string {
  let firstLine = '';
  let quoted = false;
  for (const ch of text.slice(0, 10_000)) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted) firstLine += ch;
  }
  const count = (d: string) => firstLine.split(d).length - 1;
  return [',', ';', '\t'].reduce((best, d) => (count(d) > count(best) ? d : best));
}

/** Markdown by ATX headings: each heading's text is a section under the path of headings above it. */
export function markdownSections(markdown: string): Section[] {
  const sections: Section[] = [];
  const headings: string[] = [];
  let lines: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    const text = lines.join('\n').trim();
    if (text) sections.push({ headingPath: headings.filter(Boolean), text });
    lines = [];
  };
  for (const line of markdown.split(/\r?\n/)) {
    // A "#" inside a fenced code block is a comment, not a heading.
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (!fence || marker.startsWith(fence))) fence = fence ? undefined : marker;
    const h = fence ? null : /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (!h) {
      lines.push(line);
      continue;
    }
    flush();
    const level = h[1]!.length;
    headings.splice(level - 1);
    while (headings.length < level - 1) headings.push('');
    headings.push(plainInline(h[2] ?? ''));
  }
  flush();
  return sections;
}

/** A heading's words without inline Markdown: links as their text, no emphasis or code marks. */
function plainInline(s: string): string {
  return oneLine(
    s
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/(\*\*|\*|`)(\S(?:.*?\S)?)\1/g, '$2')
      .replace(/(?<!\w)(__|_)(\S(?:.*?\S)?)\1(?!\w)/g, '$2')
      .replace(/\\([\\`*_{}[\]()#+\-.!|])/g, '$1'),
  );
}
