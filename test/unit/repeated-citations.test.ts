// A report sentence that repeats a finding's cited sentence word for word, or states its figures in
// other words, gets its citation (src/shared/repeated-citations.ts), as the quality bench's
// small-model reports needed: they copied the findings' sentences and dropped every mark.
import { describe, expect, it } from 'vitest';
import { citeRepeatedSentences } from '../../src/shared/repeated-citations';
import { assembleReport } from '../../src/shared/report';

const TRAM = 'Sa1a1a1a1';
const RIDERS = 'Sb2b2b2b2';
const SNIPPET = 'Sc3c3c3c3';
// A step's findings as code lists the evidence when the writer cited nothing: the id closes the item.
const findings = [
  {
    key: 'step/tram/1',
    content: [
      'The tramway opened in 2022.',
      '',
      'Evidence retrieved (listed by code, as the text above cites no source):',
      `- **Crosstown Tramway - Ostervik transit authority**: The line opened to passengers on 14 March 2022, after three years of construction. It is 11.2 km long and serves 19 stops, with trams every six minutes at peak hours. [${TRAM}]`,
      `- **Ridership report**: Weekday ridership on the Crosstown Tramway reached 41,000 trips in 2024, up from 28,500. [${RIDERS}]`,
      `Bus ridership in Ostervik stayed flat in 2024 while the tramway kept growing [${SNIPPET}].`,
    ].join('\n'),
    sourceIds: [TRAM, RIDERS, SNIPPET],
  },
];
const numberOf = new Map([
  [TRAM, 1],
  [RIDERS, 2],
]);

describe('sentences that repeat a finding', () => {
  it("cite the finding's source when they repeat its sentence word for word, marks and Markdown aside", () => {
    const draft = [
      '## Key points',
      '',
      '- The line opened to passengers on 14 March 2022, after three years of construction.',
      '- It is 11.2 km long and serves 19 stops, with trams every six minutes at peak hours!',
      'Weekday ridership on the **Crosstown Tramway** reached 41,000 trips in 2024, up from 28,500.',
    ].join('\n');
    const r = citeRepeatedSentences(draft, findings, numberOf);
    expect(r.added).toBe(3);
    expect(r.markdown).toBe(
      [
        '## Key points',
        '',
        '- The line opened to passengers on 14 March 2022, after three years of construction [1].',
        '- It is 11.2 km long and serves 19 stops, with trams every six minutes at peak hours [1]!',
        'Weekday ridership on the **Crosstown Tramway** reached 41,000 trips in 2024, up from 28,500 [2].',
      ].join('\n'),
    );
  });

  it('leaves alone short repeats, paragraphs that cite already, other words, headings, tables and code, and sources it may not cite', () => {
    const draft = [
      '# The line opened to passengers on 14 March 2022, after three years of construction',
      'The tramway opened in 2022.',
      'The line opened to passengers on 14 March 2022, after three years of construction [2].',
      // A paragraph that cites already keeps its citations where the writer put them.
      'The tramway opened in 2022 [1]. It is 11.2 km long and serves 19 stops, with trams every six minutes at peak hours.',
      'The line opened to passengers in 2023, after four years of building the old corridor.',
      '| The line opened to passengers on 14 March 2022, after three years of construction. |',
      '```',
      'The line opened to passengers on 14 March 2022, after three years of construction.',
      '```',
      'Bus ridership in Ostervik stayed flat in 2024 while the tramway kept growing.',
    ].join('\n');
    expect(citeRepeatedSentences(draft, findings, numberOf)).toEqual({ markdown: draft, added: 0 });
  });

  it('cite the one source whose finding sentences state every figure of a sentence in other words, at least two figures', () => {
    const draft = [
      'The tramway is 11.2 km long, with 19 stops.',
      '- Ridership hit 41000 trips, up from 28,500.',
      // Figures of two sources, one figure, or a figure no finding states: left alone.
      'It opened in 2022 and carried 41,000 trips in 2024.',
      'It is 11.2 km long.',
      'It is 11.2 km long and has 20 stops.',
    ].join('\n');
    const r = citeRepeatedSentences(draft, findings, numberOf);
    expect(r.added).toBe(2);
    expect(r.markdown.split('\n')).toEqual([
      'The tramway is 11.2 km long, with 19 stops [1].',
      '- Ridership hit 41000 trips, up from 28,500 [2].',
      'It opened in 2022 and carried 41,000 trips in 2024.',
      'It is 11.2 km long.',
      'It is 11.2 km long and has 20 stops.',
    ]);
    // Figures both sources state name neither.
    const both = [...findings, { key: 'step/b/1', content: `The line is 11.2 km long and has 19 stops [${RIDERS}].` }];
    expect(citeRepeatedSentences('The tramway is 11.2 km long, with 19 stops.', both, numberOf).added).toBe(0);
  });

  it("given the pages' texts, cite the one page that states a sentence's figures, or a short line with a figure word for word", () => {
    // What the run stored for each page: its reading, with the figures code quotes from the page.
    const stored = new Map([
      [TRAM, 'The Crosstown line opened in 2022.\n\nFigures the page states (quoted from it):\n- Length: 11.2 km.\n- Stops: 19.'],
      [RIDERS, 'Weekday ridership reached 41,000 trips in 2024.\n\nFigures the page states (quoted from it):\n- Trams per hour: 10.'],
      [SNIPPET, 'Bus ridership fell to 9,000 trips; the line runs 12 trams.'],
    ]);
    const none: { content: string }[] = [];
    const draft = [
      // Figures no finding states, one page's text does.
      'Its line of 11.2 km serves 19 stops.',
      // A line code quoted from a page, copied by the model: one figure, the page's words.
      '- Length: 11.2 km.',
      '- Trams per hour: 10',
      // Too short to name a page, a source the report may not cite, two pages' figures: left alone.
      '- Stops: 19.',
      'Bus ridership fell to 9,000 trips.',
      'It is 11.2 km long and carried 41,000 trips.',
    ].join('\n');
    const r = citeRepeatedSentences(draft, none, numberOf, stored);
    expect(r.markdown.split('\n')).toEqual([
      'Its line of 11.2 km serves 19 stops [1].',
      '- Length: 11.2 km [1].',
      '- Trams per hour: 10 [2]',
      '- Stops: 19.',
      'Bus ridership fell to 9,000 trips.',
      'It is 11.2 km long and carried 41,000 trips.',
    ]);
    expect(r.added).toBe(3);
    // A line two pages state word for word names neither.
    const twice = new Map([...stored, [RIDERS, 'Length: 11.2 km.']]);
    expect(citeRepeatedSentences('- Length: 11.2 km.', none, numberOf, twice).added).toBe(0);
  });

  it('are cited in the assembled report, counted in a note, and their source listed as cited', () => {
    const refs = [
      { n: 1, sourceId: TRAM, url: 'https://tram.example/line', title: 'Crosstown Tramway' },
      { n: 2, sourceId: RIDERS, url: 'https://tram.example/riders', title: 'Ridership report' },
    ];
    const draft = '## Findings\n\nWeekday ridership on the Crosstown Tramway reached 41,000 trips in 2024, up from 28,500.';
    const r = assembleReport({ researchId: 'r', title: 'Tram', draft, findings, refs, notes: [] });
    expect(r.body).toContain('up from 28,500 [1].');
    expect(r.references.filter((x) => x.cited).map((x) => x.sourceId)).toEqual([RIDERS]);
    expect(r.doc.notes.map((n) => n.text)).toContain(
      'Code cited 1 sentence that repeats the words or figures of a finding or of a page the run read to that source.',
    );
  });
});
