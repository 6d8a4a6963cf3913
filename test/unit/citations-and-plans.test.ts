import { describe, expect, it } from 'vitest';
import { citedSourceIds, groundCitations, keepKnownSourceIds, sourceIdsToNumbers, withoutSourceHeads } from '../../src/shared/citations';
import { planProblems } from '../../src/shared/plan-edits';
import type { Plan } from '../../src/shared/schemas';

describe('groundCitations (numbers)', () => {
  const two = [
    { n: 1, sourceId: 'Saaaaaaaa', url: 'https://a.example/' },
    { n: 2, sourceId: 'Sbbbbbbbb', url: 'https://b.example/' },
  ];
  it('keeps resolvable citations, removes the rest, leaves code alone', () => {
    const r = groundCitations('A [1]. B [3]. C [1, 4]. D [2-3]. E `x[9]` and\n```\n[8]\n```\nF [link](http://x) [0]', two);
    expect(r.markdown).toBe('A [1]. B. C [1]. D [2]. E `x[9]` and\n```\n[8]\n```\nF link');
    expect(r.removedNumbers).toEqual([0, 3, 4]);
    expect(r).toMatchObject({ marks: 7, unresolved: 4 });
    expect(r.removedLinks).toEqual([{ url: 'http://x', reason: 'link to an address the run did not retrieve' }]);
  });
});

describe('groundCitations (an id without its S)', () => {
  it('reads eight hex digits beside an id in one citation as an id whose S the model left out', () => {
    const two = [
      { n: 1, sourceId: 'Sa1b2c3d4', url: 'https://a.example/' },
      { n: 2, sourceId: 'S15fe2053', url: 'https://b.example/' },
    ];
    const r = groundCitations('Riders rose [Sa1b2c3d4; 15fe2053]. Made up [Sa1b2c3d4, 99fe2053]. A year [2019].', two);
    expect(r.markdown).toBe('Riders rose [1][2]. Made up [1]. A year.');
  });
});

describe('source ids', () => {
  it('finds cited ids, drops unknown ones and maps the rest to numbers', () => {
    const text = 'X [Saaaaaaaa]. Y [Sbbbbbbbb, Scccccccc]. Z [not-an-id].';
    expect(citedSourceIds(text)).toEqual(['Saaaaaaaa', 'Sbbbbbbbb', 'Scccccccc']);
    const kept = keepKnownSourceIds(text, new Set(['Saaaaaaaa', 'Scccccccc']));
    expect(kept).toEqual({ text: 'X [Saaaaaaaa]. Y [Scccccccc]. Z [not-an-id].', dropped: ['Sbbbbbbbb'] });
    expect(
      sourceIdsToNumbers(
        kept.text,
        new Map([
          ['Saaaaaaaa', 1],
          ['Scccccccc', 2],
        ]),
      ),
    ).toBe('X [1]. Y [2]. Z [not-an-id].');
  });
});

describe('withoutSourceHeads', () => {
  const sources = [
    { title: 'Velmar alloy datasheet', url: 'http://127.0.0.1:41123/velmar/datasheet.html' },
    { title: 'Crosstown Tramway: one year on', url: 'https://tram.example/one-year' },
  ];
  it('drops the heads code writes before a source that a small model copied, and keeps sentences that name a source', () => {
    const text = [
      // The head of a tool result, as the researcher was shown it, and with the address cited.
      '[Sa1b2c3d4] Velmar alloy datasheet — http://127.0.0.1:41123/velmar/datasheet.html',
      'The alloy has a tensile strength of 610 MPa [Sa1b2c3d4].',
      '',
      '- **[1] Crosstown Tramway: one year on — [1]**',
      '[1] Velmar alloy datasheet — [1]',
      '[2] crosstown tramway one year on',
      'Velmar alloy datasheet - http://127.0.0.1:41123/velmar/datasheet.html/',
      '',
      // Kept: a sentence naming a source, a head of a page not among the sources, a title without a citation or address.
      'The Velmar alloy datasheet — the maker’s own — gives 610 MPa [1].',
      '[3] Another page — https://other.example/',
      'Velmar alloy datasheet — revised',
      'Velmar alloy datasheet',
    ].join('\n');
    expect(withoutSourceHeads(text, sources).split('\n')).toEqual([
      'The alloy has a tensile strength of 610 MPa [Sa1b2c3d4].',
      '',
      'The Velmar alloy datasheet — the maker’s own — gives 610 MPa [1].',
      '[3] Another page — https://other.example/',
      'Velmar alloy datasheet — revised',
      'Velmar alloy datasheet',
    ]);
    expect(withoutSourceHeads('No head here.', sources)).toBe('No head here.');
  });
});

describe('planProblems', () => {
  const step = (id: string, dependsOn: string[] = []) => ({
    id,
    title: id,
    description: id,
    type: 'research' as const,
    needSearch: true,
    dependsOn,
  });
  const plan = (steps: ReturnType<typeof step>[], hasEnoughContext = false): Plan => ({
    title: 't',
    thought: '',
    locale: 'en',
    hasEnoughContext,
    steps,
  });

  it('accepts a valid plan', () => {
    expect(planProblems(plan([step('a'), step('b', ['a'])]), 4)).toEqual([]);
    expect(planProblems(plan([], true), 4)).toEqual([]);
  });

  it.each([
    [plan([step('a'), step('b'), step('c')]), 2, 'steps: at most 2 steps are allowed, got 3'],
    [plan([step('a'), step('a')]), 4, 'steps: duplicate step id "a"'],
    [plan([step('a', ['x'])]), 4, 'steps.a.dependsOn: unknown step id "x"'],
    [plan([step('a', ['a'])]), 4, 'steps.a.dependsOn: a step cannot depend on itself'],
    [plan([step('a', ['b']), step('b', ['a'])]), 4, 'steps: dependsOn forms a cycle'],
    [plan([]), 4, 'steps: a plan without enough context needs at least one step'],
  ])('names the problem (%#)', (p, max, problem) => {
    expect(planProblems(p, max)).toContain(problem);
  });
});
