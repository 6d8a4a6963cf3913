// A report as one self-contained, sanitised HTML file: its Markdown (title, notes, body, charts)
// rendered by marked and its reference lists written from the report's data (escaped), the whole
// cleaned by DOMPurify (the report's text comes from models and web pages: no script, no handler, no
// outside resource survives), each citation [n] a link to its reference, the run's charts inlined as
// data URLs, the style inline. Served with a CSP that allows nothing else.
import type createDOMPurifyType from 'dompurify';
import { marked } from 'marked';
import { lazyRequire } from '../../infra/lazy';
import type { ReportDoc } from '../../shared/report-doc';
import { exportMarkdown, referenceEntries, type ReferenceEntry } from './tokens';

const jsdom = lazyRequire<typeof import('jsdom')>('jsdom');
const dompurify = lazyRequire<typeof createDOMPurifyType>('dompurify');

/** What every export renders: the report as data, with the title its file carries and its language. */
export interface ExportableReport {
  title: string;
  locale?: string | undefined;
  doc: ReportDoc;
}

/** An image the report links by its API path (a chart): its bytes, to inline. */
export type ArtifactBytes = Map<string, { contentType: string; bytes: Buffer }>;

export const HTML_EXPORT_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";

const STYLE = `
body{font:16px/1.6 Georgia,'Times New Roman',serif;max-width:46rem;margin:2.5rem auto;padding:0 1.25rem;color:#1b1b1b;background:#fff}
h1,h2,h3{font-family:system-ui,sans-serif;line-height:1.25}h1{font-size:1.9rem}h2{font-size:1.35rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:1rem 0;font:14px/1.4 system-ui,sans-serif}th,td{border:1px solid #bbb;padding:.35rem .6rem;text-align:left}th{background:#f1f3f5}
blockquote{margin:1rem 0;padding:.5rem 1rem;border-left:4px solid #c7d2fe;background:#f8fafc;color:#334155}
img{max-width:100%;height:auto}a{color:#1d4ed8}a.cite{text-decoration:none;font-weight:600}
code{background:#f1f3f5;padding:.1rem .25rem;border-radius:3px}pre{background:#f1f3f5;padding:.75rem;overflow:auto}
ol.references li{margin:.25rem 0;word-break:break-word}:target{background:#fef9c3}`;

export function reportHtml(report: ExportableReport, artifacts: ArtifactBytes): string {
  const { JSDOM } = jsdom();
  const window = new JSDOM('').window;
  const purify = dompurify()(window);
  const { cited, consulted, citable } = referenceEntries(report.doc);
  const sanitize = (html: string) =>
    purify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input'], FORBID_ATTR: ['style'] });
  // The text, then the reference lists from the data (each cited entry anchored ref-n for its
  // citations), each cleaned on its own: a tag the text leaves open cannot take the lists in.
  const body = sanitize(marked.parse(exportMarkdown(report.doc), { async: false, gfm: true }));
  const doc = new JSDOM(`<body>${body}${sanitize(referencesHtml(cited, consulted))}</body>`).window.document;

  // Citations in the text link to the cited entries.
  const walker = doc.createTreeWalker(doc.body, 4 /* NodeFilter.SHOW_TEXT */);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n as Text);
  for (const t of texts) {
    if (t.parentElement?.closest('code, pre, a, ol.references, ul.consulted')) continue;
    const value = t.nodeValue ?? '';
    if (!/\[\d+(?:\s*,\s*\d+)*\]/.test(value)) continue;
    const frag = doc.createDocumentFragment();
    let last = 0;
    for (const m of value.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
      frag.append(value.slice(last, m.index));
      const nums = m[1]!.split(',').map((x) => Number(x.trim()));
      frag.append('[');
      nums.forEach((n, i) => {
        if (i) frag.append(', ');
        if (citable.has(n)) {
          const a = doc.createElement('a');
          a.href = `#ref-${n}`;
          a.className = 'cite';
          a.textContent = String(n);
          frag.append(a);
        } else frag.append(String(n));
      });
      frag.append(']');
      last = m.index! + m[0].length;
    }
    frag.append(value.slice(last));
    t.replaceWith(frag);
  }
  // Charts inline; any other image (outside the run) is dropped, so the file loads nothing.
  for (const img of [...doc.querySelectorAll('img')]) {
    const a = artifacts.get(img.getAttribute('src') ?? '');
    if (a) img.setAttribute('src', `data:${a.contentType};base64,${a.bytes.toString('base64')}`);
    else img.replaceWith(doc.createTextNode(img.getAttribute('alt') ?? ''));
  }
  // Links open outside the report and tell the target nothing.
  for (const a of [...doc.querySelectorAll('a[href^="http"]')]) a.setAttribute('rel', 'noopener noreferrer');

  const lang = (report.locale ?? 'en').replace(/[^A-Za-z-]/g, '') || 'en';
  const title = escapeHtml(report.title);
  return `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${HTML_EXPORT_CSP}">
<title>${title}</title><style>${STYLE}</style></head>
<body>${doc.body.innerHTML}</body></html>
`;
}

/** The "References" and "Also consulted" lists as HTML, every title and address escaped. */
function referencesHtml(cited: ReferenceEntry[], consulted: ReferenceEntry[]): string {
  const entry = (r: ReferenceEntry) => (r.href ? `<a href="${escapeHtml(r.href)}">${escapeHtml(r.title)}</a>` : escapeHtml(r.title));
  const refs = cited.map((r) => `<li id="ref-${r.n}">${entry(r)}</li>`).join('\n');
  const others = consulted.map((r) => `<li>${entry(r)}</li>`).join('\n');
  return (
    (cited.length ? `\n<h2>References</h2>\n<ol class="references">\n${refs}\n</ol>\n` : '') +
    (consulted.length ? `\n<h2>Also consulted</h2>\n<ul class="consulted">\n${others}\n</ul>\n` : '')
  );
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
