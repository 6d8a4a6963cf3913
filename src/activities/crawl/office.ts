// Office files, CSV and PDFs found on the web (a statistics office's XLSX, a DOCX report, a PPTX
// deck, a PDF paper) read with the knowledge base's parsers and laid out as Markdown for the
// extractor, with the sheets, slides and headings as section headings. A file from the web is
// as hostile as an upload: it is parsed on the parse threads, under the same caps.
import { contentTypeOf, detectFormat, DocumentUnreadable, parseDocument, type DocFormat, type ParsedDocument } from '../knowledge/parse';
import type { DocumentParser } from '../knowledge/parse-thread';
import type { Readable } from './extract';
import { SkippedError } from './safe-fetch';
import { decodeOrKeep } from '../../shared/text';

const OFFICE: DocFormat[] = ['docx', 'pptx', 'xlsx', 'csv'];
/** The content types the crawler may fetch for these formats. */
export const OFFICE_CONTENT_TYPES = OFFICE.map(contentTypeOf);

/** Characters of a page's text kept for the extractor. */
const PAGE_CHARS = 400_000;
/** Pages of a PDF read for the extractor (a report's first fifty say what it is about). */
const PDF_PAGES = 50;

/** Parsing on the calling thread: for callers (tests) that have no parse threads. */
const ON_THIS_THREAD: DocumentParser = { parse: (bytes, format, name, caps) => parseDocument(bytes, format, name, caps) };

/** The page as Markdown when it is an Office file, CSV or PDF; undefined for anything else. */
export async function documentToReadable(
  body: Buffer,
  contentType: string,
  url: string,
  parser: DocumentParser = ON_THIS_THREAD,
): Promise<Readable | undefined> {
  const name = decodeOrKeep(new URL(url).pathname.split('/').pop() ?? '');
  const format = detectFormat(name, contentType, body.subarray(0, 4096));
  if (!format || !(OFFICE.includes(format) || format === 'pdf')) return undefined;
  let doc;
  try {
    doc = await parser.parse(body, format, name || 'document', { maxChars: PAGE_CHARS });
  } catch (err) {
    if (err instanceof DocumentUnreadable) throw new SkippedError(`unreadable ${format.toUpperCase()}: ${err.message}`);
    throw err;
  }
  return format === 'pdf' ? pdfReadable(doc) : officeReadable(doc, format);
}

/** A PDF as its first pages' text, one paragraph a page. */
function pdfReadable(doc: ParsedDocument): Readable {
  const pages = doc.sections.slice(0, PDF_PAGES).map((s) => s.text.replace(/\s+/g, ' ').trim());
  return { title: doc.title, markdown: pages.filter(Boolean).join('\n\n') };
}

/** An Office file's sections under their headings (with the slide or page). */
function officeReadable(doc: ParsedDocument, format: DocFormat): Readable {
  const parts: string[] = [];
  let last = '';
  for (const s of doc.sections) {
    const heading = [s.headingPath.join(' › '), s.page ? `(${format === 'pptx' ? 'slide' : 'page'} ${s.page})` : '']
      .filter(Boolean)
      .join(' ');
    if (heading && heading !== last) parts.push(`## ${heading}`);
    last = heading;
    parts.push(s.text);
  }
  return { title: doc.title, markdown: parts.join('\n\n') };
}
