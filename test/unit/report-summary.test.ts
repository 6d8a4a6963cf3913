// The executive summary: code keeps the model's when it is present, short and cited once grounded,
// and otherwise builds one from the report's own cited key points, under a heading in the
// report's language; the JSON export reads it back from the stored Markdown.
import { describe, expect, it } from 'vitest';
import { assembleReport, groundDraft, numberReferences, reportFromFindings, type Finding } from '../../src/shared/report';
import { legacyDoc } from '../../src/shared/report-doc';
import {
  reportSummary,
  sentencesOf,
  summaryHeading,
  summaryProblem,
  SUMMARY_LIMITS,
  withSummary,
  wordCount,
} from '../../src/shared/summary';

const A = 'Sa1a1a1a1';
const B = 'Sb2b2b2b2';
const findings: Finding[] = [
  { key: 'step/a/1', content: `Solar fell 89% [${A}]. Wind fell 70% [${B}].`, sourceIds: [A, B], meta: { stepId: 'a' } },
];
const refs = numberReferences(
  [A, B],
  [
    { sourceId: A, url: 'https://a.example/solar', title: 'Solar costs' },
    { sourceId: B, url: 'https://b.example/wind', title: 'Wind costs' },
  ],
);
const researchId = 'research-summary-unit';
const ground = (text: string) => groundDraft({ researchId, draft: text, findings, refs });
const DRAFT = [
  '## Key points',
  '',
  '- Solar power became the cheapest new electricity in most markets. Its cost fell 89% in a decade [1].',
  '- Onshore wind costs fell by 70% over the same period [2]. Offshore lagged.',
  '- Storage remains the open question.',
  '',
  '## Overview',
  '',
  'Renewables undercut fossil plants on cost.',
].join('\n');
const place = (summary: string | undefined, locale = 'en', draft = DRAFT) =>
  withSummary({ draft, summary, locale, references: refs.length, ground });

describe('the executive summary', () => {
  it("keeps a short, cited summary of the model's, grounded, as the draft's first section", () => {
    const r = place(`Solar and wind got far cheaper [${A}]. Solar fell most [1].`);
    expect(r.problem).toBeUndefined();
    expect(r.summary).toBe('Solar and wind got far cheaper [1]. Solar fell most [1].');
    expect(r.draft.startsWith('## Executive summary\n\nSolar and wind got far cheaper [1].')).toBe(true);
    expect(r.draft).toContain('## Key points');
  });

  it('builds one from the cited key points when the model wrote none, the first cited sentence of each', () => {
    const r = place(undefined);
    expect(r.problem).toBe('wrote none');
    // "Its cost fell…" comes with the sentence that says what "its" is.
    expect(r.summary).toBe(
      'Solar power became the cheapest new electricity in most markets. Its cost fell 89% in a decade [1]. Onshore wind costs fell by 70% over the same period [2].',
    );
    expect(r.summary).not.toContain('Storage');
  });

  it('takes a sentence once when the findings repeat it in nearly the same words', () => {
    const draft = [
      '## Background',
      '',
      'The tramway opened on 14 March 2022, after three years of construction [1].',
      '',
      '## Riders',
      '',
      'The Ostervik tramway opened on 14 March 2022, after three years of construction [1]. Wind fell 70% [2].',
    ].join('\n');
    expect(place(undefined, 'en', draft).summary).toBe(
      'The tramway opened on 14 March 2022, after three years of construction [1]. Wind fell 70% [2].',
    );
  });

  it('replaces an uncited summary, and one whose only citation names no reference', () => {
    expect(place('Renewables are cheap. Very cheap.').problem).toBe('wrote one that cites none of the references');
    const unknown = place('Renewables are cheap [7].');
    expect(unknown.problem).toBe('wrote one that cites none of the references');
    expect(unknown.summary).toContain('[1]');
  });

  it('replaces a summary that is too long, in sentences or in words', () => {
    const six = Array.from({ length: SUMMARY_LIMITS.sentences + 1 }, (_, i) => `Point ${i} holds [1].`).join(' ');
    expect(place(six).problem).toMatch(/^wrote one of 6 sentences/);
    const wordy = `${Array.from({ length: SUMMARY_LIMITS.words + 5 }, () => 'word').join(' ')} [1].`;
    expect(place(wordy).problem).toMatch(/125 words/);
    expect(wordCount(place(wordy).summary)).toBeLessThanOrEqual(SUMMARY_LIMITS.words);
  });

  it('takes a summary section the model wrote into the Markdown, and leaves only one', () => {
    const draft = `## Zusammenfassung\n\nSolar wurde viel billiger [1].\n\n${DRAFT}`;
    const r = place(undefined, 'de-DE', draft);
    expect(r.problem).toBeUndefined();
    expect(r.summary).toBe('Solar wurde viel billiger [1].');
    expect(r.draft.match(/Zusammenfassung/g)).toHaveLength(1);
  });

  it('leaves a summary subsection of another section where it is', () => {
    const draft = `${DRAFT}\n\n### Summary\n\nIn short, cheaper [1].`;
    const r = place(undefined, 'en', draft);
    expect(r.draft).toContain('### Summary\n\nIn short, cheaper [1].');
    expect(r.problem).toBe('wrote none');
  });

  it('heads the summary in the report language, English for others', () => {
    const table: [string, string][] = [
      ['en', 'Executive summary'],
      ['de-DE', 'Zusammenfassung'],
      ['fr', 'Synthèse'],
      ['es-MX', 'Resumen ejecutivo'],
      ['it', 'Sintesi'],
      ['pt-BR', 'Resumo executivo'],
      ['nl', 'Samenvatting'],
      ['zh-CN', '执行摘要'],
      ['zh-TW', '執行摘要'],
      ['ja', 'エグゼクティブサマリー'],
      ['ko', '요약'],
      ['ru', 'Краткое изложение'],
      ['sw', 'Executive summary'],
    ];
    for (const [locale, heading] of table) expect([locale, summaryHeading(locale)]).toEqual([locale, heading]);
    expect(place(undefined, 'ja').draft.startsWith('## エグゼクティブサマリー\n\n')).toBe(true);
  });

  it('counts CJK sentences and words', () => {
    expect(sentencesOf('太阳能便宜了[1]。风能也是[2]。')).toEqual(['太阳能便宜了[1]。', '风能也是[2]。']);
    expect(wordCount('太阳能便宜了')).toBe(3);
    expect(summaryProblem('太阳能便宜了[1]。', 1, 2)).toBeUndefined();
  });

  it('is part of the assembled report, renumbered with the body, and read back from the Markdown', () => {
    const top = place(`Wind got cheaper [2].`);
    const report = assembleReport({ researchId, title: 'Costs', draft: top.draft, findings, refs, notes: [] });
    // Wind is cited first now: it becomes [1] in the summary and everywhere after.
    expect(reportSummary(report.doc)).toBe('Wind got cheaper [1].');
    expect(report.markdown.indexOf('## Executive summary')).toBeLessThan(report.markdown.indexOf('## Key points'));
    expect(reportSummary(legacyDoc('Old', '# Old\n\n## Key points\n\n- A [1].'))).toBeUndefined();
  });

  it('takes a cited sentence that leans on the one before it with that one, within the bounds', () => {
    const draft = [
      '## Key points',
      '',
      "- The Velmar datasheet gives the alloy's mechanical figures. It also explains how it can be welded [1].",
      '- Bus ridership stayed flat. It rose later. However it fell again [2].',
    ].join('\n');
    expect(place(undefined, 'en', draft).summary).toBe(
      "The Velmar datasheet gives the alloy's mechanical figures. It also explains how it can be welded [1]. Bus ridership stayed flat. It rose later. However it fell again [2].",
    );
    // A lead that would pass the summary's word limit leaves the point out.
    const long = `- ${'Word '.repeat(119).trim()}. It fell [1].\n- Wind fell 70% [2].`;
    expect(place(undefined, 'en', long).summary).toBe('Wind fell 70% [2].');
    // So does one that would pass its sentence limit.
    const many = '- A rose [1].\n- B rose. It fell. Then it rose. It fell. It rose again [2].\n- C fell [1].';
    expect(place(undefined, 'en', many).summary).toBe('A rose [1]. C fell [1].');
  });

  it('builds it from what code-listed evidence says, never its titles, list lead-ins or label-value fragments', () => {
    const draft = [
      '## Key points',
      '',
      '- **Velmar alloy datasheet**: Figures the page states (quoted from it): - Tensile strength: 610 MPa. - Density: 2.71 g/cm³. [1]',
      '- **Ostervik ridership report 2024**: Bus ridership in Ostervik stayed flat in 2024, while the tramway kept growing. [2]',
      '- **References**: Velmar alloy datasheet — [1] Ostervik ridership report — [2]',
    ].join('\n');
    const r = place(undefined, 'en', draft);
    expect(r.summary).toBe('Bus ridership in Ostervik stayed flat in 2024, while the tramway kept growing. [2]');
  });

  it('leaves code spans alone: a citation inside one is none', () => {
    const r = place(undefined, 'en', 'Costs fell [1]. Made up. Also [2] and `code [7]`.');
    expect(r.summary).toBe('Costs fell [1]. Also [2] and `code [7]`.');
    const report = assembleReport({ researchId, title: 'Costs', draft: r.draft, findings, refs, notes: [] });
    expect(report.removedCitations).toEqual([]);
  });

  it("gives the code-written fallback report a summary from the findings' cited sentences", () => {
    const fallback = reportFromFindings({ question: 'How cheap is solar?', findings, refs, reason: 'test' });
    const r = withSummary({ draft: fallback.draft, locale: 'en', references: refs.length, ground });
    expect(r.summary).toBe('Solar fell 89% [1]. Wind fell 70% [2].');
  });
});
