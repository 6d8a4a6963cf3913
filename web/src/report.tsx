// Read: the report rendered from Markdown (marked), sanitised (DOMPurify) before it touches the
// page; each citation [n] a button that shows its source (title, address, the evidence the run
// kept) beside the text; charts fetched with the key; downloads as Markdown, HTML and PDF.
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useEffect, useRef, useState } from 'preact/hooks';
import { client, draftMarkdown, plural, type DraftPart } from './api';
import type { ReportJson, SourceView } from '../../src/api/contract';
import { Versions } from './versions';

export function Report({ id }: { id: string }) {
  const [report, setReport] = useState<ReportJson | undefined>();
  const [source, setSource] = useState<(SourceView & { n: number }) | undefined>();
  const [error, setError] = useState('');
  // The report version shown (1: the run's own; rewrites are 2, 3, …).
  const [version, setVersion] = useState(1);
  const body = useRef<HTMLDivElement>(null);
  const of = version > 1 ? version : undefined;

  useEffect(() => {
    setSource(undefined);
    client.research.reportJson(id, of).then(setReport, (err: Error) => setError(err.message));
  }, [id, version]);

  useEffect(() => {
    const el = body.current;
    if (!report || !el) return;
    const html = DOMPurify.sanitize(marked.parse(report.markdown, { async: false }), {
      FORBID_TAGS: ['style', 'form', 'input'],
      FORBID_ATTR: ['style'],
    });
    el.innerHTML = html;
    linkCitations(el, report.references.length);
    const urls: string[] = [];
    for (const img of [...el.querySelectorAll('img')]) {
      const src = img.getAttribute('src') ?? '';
      img.removeAttribute('src');
      if (!src.startsWith(client.paths.artifacts(id))) continue; // only the run's own charts are shown
      void client.download(src).then((b) => {
        const url = URL.createObjectURL(b);
        urls.push(url);
        img.src = url;
      });
    }
    for (const a of [...el.querySelectorAll('a[href^="http"]')]) {
      a.setAttribute('rel', 'noopener noreferrer');
      a.setAttribute('target', '_blank');
    }
    return () => urls.forEach((u) => URL.revokeObjectURL(u));
  }, [report]);

  const open = async (n: number) => {
    const ref = report?.references.find((r) => r.n === n);
    if (!ref?.sourceId) return;
    try {
      const s = await client.research.source(id, ref.sourceId);
      setSource({ ...s, n });
    } catch (err) {
      setError((err as Error).message);
    }
  };

  const download = async (format: 'md' | 'html' | 'pdf' | 'docx' | 'pptx') => {
    try {
      const b = await client.research.reportFile(id, format, of);
      const a = document.createElement('a');
      a.href = URL.createObjectURL(b);
      a.download = version > 1 ? `report-v${version}.${format}` : `report.${format}`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (err) {
      setError((err as Error).message);
    }
  };

  if (error)
    return (
      <p class="error card" role="alert">
        {error}
      </p>
    );
  if (!report) return <p role="status">Loading the report…</p>;
  return (
    <div class="reader">
      <Versions id={id} version={version} onSelect={setVersion} />
      <article class="card report" aria-label="Report">
        <div class="row downloads">
          <span>Download:</span>
          <button type="button" class="link" onClick={() => void download('md')}>
            Markdown
          </button>
          <button type="button" class="link" onClick={() => void download('html')}>
            HTML
          </button>
          <button type="button" class="link" onClick={() => void download('pdf')}>
            PDF
          </button>
          <button type="button" class="link" onClick={() => void download('docx')}>
            Word
          </button>
          <button type="button" class="link" onClick={() => void download('pptx')}>
            Slides
          </button>
        </div>
        {report.grounding && <Grounding report={report} />}
        <div
          ref={body}
          onClick={(e) => {
            const t = e.target as HTMLElement;
            if (t.matches('button.cite')) void open(Number(t.dataset.n));
          }}
        />
      </article>
      {source && (
        <aside class="card source" aria-labelledby="source-title">
          <h2 id="source-title">
            [{source.n}] {source.title}
          </h2>
          <p>
            <a href={source.url} rel="noopener noreferrer" target="_blank">
              {source.url}
            </a>
          </p>
          <h3>What the run kept from it</h3>
          <p class="evidence">{source.evidence}</p>
          <button type="button" class="secondary" onClick={() => setSource(undefined)}>
            Close
          </button>
        </aside>
      )}
    </div>
  );
}

/**
 * The report (or a direct answer) as the model writes it, drawn again with each piece. A draft:
 * its citations are checked, numbered and linked to their sources before the report is stored,
 * so it shows no images or source buttons, and the page says so.
 */
export function DraftView({ parts }: { parts: DraftPart[] }) {
  const body = useRef<HTMLDivElement>(null);
  const answer = parts.length === 1 && parts[0]!.part === 'answer';
  const written = parts.every((p) => p.done);
  const markdown = draftMarkdown(parts);
  useEffect(() => {
    if (!body.current) return;
    body.current.innerHTML = DOMPurify.sanitize(marked.parse(markdown, { async: false }), {
      FORBID_TAGS: ['style', 'form', 'input', 'img'],
      FORBID_ATTR: ['style'],
    });
  }, [markdown]);
  const restarted = parts.some((p) => p.restarts > 0);
  return (
    <article class="card report draft" aria-label={answer ? 'Answer being written' : 'Draft being written'} aria-busy="true">
      <p class="notice" role="status">
        {answer
          ? 'The answer, as it is written…'
          : written
            ? 'Draft written: its citations are being checked against the sources. The checked report replaces it here.'
            : 'Draft, as the model writes it. Citations are checked against the sources before the report is final.'}
        {restarted && ' (Part of it started again: the model was asked to write it once more.)'}
      </p>
      <div ref={body} />
    </article>
  );
}

/** What code checked: citations against their sources' evidence, made-up numbers and links. */
function Grounding({ report }: { report: ReportJson }) {
  const g = report.grounding!;
  const changes = [...(report.citationChecks ?? []), ...(report.removedLinks ?? [])];
  return (
    <details class="grounding">
      <summary>
        {g.checked} of {g.citations} citations checked against their sources: {g.supported} supported, {g.flagged} flagged,{' '}
        {g.removed + g.unresolved} removed; {plural(g.linksRemoved, 'made-up link')} removed
        {g.snippetCitations ? `; ${plural(g.snippetCitations, 'citation')} of a search snippet removed (the page was not read)` : ''}
      </summary>
      {changes.length ? (
        <ul>
          {(report.citationChecks ?? []).map((c, i) => (
            <li key={`c${i}`}>
              [{c.n}] {c.action}: “{c.claim}” ({c.reason})
            </li>
          ))}
          {(report.removedLinks ?? []).map((l, i) => (
            <li key={`l${i}`}>
              link removed: {l.url} ({l.reason})
            </li>
          ))}
        </ul>
      ) : (
        <p>Nothing was changed.</p>
      )}
    </details>
  );
}

/** Each [n] of a known reference in the text becomes a button that opens the source. */
function linkCitations(root: HTMLElement, count: number): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n as Text);
  for (const t of texts) {
    if (t.parentElement?.closest('code, pre, a')) continue;
    const value = t.nodeValue ?? '';
    if (!/\[\d/.test(value)) continue;
    const frag = document.createDocumentFragment();
    let last = 0;
    for (const m of value.matchAll(/\[(\d+)\]/g)) {
      const n = Number(m[1]);
      if (n < 1 || n > count) continue;
      frag.append(value.slice(last, m.index));
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'cite';
      b.dataset.n = String(n);
      b.textContent = `[${n}]`;
      b.setAttribute('aria-label', `Source ${n}`);
      frag.append(b);
      last = m.index! + m[0].length;
    }
    frag.append(value.slice(last));
    t.replaceWith(frag);
  }
}
