// The slide deck export without a run: a report, as assembly stores it (sections, charts, cited and
// consulted references), drawn as slides and read back from the .pptx (slide XML and
// relationships): the slide titles in order, citations that jump to the references slide listing
// them, charts as pictures (listed after the body, or shown in a section), and long text bounded.
import { describe, expect, it } from 'vitest';
import { DECK_LIMITS, deckPlan, reportPptx } from '../../src/api/export/pptx';
import { legacyDoc, type Reference, type ReportDoc } from '../../src/shared/report-doc';
import { readPptx } from '../support/pptx-reader';

/** The first bytes of a PNG of 1200x800: the signature and the IHDR chunk's width and height. */
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]),
  Buffer.from([0, 0, 0x04, 0xb0, 0, 0, 0x03, 0x20, 8, 2, 0, 0, 0]),
]);
const chart = '/v1/research/r/artifacts/calc-101-lcoe.png';
const references: Reference[] = [
  ...Array.from({ length: 20 }, (_, i) => ({
    n: i + 1,
    sourceId: `S${i + 1}`,
    url: `https://s${i + 1}.example/page`,
    title: `Source ${i + 1} & co`,
    cited: true,
  })),
  { n: 21, sourceId: 'S21', url: 'https://unused.example', title: 'Unused', cited: false },
];
const longSentence = `Module prices ${'kept falling year after year '.repeat(12)}until 2022 [3].`;
const doc: ReportDoc = {
  title: 'Solar got cheaper',
  notes: [{ text: 'Correction (reporter): a note of the run.', kind: 'fallback' }],
  sections: [
    { heading: 'Executive summary', markdown: 'Solar costs fell 89% since 2010 [1]. Wind followed [12].' },
    {
      heading: 'Key points',
      markdown: [
        '- Utility solar fell 89% between 2010 and 2022 [1]. It is now the cheapest source.',
        `- ${longSentence}`,
        '- Wind costs fell 70% [12].',
      ].join('\n'),
    },
    { heading: 'Detailed analysis', markdown: Array.from({ length: 25 }, (_, i) => `Paragraph ${i + 1} says a thing [2].`).join('\n\n') },
  ],
  // Listed after the body, which does not show it.
  charts: [{ artifactId: 'calc-101-lcoe.png', path: chart }],
  references,
};
const report = { title: 'Solar got cheaper', locale: 'en-US', doc };
const cover = { question: 'How fast did solar costs fall?', date: new Date('2026-11-20T10:00:00Z') };
const artifacts = new Map([[chart, { contentType: 'image/png', bytes: png }]]);

describe('the slide deck export', () => {
  it('draws the title, the summary, each section, the chart and the references, each citation a jump to its reference', async () => {
    const { slides, media } = await readPptx(await reportPptx(report, cover, artifacts));
    expect(slides.map((s) => s.title)).toEqual([
      'Solar got cheaper',
      'Executive summary',
      'Key points',
      'Detailed analysis (1)',
      'Detailed analysis (2)',
      'Detailed analysis (3)',
      'Charts',
      'References (1)',
      'References (2)',
      'References (3)',
    ]);
    expect(slides[0]!.paragraphs).toEqual(['Solar got cheaper', 'How fast did solar costs fall?', 'November 20, 2026']);
    expect(slides[1]!.paragraphs.slice(1)).toEqual(['Solar costs fell 89% since 2010 [1].', 'Wind followed [12].']);

    // [12] on the key points slide jumps to the second references slide, which lists 12.
    const keyPoints = slides[2]!;
    expect(keyPoints.paragraphs[1]).toBe('Utility solar fell 89% between 2010 and 2022 [1].');
    const twelve = keyPoints.links.find((l) => l.text === '[12]')!;
    expect(twelve.slide).toBe(9);
    expect(slides[8]!.paragraphs).toContain('12. Source 12 & co');
    expect(slides[8]!.links).toContainEqual({ text: 'https://s12.example/page', url: 'https://s12.example/page' });
    expect(keyPoints.links.find((l) => l.text === '[1]')!.slide).toBe(8);

    // The chart is a picture of its own slide, with its caption; nothing of "Also consulted".
    expect(media).toHaveLength(1);
    expect(slides[6]!.images).toEqual(media);
    expect(slides[6]!.paragraphs).toEqual(['Charts', 'calc-101-lcoe.png']);
    expect(slides.flatMap((s) => s.paragraphs).join('\n')).not.toMatch(/Unused|Also consulted|Correction/);
  });

  it('bounds the text of a slide: long sentences shortened with their citations, long sections split and capped', () => {
    const plan = deckPlan(report, cover, artifacts);
    const bullets = plan.flatMap((s) => (s.kind === 'bullets' ? s.bullets : []));
    const texts = bullets.map((b) => b.map((p) => ('n' in p ? `[${p.n}]` : p.text)).join(''));
    const cut = texts.find((t) => t.startsWith('Module prices'))!;
    expect(cut).toMatch(/ … \[3\]$/);
    expect(cut.replace(/ \[3\]$/, '').length).toBeLessThanOrEqual(DECK_LIMITS.bulletChars + 2);
    const analysis = plan.filter((s) => s.kind === 'bullets' && s.title.startsWith('Detailed analysis'));
    expect(analysis).toHaveLength(DECK_LIMITS.slidesPerSection);
    for (const s of analysis) expect(s.kind === 'bullets' && s.bullets.length).toBeLessThanOrEqual(DECK_LIMITS.bulletsPerSlide);
    const long = deckPlan({ ...report, title: 'T'.repeat(300) }, { ...cover, question: 'Why? '.repeat(400) }, artifacts)[0]!;
    expect(long.kind === 'title' && [long.title.length, long.question.length]).toEqual([DECK_LIMITS.titleChars + 2, expect.any(Number)]);
    expect(long.kind === 'title' && long.question.length).toBeLessThanOrEqual(DECK_LIMITS.questionChars + 2);
    const refSlides = plan.filter((s) => s.kind === 'references');
    expect(refSlides.map((s) => (s.kind === 'references' ? s.refs.length : 0))).toEqual([8, 8, 4]);
  });

  it('titles a German deck with the German summary heading and date', async () => {
    const sections = doc.sections.map((x) => (x.heading === 'Executive summary' ? { ...x, heading: 'Zusammenfassung' } : x));
    const de = { ...report, locale: 'de-DE', doc: { ...doc, sections } };
    const { slides } = await readPptx(await reportPptx(de, cover, new Map()));
    expect(slides[0]!.paragraphs[2]).toBe('20. November 2026');
    expect(slides[1]!.title).toBe('Zusammenfassung');
    // A chart whose bytes are not given is left out, not drawn empty.
    expect(slides.some((s) => s.images.length)).toBe(false);
  });

  it('draws a chart a section shows on a slide after its points, titled with the section', () => {
    const withChart = {
      ...report,
      doc: { ...doc, charts: [], sections: [{ heading: 'Costs', markdown: `Costs fell [1].\n\n![LCOE by year](${chart})` }] },
    };
    const plan = deckPlan(withChart, cover, artifacts);
    expect(plan.map((s) => [s.kind, s.title])).toEqual([
      ['title', 'Solar got cheaper'],
      ['bullets', 'Costs'],
      ['chart', 'Costs'],
      ['references', 'References (1)'],
      ['references', 'References (2)'],
      ['references', 'References (3)'],
    ]);
    expect(plan[2]).toMatchObject({ kind: 'chart', caption: 'LCOE by year', href: chart });
  });

  it('cuts a report stored before reports were data at its own headings, with no citation links', async () => {
    const old = legacyDoc('Old', '# Old\n\n## Findings\n\nCosts fell [1].\n\n## References\n\n1. [A](https://a.example)\n');
    const { slides } = await readPptx(await reportPptx({ title: 'Old', doc: old }, cover, new Map()));
    expect(slides.map((s) => s.title)).toEqual(['Old', 'Findings', 'References']);
    expect(slides[1]!.paragraphs).toEqual(['Findings', 'Costs fell [1].']);
    expect(slides.flatMap((s) => s.links.filter((l) => l.slide))).toEqual([]);
  });
});
