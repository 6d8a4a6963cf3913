// When a page's server HTML is not the page: the rule that sends a page to the browser queue.
//
// A page needs a browser when its HTML carries scripts and what Readability makes of it has fewer
// than THIN_TEXT_CHARS characters of prose (link targets, image references and Markdown marks not
// counted). Pages that render in the browser (React, Vue, Angular apps with an empty root div, pages
// that fetch their article as JSON) leave a title, a nav bar and a "please enable JavaScript"
// line; a short page without scripts is short as served, and a browser would not add to it.

/** Characters of readable prose below which a page with scripts is rendered in the browser. */
export const THIN_TEXT_CHARS = 400;

/** The reason a page sent to the browser carries until a browser has read it. */
export const NEEDS_BROWSER_REASON = 'the page renders its text with JavaScript';

/** The prose of readable Markdown: no link targets, images, emphasis marks or runs of spaces. */
export function proseOf(markdown: string): string {
  return markdown
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[#*_`>|-]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const SCRIPT_TAG = /<script\b([^>]*)>/gi;
/** Script elements that hold data, not code (JSON-LD, JSON, templates, import maps): they render nothing. */
const DATA_SCRIPT = /\btype\s*=\s*["']?\s*(application\/(ld\+)?json|text\/(x-)?template|importmap|speculationrules)/i;

/** Whether an HTML page's readable text is too thin for what its scripts may render. */
export function needsBrowser(contentType: string, body: Buffer, markdown: string): boolean {
  if (contentType !== 'text/html' && contentType !== 'application/xhtml+xml') return false;
  if (proseOf(markdown).length >= THIN_TEXT_CHARS) return false;
  return [...body.toString('utf8').matchAll(SCRIPT_TAG)].some((m) => !DATA_SCRIPT.test(m[1] ?? ''));
}
