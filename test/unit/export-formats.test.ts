// The exports rendered from a report as data: the HTML file's reference lists written from the data
// (escaped, anchored, cited entries only as citation targets, out of reach of a tag the text leaves
// open), and every format of a report stored before reports were data, and of one with a coder
// step's program in monospace (the PDF's standard font passes its file access policy).
import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { reportDocx } from '../../src/api/export/docx';
import { reportHtml } from '../../src/api/export/html';
import { reportPdf } from '../../src/api/export/pdf';
import { reportPptx } from '../../src/api/export/pptx';
import { legacyDoc, type ReportDoc } from '../../src/shared/report-doc';

const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]),
  Buffer.from([0, 0, 0x04, 0xb0, 0, 0, 0x03, 0x20, 8, 2, 0, 0, 0]),
]);
const chart = '/v1/research/r/artifacts/a1.png';
const cover = { question: 'Why?', date: new Date('2026-01-02T00:00:00Z') };

const doc: ReportDoc = {
  title: 'Prices <fell>',
  notes: [{ text: 'A note of the run.', kind: 'run' }],
  sections: [
    { heading: 'Executive summary', markdown: 'Prices fell [1, 2] and rose [3] in <div class="x">an open block' },
    { heading: 'Analysis', markdown: '<details><summary>Program (ok)</summary>\n\n```python\nif x:\n    y()\n```\n</details>' },
  ],
  charts: [{ artifactId: 'a1.png', path: chart }],
  references: [
    { n: 1, sourceId: 'S1', url: 'https://a.example/p?q=1&r="2"', title: 'A <script>alert(1)</script> & "co"', cited: true },
    { n: 2, sourceId: 'S2', url: 'javascript:alert(1)', title: 'Not a web page', cited: true },
    { n: 3, sourceId: 'S3', url: 'https://c.example', title: 'Only read [1]', cited: false },
  ],
};

describe('the HTML export of a report as data', () => {
  const html = reportHtml({ title: doc.title, doc }, new Map([[chart, { contentType: 'image/png', bytes: png }]]));
  const page = new JSDOM(html).window.document;

  it('lists the cited references from the data, anchored, their titles and addresses as text and one link', () => {
    const items = [...page.querySelectorAll('ol.references > li')];
    expect(items.map((li) => li.id)).toEqual(['ref-1', 'ref-2']);
    expect(items[0]!.textContent).toBe('A <script>alert(1)</script> & "co"');
    expect(items[0]!.querySelector('a')!.getAttribute('href')).toBe('https://a.example/p?q=1&r=%222%22');
    expect(items[0]!.querySelector('a')!.getAttribute('rel')).toBe('noopener noreferrer');
    // A source whose address is not http(s) is listed as text.
    expect(items[1]!.querySelector('a')).toBeNull();
    expect(page.querySelectorAll('script')).toHaveLength(0);
    // Not inside the block the text leaves open.
    expect(page.querySelector('ol.references')!.parentElement!.tagName).toBe('BODY');
  });

  it('links the citations of cited references only; the consulted one is listed apart', () => {
    const cites = [...page.querySelectorAll('a.cite')].map((a) => a.getAttribute('href'));
    expect(cites).toEqual(['#ref-1', '#ref-2']);
    expect(page.body.textContent).toContain('rose [3]');
    const consulted = page.querySelector('ul.consulted > li')!;
    expect(consulted.textContent).toBe('Only read [1]');
    expect(consulted.querySelector('a.cite')).toBeNull();
    expect([...page.querySelectorAll('h2')].map((h) => h.textContent)).toEqual([
      'Executive summary',
      'Analysis',
      'Charts',
      // The run's notes after the findings, in a section of their own.
      'Notes on this run',
      'References',
      'Also consulted',
    ]);
    expect(page.querySelector('h2 + blockquote')?.textContent?.trim()).toBe('A note of the run.');
  });

  it('inlines the charts listed after the body and keeps the title escaped and the program collapsible', () => {
    expect(page.querySelector('img')!.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    expect(page.title).toBe('Prices <fell>');
    expect(page.querySelector('h1')!.textContent).toBe('Prices <fell>');
    expect(page.querySelector('details > summary')!.textContent).toBe('Program (ok)');
    expect(page.querySelector('details pre code')!.textContent).toBe('if x:\n    y()\n');
  });
});

describe('every format', () => {
  const old = legacyDoc(
    'Old',
    '# Old\n\n> A note.\n\nCosts fell [1].\n\n## References\n\n1. [A](https://a.example)\n\n## Also consulted\n\n- [B](https://b.example)\n',
  );

  it('exports a report stored before reports were data as its text', async () => {
    const report = { title: 'Old', doc: old };
    const html = reportHtml(report, new Map());
    const page = new JSDOM(html).window.document;
    expect([...page.querySelectorAll('h2')].map((h) => h.textContent)).toEqual(['References', 'Also consulted']);
    expect(page.querySelectorAll('a.cite, [id^="ref-"]')).toHaveLength(0);
    expect((await reportPdf(report, new Map())).subarray(0, 5).toString()).toBe('%PDF-');
    expect((await reportDocx(report, new Map())).subarray(0, 2).toString()).toBe('PK');
    expect((await reportPptx(report, cover, new Map())).subarray(0, 2).toString()).toBe('PK');
  });

  it('exports a report with references, a chart and a program', async () => {
    const report = { title: doc.title, locale: 'en', doc };
    const artifacts = new Map([[chart, { contentType: 'image/png', bytes: png }]]);
    expect((await reportPdf(report, new Map())).subarray(0, 5).toString()).toBe('%PDF-');
    expect((await reportDocx(report, artifacts)).subarray(0, 2).toString()).toBe('PK');
    expect((await reportPptx(report, cover, artifacts)).subarray(0, 2).toString()).toBe('PK');
  });
});
