// Costs: a model without a price makes a cost unknown, never $0.0000 (issue 57); the built-in
// table prices common models, dated names included, and LLM_PRICES overrides it.
import { describe, expect, it } from 'vitest';
import { pricedUsage } from '../../src/activities/llm/client';
import { loadConfig } from '../../src/config';
import { BUILT_IN_PRICES, priceOf } from '../../src/config/prices';
import { costText } from '../../src/shared/cost-text';
import { addUsage, ZERO_USAGE } from '../../src/shared/plain';
import { money } from '../../src/cli/format';

describe('model prices', () => {
  it('prices the default model and the dated names of listed ones; a model in no table has none', () => {
    const prices = loadConfig({}).llm.prices;
    expect(priceOf(prices, loadConfig({}).llm.models.reporter)).toEqual({ input: 0.15, output: 0.6 });
    expect(priceOf(prices, 'gpt-4o-mini-2024-07-18')).toEqual(BUILT_IN_PRICES['gpt-4o-mini']);
    expect(priceOf(prices, 'claude-sonnet-4-20250514')).toEqual(BUILT_IN_PRICES['claude-sonnet-4']);
    expect(priceOf(prices, 'qwen2.5-coder-0.5b-instruct')).toBeUndefined();
    expect(priceOf(loadConfig({ LLM_PRICES: 'qwen2.5-coder-0.5b-instruct=0/0' }).llm.prices, 'qwen2.5-coder-0.5b-instruct')).toEqual({
      input: 0,
      output: 0,
    });
  });

  it("counts an unpriced model's tokens apart from the cost", () => {
    const prices = loadConfig({}).llm.prices;
    expect(pricedUsage(prices, 'gpt-4o-mini', { promptTokens: 1_000_000, completionTokens: 1_000_000 })).toEqual({
      promptTokens: 1_000_000,
      completionTokens: 1_000_000,
      costUsd: 0.75,
    });
    expect(pricedUsage(prices, 'local-model', { promptTokens: 300, completionTokens: 20 })).toEqual({
      promptTokens: 300,
      completionTokens: 20,
      costUsd: 0,
      unpricedTokens: 320,
    });
    // A request that used no tokens leaves nothing unpriced.
    expect(pricedUsage(prices, 'local-model', { promptTokens: 0, completionTokens: 0 })).toEqual(ZERO_USAGE);
  });
});

describe('a cost as people read it', () => {
  const priced = { promptTokens: 100, completionTokens: 10, costUsd: 0.0123 };
  const unpriced = { promptTokens: 300, completionTokens: 20, costUsd: 0, unpricedTokens: 320 };

  it('sums unpriced tokens, and keeps them out of a usage that has none', () => {
    expect(addUsage(priced, priced)).toEqual({ promptTokens: 200, completionTokens: 20, costUsd: 0.0246 });
    expect(addUsage(priced, unpriced)).toEqual({ promptTokens: 400, completionTokens: 30, costUsd: 0.0123, unpricedTokens: 320 });
  });

  it('says "unknown" for unpriced work, and what part is unpriced when some is priced', () => {
    expect(costText(priced)).toBe('$0.0123');
    expect(costText(ZERO_USAGE)).toBe('$0.0000');
    expect(costText(unpriced)).toBe('cost unknown');
    expect(costText(addUsage(priced, unpriced))).toBe('$0.0123 + unpriced tokens');
    expect(money(unpriced)).toBe('320 tokens · cost unknown');
  });
});
