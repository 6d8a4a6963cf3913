// Pure parts of the centre: report assembly (shared/report.ts) and the budget check.
import { describe, expect, it } from 'vitest';
import { artifactPath, assembleReport, citationOrder, numberReferences, reporterInputs } from '../../src/shared/report';
import { budgetSpent } from '../../src/workflows/research/budget';

const findings = [
  { key: 'background', content: 'Costs fell [Saaaaaaaa].', sourceIds: ['Saaaaaaaa'] },
  {
    key: 'step/calc/1',
    content: 'Fell 89% [Sbbbbbbbb, Saaaaaaaa]. ![lcoe.png](artifact:calc-101-lcoe.png) [table](artifact:calc-101-t.csv)',
    sourceIds: ['Sbbbbbbbb', 'Saaaaaaaa', 'Sgone0000'],
  },
];
const sources = [
  { sourceId: 'Sbbbbbbbb', url: 'https://b.example/', title: 'B [draft]' },
  { sourceId: 'Saaaaaaaa', url: 'https://a.example/', title: 'A' },
];

describe('report assembly', () => {
  it('numbers references in first-citation order and skips ids with no stored source', () => {
    const order = citationOrder(findings);
    expect(order).toEqual(['Saaaaaaaa', 'Sbbbbbbbb', 'Sgone0000']);
    expect(numberReferences(order, sources)).toEqual([
      { n: 1, sourceId: 'Saaaaaaaa', url: 'https://a.example/', title: 'A' },
      { n: 2, sourceId: 'Sbbbbbbbb', url: 'https://b.example/', title: 'B [draft]' },
    ]);
  });

  it('shows the reporter the findings with numbers in place of source ids', () => {
    const refs = numberReferences(citationOrder(findings), sources);
    const inputs = reporterInputs(findings, refs);
    expect(inputs.findings).toContain('<finding key="step/calc/1">\nFell 89% [2][1].');
    expect(inputs.references).toBe('[1] A — https://a.example/\n[2] B [draft] — https://b.example/');
    expect(reporterInputs([], [])).toEqual({ findings: '(no findings)', references: '(no sources)' });
  });

  it('checks citations, links the charts the findings made and lists the references', () => {
    const refs = numberReferences(citationOrder(findings), sources);
    const draft = 'Costs fell [1][7]. See ![chart](artifact:calc-101-lcoe.png) and ![x](artifact:made-up.png).';
    const r = assembleReport({ researchId: 'research-1', title: 'Solar', draft, findings, refs, notes: ['Step a failed: timeout'] });
    expect(r.removedCitations).toEqual([7]);
    const chart = artifactPath('research-1', 'calc-101-lcoe.png');
    expect(r.body).toBe(`Costs fell [1]. See ![chart](${chart}) and ![x](#).`);
    expect(chart).toBe('/v1/research/research-1/artifacts/calc-101-lcoe.png');
    expect(r.markdown).toBe(
      [
        '# Solar',
        '',
        `Costs fell [1]. See ![chart](${chart}) and ![x](#).`,
        '',
        '## Notes on this run',
        '',
        '> Step a failed: timeout',
        '',
        '## References',
        '',
        '1. [A](https://a.example/)',
        '',
        '## Also consulted',
        '',
        '- [B \\[draft\\]](https://b.example/)',
        '',
      ].join('\n'),
    );
  });

  it('unlinks made-up links, images and bare URLs, turns links to retrieved sources into citations, keeps artifacts', () => {
    const refs = numberReferences(citationOrder(findings), sources);
    const chart = artifactPath('research-1', 'calc-101-lcoe.png');
    const draft = [
      'Costs fell [1] per [A](https://a.example) and [the IEA](https://iea.example/made-up).',
      'See https://invented.example/report.pdf, <https://b.example/> and ![fake](https://img.example/x.png).',
      `Chart: ![c](artifact:calc-101-lcoe.png). Code keeps \`https://code.example\`.`,
    ].join('\n');
    const r = assembleReport({ researchId: 'research-1', title: 'T', draft, findings, refs, notes: [] });
    expect(r.removedLinks).toEqual([
      { url: 'https://iea.example/made-up', reason: 'link to an address the run did not retrieve' },
      { url: 'https://img.example/x.png', reason: 'image not made by this run' },
      { url: 'https://invented.example/report.pdf', reason: 'bare URL the run did not retrieve' },
    ]);
    expect(r.markdown).toContain('Costs fell [1] per A [1] and the IEA.');
    expect(r.markdown).toContain('See, [2] and.');
    expect(r.markdown).toContain('## References\n\n1. [A](https://a.example/)\n2. [B \\[draft\\]](https://b.example/)\n');
    expect(r.markdown).toContain(`Chart: ![c](${chart}). Code keeps \`https://code.example\`.`);
    expect(r.markdown).toContain('> Removed 3 links to addresses this run never retrieved.');
  });

  it('adds a chart the reporter did not link', () => {
    const r = assembleReport({ researchId: 'r', title: 'T', draft: 'Text.', findings, refs: [], notes: [] });
    expect(r.markdown).toBe(`# T\n\nText.\n\n## Charts\n\n![calc-101-lcoe.png](${artifactPath('r', 'calc-101-lcoe.png')})`);
  });
});

describe('budget', () => {
  const usage = { promptTokens: 600, completionTokens: 400, costUsd: 0.02 };
  it('says which budget was spent, or nothing', () => {
    expect(budgetSpent({}, usage, undefined, 0)).toBeUndefined();
    expect(budgetSpent({ maxTokens: 1000 }, usage, undefined, 0)).toBe('the token budget (1000) was spent');
    expect(budgetSpent({ maxTokens: 1001 }, usage, undefined, 0)).toBeUndefined();
    expect(budgetSpent({ maxCostUsd: 0.02 }, usage, undefined, 0)).toBe('the cost budget ($0.02) was spent');
    expect(budgetSpent({ deadline: '2h' }, usage, 5_000, 5_000)).toBe('the time budget (2h) ran out');
    expect(budgetSpent({ deadline: '2h' }, usage, 5_000, 4_999)).toBeUndefined();
  });
});
