// The quality bench's own code (bench/quality.ts, bench/quality/corpus.ts): its search engine finds
// the second-hop pages only by the names the first pages give, and its scorer counts a fact as cited
// only next to a citation of a page that states it.
import { describe, expect, it } from 'vitest';
import { scoreReport } from '../../bench/quality';
import { QUESTIONS, searchCorpus } from '../../bench/quality/corpus';

const SITE = 'http://127.0.0.1:9999';
const paths = (q: string) => searchCorpus(q, SITE).map((r) => r.url.slice(SITE.length));

describe('the quality bench', () => {
  it('finds a second-hop page only by the name a first page gives, never by the question', () => {
    for (const q of QUESTIONS) {
      expect(paths(q.question)).not.toContain('/kessler-rail/deliveries.html');
      expect(paths(q.question)).not.toContain('/halvorsen/tariffs.html');
    }
    expect(paths('Ostervik Crosstown Tramway')).toEqual(expect.arrayContaining(['/ostervik/crosstown-tramway.html']));
    expect(paths('Velmar alloy price')).not.toContain('/halvorsen/tariffs.html');
    expect(paths('Kessler Rail deliveries')).toContain('/kessler-rail/deliveries.html');
    expect(paths('Halvorsen Foundry HF-7')).toContain('/halvorsen/tariffs.html');
  });

  it('scores recall, facts cited to a page that states them, made-up citations and length', () => {
    const q = QUESTIONS.find((x) => x.id === 'alloy')!;
    const ref = (n: number, p: string) => ({ n, title: p, url: `${SITE}${p}?q=x` });
    const score = scoreReport(
      q,
      {
        summary: 'Velmar is an aluminium-scandium-zinc alloy [1].',
        doc: {
          sections: [
            { heading: 'Properties', markdown: 'Its tensile strength is 610 MPa [2]. Its density is 2.71 g/cm3 [1].' },
            { heading: 'Price', markdown: '- It costs 38 EUR per kilogram [4].\n- Made by Halvorsen [9].' },
          ],
        } as never,
        references: [ref(1, '/velmar/alloy.html'), ref(2, '/velmar/datasheet.html'), ref(4, '/halvorsen/tariffs.html')],
      },
      SITE,
    );
    // The density is stated next to the overview, which does not state it: recalled, not cited.
    expect(score.recalled.sort()).toEqual(['density', 'made-of', 'maker', 'price', 'strength']);
    expect(score.cited.sort()).toEqual(['made-of', 'price', 'strength']);
    expect(score.citations).toBe(5);
    expect(score.madeUp).toBe(1);
    expect(score.words).toBeGreaterThan(20);
  });
});
