// A report as one self-contained, sanitised HTML file: Markdown rendered by marked, cleaned by
// DOMPurify (the report's text comes from models and web pages: no script, no handler, no outside
// resource survives), each citation [n] a link to its reference, the run's charts inlined as data
// URLs, the style inline. Served with a CSP that allows nothing else.
import type createDOMPurifyType from 'dompurify';
import { marked } from 'marked';
import { lazyRequire } from '../../infra/lazy';

const jsdom = lazyRequire<typeof import('jsdom')>('jsdom');
const dompurify = lazyRequire<typeof createDOMPurifyType>('dompurify');

export interface ExportableReport {
  title: string;
  locale?: string | undefined;
  markdown: string;
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
  const raw = marked.parse(report.markdown, { async: false, gfm: true });
  const clean = purify.sanitize(raw, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input'], FORBID_ATTR: ['style'] });
  const doc = new JSDOM(`<body>${clean}</body>`).window.document;

  // The list under "References" gets an anchor per entry; citations in the text link to them.
  const refsHeading = [...doc.querySelectorAll('h2')].find((h) => /^references$/i.test(h.textContent?.trim() ?? ''));
  const refList = refsHeading?.nextElementSibling?.tagName === 'OL' ? refsHeading.nextElementSibling : undefined;
  const refCount = refList ? refList.children.length : 0;
  if (refList) {
    refList.classList.add('references');
    [...refList.children].forEach((li, i) => li.setAttribute('id', `ref-${i + 1}`));
  }
  const walker = doc.createTreeWalker(doc.body, 4 /* NodeFilter.SHOW_TEXT */);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n as Text);
  for (const t of texts) {
    if (t.parentElement?.closest('code, pre, a, ol.references')) continue;
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
        if (n >= 1 && n <= refCount) {
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

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
