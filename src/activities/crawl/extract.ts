// Turns a fetched body into readable Markdown: Readability + Turndown for HTML (no scripts, no
// subresources), pdf.js text for PDF, pretty JSON, and text types as they are.
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { publicationDay } from '../../shared/time-range';
import { extractThread, OFF_THREAD_BYTES } from './extract-thread';
import type { Readable } from './readable';

export type { Readable } from './readable';

/** Meta tags that carry a publication date, most specific first (Open Graph article, schema.org
 *  microdata, Highwire/Google Scholar, Dublin Core, the plain ones). */
const DATE_META = [
  'meta[property="article:published_time"]',
  'meta[name="article:published_time"]',
  'meta[property="og:published_time"]',
  'meta[itemprop="datePublished"]',
  'meta[name="citation_publication_date"]',
  'meta[name="citation_date"]',
  'meta[name="dc.date.issued"]',
  'meta[name="DC.date.issued"]',
  'meta[name="dcterms.date"]',
  'meta[name="DC.date"]',
  'meta[name="dc.date"]',
  'meta[name="pubdate"]',
  'meta[name="publish-date"]',
  'meta[name="publication_date"]',
  'meta[name="date"]',
];

/** `datePublished` anywhere in a JSON-LD value (an object, an array, an `@graph`). */
function jsonLdDate(value: unknown, depth = 0): string | undefined {
  if (depth > 4 || value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (const v of value) {
      const d = jsonLdDate(v, depth + 1);
      if (d) return d;
    }
    return undefined;
  }
  const o = value as Record<string, unknown>;
  if (typeof o.datePublished === 'string') return o.datePublished;
  return jsonLdDate(o['@graph'], depth + 1);
}

/** A date as pages write it: ISO, or with slashes (`2024/03/05`, Highwire's citation dates). */
const dayOf = (raw: string | null | undefined) =>
  publicationDay(
    raw
      ?.trim()
      .replace(
        /^(\d{4})\/(\d{1,2})\/(\d{1,2})/,
        (_, y: string, m: string, d: string) => `${y}-${m.padStart(2, '0')}-${d.padStart(2, '0')}`,
      ),
  );

/**
 * The publication date a page states: its meta tags, then JSON-LD `datePublished`, then a
 * `<time datetime>` (one marked as the publication date, one in the article, the first). A page
 * that states none, or nothing that reads as a date, has none (its date is unknown).
 */
export function publishedDate(doc: Document): string | undefined {
  for (const sel of DATE_META) {
    const d = dayOf(doc.querySelector(sel)?.getAttribute('content'));
    if (d) return d;
  }
  for (const script of doc.querySelectorAll('script[type="application/ld+json"]')) {
    try {
      const d = dayOf(jsonLdDate(JSON.parse(script.textContent ?? '')));
      if (d) return d;
    } catch {
      /* a broken block says nothing */
    }
  }
  for (const sel of ['time[itemprop="datePublished"]', 'time[pubdate]', 'article time[datetime]', 'time[datetime]']) {
    const d = dayOf(doc.querySelector(sel)?.getAttribute('datetime'));
    if (d) return d;
  }
  return undefined;
}

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
turndown.remove(['script', 'style', 'noscript', 'iframe', 'form']);

/** The address relative links resolve against: the page's `<base href>`, else the page's own. */
function baseOf(doc: Document, url: string): string {
  const href = doc.querySelector('base[href]')?.getAttribute('href');
  try {
    return href ? new URL(href, url).href : url;
  } catch {
    return url;
  }
}

/**
 * HTML to Markdown with linkedom, a DOM without a browser window (no scripts, no subresources,
 * about a fifth of jsdom's time and memory per page: bench/extract.ts). Readability resolves
 * relative links against the document's base address, which linkedom does not know: it is set.
 */
export function htmlToMarkdown(html: string, url: string): Readable {
  const { document } = parseHTML(html) as unknown as { document: Document };
  const published = publishedDate(document);
  const copy = document.cloneNode(true) as Document;
  const base = baseOf(document, url);
  for (const [key, value] of [
    ['baseURI', base],
    ['documentURI', url],
    ['URL', url],
  ] as const) {
    Object.defineProperty(copy, key, { value, configurable: true });
  }
  const article = new Readability(copy, { charThreshold: 100 }).parse();
  const title = (article?.title || document.title || '').trim();
  const markdown = article?.content ? turndown.turndown(article.content) : turndown.turndown(document.body?.innerHTML ?? '');
  return { title, markdown: markdown.replace(/\n{3,}/g, '\n\n').trim(), ...(published ? { published } : {}) };
}

export async function pdfToText(data: Buffer, maxPages = 50): Promise<Readable> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const doc = await pdfjs.getDocument({
    data: new Uint8Array(data),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  }).promise;
  const pages: string[] = [];
  for (let i = 1; i <= Math.min(doc.numPages, maxPages); i++) {
    const page = await doc.getPage(i);
    const content = await page.getTextContent();
    pages.push(
      content.items
        .map((it) => ('str' in it ? it.str : ''))
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
  }
  const meta = await doc.getMetadata().catch(() => undefined);
  const info = meta?.info as { Title?: string } | undefined;
  await doc.destroy();
  return { title: info?.Title ?? '', markdown: pages.filter(Boolean).join('\n\n') };
}

export async function toReadable(body: Buffer, contentType: string, url: string): Promise<Readable> {
  if (contentType === 'text/html' || contentType === 'application/xhtml+xml') {
    // A large page is parsed on the extraction thread (extract-thread.ts), a small one here.
    return body.length >= OFF_THREAD_BYTES
      ? extractThread.htmlToMarkdown(body.toString('utf8'), url)
      : htmlToMarkdown(body.toString('utf8'), url);
  }
  if (contentType === 'application/pdf') return pdfToText(body);
  if (contentType === 'application/json') {
    let text = body.toString('utf8');
    try {
      text = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      /* keep it as it came */
    }
    return { title: '', markdown: `\`\`\`json\n${text}\n\`\`\`` };
  }
  return { title: '', markdown: body.toString('utf8') };
}
