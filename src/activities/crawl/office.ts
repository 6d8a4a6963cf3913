// Office files and CSV found on the web (a statistics office's XLSX, a DOCX report, a PPTX deck)
// read with the knowledge base's parsers and laid out as Markdown for the extractor, with the
// sheets, slides and headings as section headings.
import { contentTypeOf, detectFormat, DocumentUnreadable, parseDocument, type DocFormat } from '../knowledge/parse';
import type { Readable } from './extract';
import { SkippedError } from './safe-fetch';
import { decodeOrKeep } from '../../shared/text';

const OFFICE: DocFormat[] = ['docx', 'pptx', 'xlsx', 'csv'];
/** The content types the crawler may fetch for these formats. */
export const OFFICE_CONTENT_TYPES = OFFICE.map(contentTypeOf);

/** The page as Markdown when it is an Office file or CSV; undefined for anything else. */
export async function officeToReadable(body: Buffer, contentType: string, url: string): Promise<Readable | undefined> {
  const name = decodeOrKeep(new URL(url).pathname.split('/').pop() ?? '');
  const format = detectFormat(name, contentType, body.subarray(0, 4096));
  if (!format || !OFFICE.includes(format)) return undefined;
  let doc;
  try {
    doc = await parseDocument(body, format, name || 'document', { maxChars: 400_000 });
  } catch (err) {
    if (err instanceof DocumentUnreadable) throw new SkippedError(`unreadable ${format.toUpperCase()}: ${err.message}`);
    throw err;
  }
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
