// Model prices for cost estimates: a built-in table of common models, which LLM_PRICES extends and
// overrides. USD per million tokens (input, output), the providers' published list prices for
// standard (not batch, not cached) requests as last checked when the table was written; a price
// changed since, or a negotiated one, is set with LLM_PRICES. A model in neither has no price: its
// tokens are counted as unpriced, and costs read "unknown", never $0.
export interface Price {
  input: number;
  output: number;
}

export const BUILT_IN_PRICES: Readonly<Record<string, Price>> = Object.freeze({
  // OpenAI
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  o3: { input: 2, output: 8 },
  'o4-mini': { input: 1.1, output: 4.4 },
  // Google (prompts up to 200k tokens)
  'gemini-2.5-pro': { input: 1.25, output: 10 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5 },
  // Anthropic (its dated names, e.g. claude-sonnet-4-20250514, find these undated)
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-sonnet-4-0': { input: 3, output: 15 },
  'claude-opus-4': { input: 15, output: 75 },
  'claude-opus-4-0': { input: 15, output: 75 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  'claude-3-5-haiku-latest': { input: 0.8, output: 4 },
});

/** A model's price: its own entry, else that of its name without a date suffix
 *  (`gpt-4o-mini-2024-07-18` → `gpt-4o-mini`, `claude-sonnet-4-20250514` → `claude-sonnet-4`). */
export function priceOf(prices: Readonly<Record<string, Price>>, model: string): Price | undefined {
  const own = prices[model];
  if (own) return own;
  const undated = model.replace(/-(?:\d{4}-\d{2}-\d{2}|\d{8})$/, '');
  return undated !== model ? prices[undated] : undefined;
}
