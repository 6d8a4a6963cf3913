// The report as data: the body cut into sections and put back as it was, the Markdown rendered
// from the parts, the run's links made absolute for a download, and a report stored before.
import { describe, expect, it } from 'vitest';
import { assembleReport, type Finding } from '../../src/shared/report';
import { absoluteLinks, bodyMarkdown, legacyDoc, reportMarkdown, sectionsOf, type ReportDoc } from '../../src/shared/report-doc';

const body = [
  'Lead paragraph [1].',
  '',
  '## Executive summary',
  '',
  'Costs fell [1].',
  '',
  '## Method',
  '',
  '```python',
  '## not a heading: a comment in code',
  'def f(xs):',
  '    for x in xs:',
  '        if x:',
  '            return x',
  '```',
  '',
  '### A subsection stays in its section',
  '',
  'Text.',
].join('\n');

describe('the report as data', () => {
  it('cuts a body at its ## headings outside code, and puts it back as it was', () => {
    const sections = sectionsOf(body);
    expect(sections.map((s) => s.heading)).toEqual(['', 'Executive summary', 'Method']);
    expect(sections[2]!.markdown).toContain('## not a heading: a comment in code');
    expect(sections[2]!.markdown).toContain('\n            return x');
    expect(sections[2]!.markdown).toContain('### A subsection stays in its section');
    expect(bodyMarkdown({ sections })).toBe(body);
    expect(sectionsOf('## Only\n\nText.')).toEqual([{ heading: 'Only', markdown: 'Text.' }]);
  });

  it('is what assembly stores, and its Markdown is the stored Markdown', () => {
    const findings: Finding[] = [{ key: 'step/a', content: 'Made (artifact:chart.png) [S1].', sourceIds: ['S1', 'S2'] }];
    const refs = [
      { n: 1, sourceId: 'S1', url: 'https://a.example/', title: 'A' },
      { n: 2, sourceId: 'S2', url: 'https://b.example/', title: 'B' },
    ];
    const r = assembleReport({
      researchId: 'research-1',
      title: 'Costs',
      draft: '## Executive summary\n\nCosts fell [1].\n\n## Detail\n\nMore [9].',
      findings,
      refs,
      notes: ['Step b failed.', { text: 'Fallback (planner): code planned.', kind: 'fallback' }],
    });
    expect(r.markdown).toBe(reportMarkdown(r.doc));
    expect(r.doc.sections.map((s) => s.heading)).toEqual(['Executive summary', 'Detail']);
    expect(r.doc.notes.map((n) => n.kind)).toEqual(['run', 'fallback']);
    expect(r.doc.charts).toEqual([{ artifactId: 'chart.png', path: '/v1/research/research-1/artifacts/chart.png' }]);
    expect(r.doc.references.map((x) => [x.n, x.sourceId, x.cited])).toEqual([
      [1, 'S1', true],
      [2, 'S2', false],
    ]);
    // The unknown citation [9] is gone from the text; the lists are rendered from the references.
    expect(r.markdown).not.toContain('[9]');
    expect(r.markdown).toMatch(/## References\n\n1\. \[A\]\(https:\/\/a\.example\/\)\n\n## Also consulted\n\n- \[B\]/);
    expect(reportMarkdown(r.doc, { references: false })).not.toContain('## References');
  });

  it("makes the run's own links absolute for a download, and nothing else", () => {
    const doc: ReportDoc = {
      title: 'T',
      notes: [],
      sections: [{ heading: '', markdown: 'See ![c](/v1/research/r/artifacts/c.png) and [x](https://x.example/v1/y).' }],
      charts: [{ artifactId: 'd.png', path: '/v1/research/r/artifacts/d.png' }],
      references: [],
    };
    const md = reportMarkdown(doc, { base: 'http://127.0.0.1:3000/' });
    expect(md).toContain('![c](http://127.0.0.1:3000/v1/research/r/artifacts/c.png)');
    expect(md).toContain('![d.png](http://127.0.0.1:3000/v1/research/r/artifacts/d.png)');
    expect(md).toContain('[x](https://x.example/v1/y)');
    expect(absoluteLinks('[a](</v1/research/r/artifacts/a b.png>)', 'https://h')).toBe('[a](<https://h/v1/research/r/artifacts/a b.png>)');
  });

  it('reads a report stored before as one section of its Markdown', () => {
    const doc = legacyDoc('Old', '# Old\n\n> A note.\n\nText [1].\n\n## References\n\n1. [A](https://a.example/)\n');
    expect(doc.sections).toEqual([{ heading: '', markdown: '> A note.\n\nText [1].\n\n## References\n\n1. [A](https://a.example/)' }]);
    expect(reportMarkdown(doc)).toBe('# Old\n\n> A note.\n\nText [1].\n\n## References\n\n1. [A](https://a.example/)');
  });
});
