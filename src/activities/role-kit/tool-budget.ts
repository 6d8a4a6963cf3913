// A tool result's budget shared fairly across what it holds. A crawl of five pages or a search of
// five queries gets one budget of tokens (counted in the model's tokenizer family); every page
// and every hit gets its share, a short one gives what it does not need to the others, and a
// long one is shortened at a sentence or word break to its share. When even the least share is
// too small to be useful, the lowest-ranked hits are left out, taken in turn from the query with
// the most left, so that every query keeps its best hits. What is left out is not shown, so it is
// not read: only the ids of the parts shown count as read and citable. What was shortened or
// left out is said at the end of the result and returned for the run's events.
import { tokenCounter, tokenizerFamily, type TokenCounter, type TokenizerFamily } from '../llm/tokens';
import type { ResearcherBudgets } from './role';

/** The researcher's budgets, counted in its model's tokenizer family (defaults: the config's). */
export function researcherBudgets(
  opts: { model?: string; tokenizer?: 'auto' | TokenizerFamily; conversationTokens?: number; toolResultTokens?: number } = {},
): ResearcherBudgets {
  return {
    conversationTokens: opts.conversationTokens ?? 50_000,
    toolResultTokens: opts.toolResultTokens ?? 2_500,
    counter: tokenCounter(tokenizerFamily(opts.model ?? '', opts.tokenizer)),
  };
}

/** One page or hit of a tool result. */
export interface ResultPart {
  /** Shown whole: the source's id, title and URL. */
  head: string;
  /** Shortened to the part's share. */
  body: string;
  /** Source ids the part shows: read when the part is shown. */
  sourceIds: string[];
  /** The least share worth showing of the body; below it the part is left out. */
  minTokens: number;
  /** What the closing note calls the part when it is left out (a title or URL). */
  label: string;
}

/** A query's or a call's parts under one heading. */
export interface ResultGroup {
  head: string;
  parts: ResultPart[];
  /** Shown when the group has no parts (no results). */
  empty?: string;
}

export interface BudgetReport {
  /** The budget, in tokens. */
  tokens: number;
  /** Parts shown shortened. */
  shortened: number;
  /** Parts not shown at all. */
  leftOut: number;
}

export interface SharedResult {
  text: string;
  /** Ids of the sources the result shows. */
  shownIds: string[];
  budget: BudgetReport;
}

const SEPARATOR = '\n\n';

/** The groups' text within `budget` tokens, each part with its fair share. */
export function shareBudget(groups: ResultGroup[], budget: number, counter: TokenCounter): SharedResult {
  const kept = groups.map((g) => ({ ...g, parts: [...g.parts] }));
  const leftOut: string[] = [];
  const fixed = () =>
    kept.reduce((sum, g) => sum + counter.count(g.head) + 2 + g.parts.reduce((s, p) => s + counter.count(p.head) + 2, 0), 0);
  const mins = () => kept.reduce((sum, g) => sum + g.parts.reduce((s, p) => s + p.minTokens, 0), 0);
  // Too many parts for their least shares: the last hit of the fullest group goes, until they fit.
  while (fixed() + mins() > budget) {
    const fullest = kept.reduce<(typeof kept)[number] | undefined>((a, g) => (g.parts.length > (a?.parts.length ?? 0) ? g : a), undefined);
    if (!fullest) break;
    leftOut.push(fullest.parts.pop()!.label);
  }
  const shares = fairShares(
    kept.flatMap((g) => g.parts.map((p) => counter.count(p.body))),
    Math.max(0, budget - fixed()),
  );
  let i = 0;
  let shortened = 0;
  const shownIds = new Set<string>();
  const blocks = kept.map((g) => {
    const lines = g.parts.map((p) => {
      const share = shares[i++]!;
      p.sourceIds.forEach((id) => shownIds.add(id));
      const whole = counter.count(p.body) <= share;
      if (whole) return p.body ? `${p.head}\n${p.body}` : p.head;
      shortened++;
      return `${p.head}\n${counter.head(p.body, share)} [… shortened to fit this result's budget]`;
    });
    const body = lines.length ? lines.join('\n') : (g.empty ?? '');
    return [g.head, body].filter(Boolean).join('\n');
  });
  const report = { tokens: budget, shortened, leftOut: leftOut.length };
  const note = closingNote(report, leftOut);
  return { text: [...blocks, ...(note ? [note] : [])].join(SEPARATOR), shownIds: [...shownIds], budget: report };
}

/**
 * Water-filling: parts ask for `needs` tokens; the smallest needs are met first and what they do
 * not use is shared among the rest, so no part gets less than an equal share unless it needs less.
 */
export function fairShares(needs: number[], budget: number): number[] {
  const order = needs.map((need, i) => ({ need, i })).sort((a, b) => a.need - b.need);
  const shares = new Array<number>(needs.length).fill(0);
  let left = budget;
  order.forEach(({ need, i }, k) => {
    const share = Math.min(need, Math.floor(left / (order.length - k)));
    shares[i] = share;
    left -= share;
  });
  return shares;
}

function closingNote(report: BudgetReport, leftOut: string[]): string {
  if (!report.shortened && !report.leftOut) return '';
  const parts = [
    report.shortened ? `${report.shortened} shortened to share the budget` : '',
    report.leftOut ? `${report.leftOut} left out and not shown (${leftOut.slice(0, 8).join('; ')}${leftOut.length > 8 ? '; …' : ''})` : '',
  ].filter(Boolean);
  return `[This result has a budget of ${report.tokens} tokens: ${parts.join(', ')}. Ask for fewer pages or queries at a time to see more of each.]`;
}
