// A long page reduced for its goal instead of cut at its start: the page is split into passages
// (paragraphs packed to about PASSAGE_CHARS), each scored against the goal with BM25 over the
// goal's words (character bigrams for Chinese, Japanese and Korean), and the best are kept in
// the page's order within the budget, the opening passage first, `[…]` where passages were left
// out. The extractor then reads what bears on the goal wherever it is on the page.
import type { TokenCounter } from '../llm/tokens';

const PASSAGE_CHARS = 900;
export const GAP_MARK = '\n\n[…]\n\n';

const STOPWORDS = new Set(
  'the and for with that this from what which who how why when where are was were has have had not but its into than then they their them there these those about over under more most such also can may will been being does did per via'.split(
    ' ',
  ),
);
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/;

/** The words of a text that carry meaning: lower-case, no stopwords; CJK runs as bigrams. */
export function goalTerms(text: string): string[] {
  const terms: string[] = [];
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (CJK.test(raw)) {
      const chars = [...raw];
      if (chars.length === 1) terms.push(raw);
      for (let i = 0; i + 1 < chars.length; i++) terms.push(chars[i]! + chars[i + 1]!);
    } else if (raw.length >= 3 && !STOPWORDS.has(raw)) terms.push(raw);
    else if (/^\d+$/.test(raw) && raw.length >= 2) terms.push(raw);
  }
  return terms;
}

/** The page in passages: paragraphs packed up to PASSAGE_CHARS; a longer paragraph on its own. */
function passagesOf(markdown: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const block of markdown.split(/\n\s*\n/)) {
    const b = block.trim();
    if (!b) continue;
    if (current && current.length + b.length + 2 > PASSAGE_CHARS) {
      out.push(current);
      current = '';
    }
    current = current ? `${current}\n\n${b}` : b;
    while (current.length > PASSAGE_CHARS * 2) {
      const cut = current.lastIndexOf(' ', PASSAGE_CHARS) > PASSAGE_CHARS / 2 ? current.lastIndexOf(' ', PASSAGE_CHARS) : PASSAGE_CHARS;
      out.push(current.slice(0, cut));
      current = current.slice(cut).trimStart();
    }
  }
  if (current) out.push(current);
  return out;
}

/** BM25 of each passage for the goal's terms. */
function scores(passages: string[], goal: string[]): number[] {
  const docs = passages.map((p) => goalTerms(p));
  const avg = docs.reduce((a, d) => a + d.length, 0) / Math.max(1, docs.length);
  const unique = [...new Set(goal)];
  const df = new Map(unique.map((t) => [t, docs.filter((d) => d.includes(t)).length]));
  return docs.map((d) => {
    const tf = new Map<string, number>();
    for (const t of d) tf.set(t, (tf.get(t) ?? 0) + 1);
    let s = 0;
    for (const t of unique) {
      const f = tf.get(t) ?? 0;
      if (!f) continue;
      const idf = Math.log(1 + (docs.length - df.get(t)! + 0.5) / (df.get(t)! + 0.5));
      s += (idf * f * 2.2) / (f + 1.2 * (0.25 + 0.75 * (d.length / Math.max(1, avg))));
    }
    return s;
  });
}

export interface GoalPassages {
  text: string;
  /** Whether passages were left out. */
  reduced: boolean;
}

/** The page whole when it fits `budget` tokens; else its passages that serve the goal best. */
export function passagesForGoal(markdown: string, goal: string, budget: number, counter: TokenCounter): GoalPassages {
  // A page at most four characters a token over the budget cannot fit: its count is not needed.
  if (markdown.length <= budget * 4 && counter.count(markdown) <= budget) return { text: markdown, reduced: false };
  const passages = passagesOf(markdown);
  const score = scores(passages, goalTerms(goal));
  // The opening (title, lead) first, then by score; ties keep the page's order.
  const order = passages.map((_, i) => i).sort((a, b) => Number(b === 0) - Number(a === 0) || score[b]! - score[a]! || a - b);
  const kept: number[] = [];
  let used = 0;
  for (const i of order) {
    if (budget - used < 16) break;
    const cost = counter.count(passages[i]!) + 4;
    if (used + cost > budget) continue;
    kept.push(i);
    used += cost;
  }
  if (!kept.length) return { text: counter.head(markdown, budget), reduced: true };
  kept.sort((a, b) => a - b);
  let text = '';
  kept.forEach((i, k) => {
    text += (k === 0 ? (i > 0 ? GAP_MARK.trimStart() : '') : i === kept[k - 1]! + 1 ? '\n\n' : GAP_MARK) + passages[i];
  });
  if (kept.at(-1)! < passages.length - 1) text += GAP_MARK.trimEnd();
  return { text, reduced: true };
}

/** A page to read in parts: each part's text, and whether passages were left out to fit them. */
export interface PageParts {
  parts: string[];
  reduced: boolean;
}

/**
 * The page as parts of at most `budget` tokens each, in its order, split between passages (a
 * single passage longer than a part is cut to one): read one by one, the whole page is read. A
 * page longer than `maxParts` parts is first reduced to the passages that bear most on the goal
 * (passagesForGoal) within `maxParts` parts' worth.
 */
export function partsForGoal(markdown: string, goal: string, budget: number, maxParts: number, counter: TokenCounter): PageParts {
  // Packing passages into parts leaves some room in each: a tenth of the parts' worth.
  const whole = passagesForGoal(markdown, goal, Math.floor(budget * maxParts * 0.9), counter);
  if (!whole.reduced && markdown.length <= budget * 4 && counter.count(markdown) <= budget) return { parts: [markdown], reduced: false };
  const parts: string[] = [];
  let current = '';
  let used = 0;
  for (const passage of whole.text.split(/\n{2,}/)) {
    let text = passage;
    let cost = counter.count(passage) + 4;
    if (cost > budget) {
      text = counter.head(passage, budget - 4);
      cost = budget;
    }
    if (current && used + cost > budget) {
      parts.push(current);
      current = '';
      used = 0;
    }
    current += (current ? '\n\n' : '') + text;
    used += cost;
  }
  if (current) parts.push(current);
  return { parts: parts.slice(0, maxParts), reduced: whole.reduced };
}

/** The most page sentences with figures code adds to a reading's evidence. */
const MAX_FIGURE_SENTENCES = 3;

/**
 * The page's own sentences that state a figure (a number) bearing on the goal (sharing a word with
 * it) and whose numbers the model's evidence left out, best first, at most three: a small model
 * often describes a page ("it gives the tensile strength") instead of quoting it, and the figure
 * is what the reader needs. When the evidence has no figure at all, a sentence with one need not
 * share a word with the goal (the model's goal is often only the page's name); those come in the
 * page's order after the ones that do. Verbatim page text, so the source still says what it is
 * cited for.
 */
export function figuresLeftOut(pageText: string, goal: string, evidence: string): string[] {
  const wanted = new Set(goalTerms(goal));
  const numbersIn = (s: string) => s.match(/\d+(?:[.,]\d+)*/g) ?? [];
  const have = new Set(numbersIn(evidence).map((n) => n.replace(/,/g, '')));
  const described = have.size === 0;
  const sentences = pageText
    .replace(/\[…\]/g, ' ')
    .split(/\n+/)
    .flatMap((line) => line.replace(/^\s*(?:#{1,6}|[-*+]|\d+[.)]|\|)\s*/, '').split(/(?<=[.!?])\s+(?=\p{Lu})/u))
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length >= 12 && s.length <= 400);
  const scored = sentences.flatMap((s) => {
    const numbers = numbersIn(s).filter((n) => !/^(19|20)\d\d$/.test(n) || numbersIn(s).length === 1);
    if (!numbers.length || numbers.every((n) => have.has(n.replace(/,/g, '')))) return [];
    const overlap = new Set(goalTerms(s).filter((t) => wanted.has(t))).size;
    return overlap || described ? [{ s, overlap }] : [];
  });
  return [...new Set(scored.sort((a, b) => b.overlap - a.overlap).map((x) => x.s))].slice(0, MAX_FIGURE_SENTENCES);
}
