// The code half of the claim check: which sentences cite what, which passage of a long source a
// sentence is compared with, and removal of exactly the citations named.
import { describe, expect, it } from 'vitest';
import { citedClaims, countCitationMarkers, evidenceFor, removeCitations } from '../../src/shared/claims';

describe('cited sentences', () => {
  it('cuts at full stops, not at decimals or domains, and keeps citations after the stop', () => {
    const body = 'Costs fell 3.5% at example.com in 2023 [1]. Wind rose. [2][3] Nothing cited here. Storage grew [4]';
    const claims = citedClaims(body);
    expect(claims.map((c) => [c.text, c.numbers])).toEqual([
      ['Costs fell 3.5% at example.com in 2023.', [1]],
      ['Wind rose.', [2, 3]],
      ['Storage grew', [4]],
    ]);
    expect(claims.map((c) => body.slice(c.start, c.end).trim())).toEqual([
      'Costs fell 3.5% at example.com in 2023 [1].',
      'Wind rose. [2][3]',
      'Storage grew [4]',
    ]);
  });

  it('reads a table row under its header, a list item without its bullet, and skips headings and code', () => {
    const body = [
      '## Capacity [9]',
      '',
      '| Plant | MW |',
      '|---|---|',
      '| Veyra | 412 [2] |',
      '',
      '- Lake Veyra is the largest [1].',
      '```',
      'x = a[1]',
      '```',
      'Inline `b[3]` code is not a citation.',
    ].join('\n');
    expect(citedClaims(body).map((c) => [c.text, c.numbers])).toEqual([
      ['Plant | MW → Veyra | 412', [2]],
      ['Lake Veyra is the largest.', [1]],
    ]);
    expect(countCitationMarkers(body)).toBe(3);
  });

  it('removes only the named citations from only the named sentences', () => {
    const body = 'A fell 10% [1][2]. B rose [1]. C held [1].';
    const claims = citedClaims(body);
    const out = removeCitations(
      body,
      claims,
      new Map([
        [0, new Set([2])],
        [2, new Set([1])],
      ]),
    );
    expect(out).toBe('A fell 10% [1]. B rose [1]. C held.');
  });

  it('leaves no dangling "(:" or "()" where a citation in parentheses went', () => {
    const body = 'Costs fell 89% ([3]: IEA 2023). Wind rose (Ember, [4]). Storage grew ([5]). Hydro held [6].';
    const claims = citedClaims(body);
    const drop = new Map(claims.map((c, i) => [i, new Set([3, 4, 5])]));
    expect(removeCitations(body, claims, drop)).toBe('Costs fell 89% (IEA 2023). Wind rose (Ember). Storage grew. Hydro held [6].');
  });

  it('leaves a list of citations with its separators whole where some of it goes', () => {
    const body = 'Costs fell about 89%. [1], [2], [3], [4]. Wind fell [2], [5] too.';
    const claims = citedClaims(body);
    const drop = new Map(claims.map((c, i) => [i, new Set([2, 3, 5])]));
    expect(removeCitations(body, claims, drop)).toBe('Costs fell about 89%. [1], [4]. Wind fell too.');
  });
});

describe('evidence for a sentence', () => {
  it('gives a short source whole, and from a long one the passages that share its words and figures', () => {
    expect(evidenceFor('anything', 'Short text.')).toBe('Short text.');
    const filler = (i: number) => `Paragraph ${i} talks about gardening, weather and local news at length. `.repeat(6);
    const paras = Array.from({ length: 20 }, (_, i) => filler(i));
    paras[13] = 'The Lake Veyra plant delivers 412 megawatts since its 2021 upgrade.';
    const chosen = evidenceFor('Lake Veyra delivers 412 MW.', paras.join('\n\n'), 900);
    expect(chosen).toContain('412 megawatts');
    expect(chosen.length).toBeLessThanOrEqual(900);
  });
});
