// A long page reduced for its goal (src/activities/crawl/goal-passages.ts), and a tool result's
// fair shares (src/activities/role-kit/tool-budget.ts), without a model.
import { describe, expect, it } from 'vitest';
import { goalTerms, passagesForGoal, figuresLeftOut } from '../../src/activities/crawl/goal-passages';
import { tokenCounter, tokenizerFamily } from '../../src/activities/llm/tokens';
import { fairShares, shareBudget } from '../../src/activities/role-kit/tool-budget';

const counter = tokenCounter('cl100k');
const filler = (topic: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${topic} paragraph ${i}: the committee met and discussed the agenda of the week at length.`).join(
    '\n\n',
  );

describe('goal passages', () => {
  it('keeps a short page whole', () => {
    const page = '# Title\n\nBattery prices fell to 139 USD/kWh in 2023.';
    expect(passagesForGoal(page, 'battery prices', 6_000, counter)).toEqual({ text: page, reduced: false });
  });

  it('finds the passage that serves the goal far past where a cut at the start would end', () => {
    const answer = 'Lithium-ion battery pack prices fell to 139 USD/kWh in 2023, BloombergNEF reported.';
    const page = `# Annual energy review\n\nThis review covers the year.\n\n${filler('Governance', 400)}\n\n${answer}\n\n${filler('Logistics', 100)}`;
    expect(page.indexOf(answer)).toBeGreaterThan(24_000); // the old extractor saw the first 24,000 characters only
    const { text, reduced } = passagesForGoal(page, 'lithium-ion battery pack prices', 1_000, counter);
    expect(reduced).toBe(true);
    expect(text).toContain(answer);
    expect(text.startsWith('# Annual energy review')).toBe(true);
    expect(text).toContain('[…]');
    expect(counter.count(text)).toBeLessThanOrEqual(1_000 + 40);
  });

  it('reads Chinese goals as character bigrams', () => {
    expect(goalTerms('储能电池价格')).toEqual(['储能', '能电', '电池', '池价', '价格']);
    const answer = '二〇二三年储能电池价格下降到每千瓦时一百三十九美元。';
    const page = `${'会议讨论了本周的议程安排。'.repeat(20)}\n\n${Array.from({ length: 300 }, () => '会议讨论了本周的议程安排，委员会成员发表了意见。').join('\n\n')}\n\n${answer}`;
    expect(passagesForGoal(page, '储能电池价格', 800, counter).text).toContain(answer);
  });
});

describe('tool-result shares', () => {
  it('meets small needs first and shares the rest equally', () => {
    expect(fairShares([100, 1_000, 50, 1_000], 1_000)).toEqual([100, 425, 50, 425]);
    expect(fairShares([10, 20], 1_000)).toEqual([10, 20]);
  });

  it("shows every page's opening within the budget and names what it shortened", () => {
    const pages = [1, 2, 3, 4, 5].map((n) => ({
      head: `[S0000000${n}] Page ${n} — https://x.test/${n}`,
      body: `Marker ${n}. ${'Figures and more figures about the topic. '.repeat(80)}`,
      sourceIds: [`S0000000${n}`],
      minTokens: 120,
      label: `https://x.test/${n}`,
    }));
    const r = shareBudget([{ head: '', parts: pages }], 1_500, counter);
    for (let n = 1; n <= 5; n++) expect(r.text).toContain(`Marker ${n}.`);
    expect(r.shownIds).toHaveLength(5);
    expect(r.budget).toEqual({ tokens: 1_500, shortened: 5, leftOut: 0 });
    expect(counter.count(r.text)).toBeLessThanOrEqual(1_500 + 80);
  });

  it('counts in the family of the model', () => {
    expect(tokenizerFamily('gpt-4o-mini')).toBe('o200k');
    expect(tokenizerFamily('openai/gpt-oss-20b')).toBe('o200k');
    expect(tokenizerFamily('qwen2.5-coder-0.5b-instruct')).toBe('cl100k');
    expect(tokenizerFamily('gpt-4o', 'cl100k')).toBe('cl100k');
    // The two families count the same Chinese text differently: o200k has more CJK merges.
    const zh = '储能电池价格在二〇二三年下降了百分之十四。';
    expect(tokenCounter('o200k').count(zh)).toBeLessThan(tokenCounter('cl100k').count(zh));
  });
});

describe('figures the evidence left out', () => {
  const page =
    'Mechanical properties of the Velmar alloy as cast and heat treated.\n\nTensile strength: 610 MPa. Density: 2.71 g/cm3. Elongation at break: 7%.\n\nIt machines like ordinary aluminium alloys.';
  it("adds the page's own sentences with figures for the goal that a described page left out", () => {
    const described = 'This page gives the tensile strength, density and elongation of the alloy.';
    expect(figuresLeftOut(page, 'Velmar alloy tensile strength and density', described)).toEqual([
      'Tensile strength: 610 MPa.',
      'Density: 2.71 g/cm3.',
      'Elongation at break: 7%.',
    ]);
    // Evidence with a figure of its own: only the goal's other figures.
    expect(figuresLeftOut(page, 'Velmar alloy tensile strength and density', 'Its tensile strength is 610 MPa.')).toEqual([
      'Density: 2.71 g/cm3.',
    ]);
    // Figures the evidence has, and sentences that share no word with the goal, are not added.
    expect(figuresLeftOut(page, 'Velmar alloy tensile strength and density', 'Tensile strength 610 MPa, density 2.71 g/cm3.')).toEqual([]);
    expect(figuresLeftOut(page, 'who makes the alloy', 'Halvorsen makes it; it costs 38 EUR a kilogram.')).toEqual([]);
    // A page only described, for a goal that is only its name: its figures all the same, in its order.
    expect(figuresLeftOut(page, 'Velmar datasheet', described)).toEqual([
      'Tensile strength: 610 MPa.',
      'Density: 2.71 g/cm3.',
      'Elongation at break: 7%.',
    ]);
  });
});
