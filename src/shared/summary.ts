// The executive summary at the top of every report: a few cited sentences a reader takes in a
// minute, under a heading in the report's language. The model writes it (the `summary` field of
// the reporter's answer); code judges it (present, short, citing a source once grounded) and,
// when it is not usable, builds one from the report's own cited key points. It is placed in the
// draft as the first section, so grounding, renumbering and the claim check treat its sentences
// like every other.
import { plural } from './plural';
import type { GroundedCitations } from './citations';
import { sentenceSpans } from './claims';
import type { ReportDoc } from './report-doc';

/** The summary's heading by language (the locale's first subtag); English for any other. */
export const SUMMARY_HEADINGS: Readonly<Record<string, string>> = {
  en: 'Executive summary',
  de: 'Zusammenfassung',
  fr: 'Synthèse',
  es: 'Resumen ejecutivo',
  it: 'Sintesi',
  pt: 'Resumo executivo',
  nl: 'Samenvatting',
  zh: '执行摘要',
  'zh-hant': '執行摘要',
  ja: 'エグゼクティブサマリー',
  ko: '요약',
  ru: 'Краткое изложение',
  pl: 'Podsumowanie',
  sv: 'Sammanfattning',
  da: 'Resumé',
  tr: 'Yönetici özeti',
};

/** Bounds of a summary: a few sentences, read in a minute. */
export const SUMMARY_LIMITS = { sentences: 5, words: 120 } as const;
/** Key points code takes into a summary it builds. */
const FALLBACK_SENTENCES = 3;

/** The summary heading for a locale ("de-DE" → Zusammenfassung; traditional Chinese has its own). */
export function summaryHeading(locale: string | undefined): string {
  const tag = (locale ?? 'en').toLowerCase().replace(/_/g, '-');
  if (/^zh-(?:hant|tw|hk|mo)\b/.test(tag)) return SUMMARY_HEADINGS['zh-hant']!;
  return SUMMARY_HEADINGS[tag.split('-')[0]!] ?? SUMMARY_HEADINGS.en!;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A heading line of a summary section, in any language of the table, or the usual English names. */
const SUMMARY_HEADING = new RegExp(
  `^(#{1,6})[ \\t]*\\**[ \\t]*(?:${[...new Set(Object.values(SUMMARY_HEADINGS)), 'summary', 'tl;dr'].map(escape).join('|')})[ \\t]*:?\\**[ \\t]*$`,
  'i',
);

/** Sentences of a text, cut where the claim check cuts them (shared/claims.ts), citations staying
 *  with theirs. */
export function sentencesOf(text: string): string[] {
  const line = text.replace(/\s+/g, ' ');
  return sentenceSpans(line)
    .map(([start, end]) => line.slice(start, end).trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s.replace(/\[\d+\]/g, '')));
}

/** Words of a text, citations not counted; each two CJK characters count as one word. */
export function wordCount(text: string): number {
  const plain = text.replace(/\[\d+\]/g, ' ');
  const cjk = plain.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu)?.length ?? 0;
  const words = plain.replace(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu, ' ').match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
  return words + Math.ceil(cjk / 2);
}

/** Markdown a summary does not carry: headings, list marks, emphasis, links (their text stays).
 *  Code spans stay as they are: what looks like a citation inside one is none. */
function plainText(markdown: string): string {
  return markdown
    .replace(/^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)/gm, '')
    .split(/(`[^`\n]*`)/)
    .map((part, i) =>
      i % 2
        ? part
        : part
            .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
            .replace(/\[([^\]]+)\]\((?:[^)]*)\)/g, '$1')
            .replace(/[*_]/g, ''),
    )
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Why a grounded summary is not usable, or undefined. `cited`: citation marks that resolved. */
export function summaryProblem(text: string | undefined, cited: number, references: number): string | undefined {
  const plain = (text ?? '').trim();
  if (!plain) return 'wrote none';
  const sentences = sentencesOf(plain).length;
  const words = wordCount(plain);
  if (sentences > SUMMARY_LIMITS.sentences || words > SUMMARY_LIMITS.words) {
    return `wrote one of ${plural(sentences, 'sentence')} and ${plural(words, 'word')} (at most ${SUMMARY_LIMITS.sentences} and ${SUMMARY_LIMITS.words})`;
  }
  if (references > 0 && cited === 0) return 'wrote one that cites none of the references';
  return undefined;
}

/** The draft without a summary section of the model's own, and that section's text. */
export function takeSummarySection(draft: string): { draft: string; section?: string } {
  const lines = draft.split('\n');
  // Only a section of its own (# or ##): a "### Summary" inside another section is part of it.
  const at = lines.findIndex((l) => (SUMMARY_HEADING.exec(l.trim())?.[1]?.length ?? 9) <= 2);
  if (at < 0) return { draft };
  const depth = SUMMARY_HEADING.exec(lines[at]!.trim())![1]!.length;
  let end = lines.findIndex((l, i) => i > at && /^(#{1,6})\s/.test(l) && /^(#{1,6})/.exec(l)![1]!.length <= depth);
  if (end < 0) end = lines.length;
  const section = lines
    .slice(at + 1, end)
    .join('\n')
    .trim();
  const rest = [...lines.slice(0, at), ...lines.slice(end)]
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { draft: rest, ...(section ? { section } : {}) };
}

/** An English sentence that leans on the one before it ("Its cost fell…", "It also…"): alone in a
 *  summary it reads as a fragment. */
const LEANS_BACK =
  /^(?:it|its|this|these|that|those|they|their|them|he|she|his|her|also|moreover|however|furthermore|additionally|in addition|but|and|so|thus|therefore|then)\b/i;

/** The key point's sentence `k`, with the sentences before it that it leans on. */
function withItsLead(sentences: string[], k: number): string {
  let from = k;
  while (from > 0 && LEANS_BACK.test(sentences[from]!)) from--;
  return sentences.slice(from, k + 1).join(' ');
}

/**
 * A summary code builds from a grounded draft: the first sentence of each key point (the first
 * list's items) that cites a known reference (with the sentences of the point it leans on: "Its
 * cost fell…" comes with what "its" is), then cited sentences of the text, up to three; with no
 * citation anywhere, the text's first sentences. Bounded like a model's summary.
 */
export function summaryFromDraft(grounded: string): string {
  // Grounding left only the numbers of citable references.
  const known = (s: string) => /\[\d+\]/.test(s.replace(/`[^`\n]*`/g, ''));
  const blocks = grounded
    .replace(/```[\s\S]*?```/g, '')
    .split('\n')
    .filter((l) => !/^\s*(?:#{1,6}\s|\||>)/.test(l));
  // An item code listed ("- **Page title**: what it says") gives what it says, not its title.
  const items = blocks
    .filter((l) => /^\s*(?:[-*+]|\d+[.)])\s+/.test(l))
    .map((l) => plainText(l.replace(/^\s*(?:[-*+]|\d+[.)])\s+\*\*[^*\n]{1,200}\*\*\s*:\s*/, '')));
  const prose = blocks
    .filter((l) => !/^\s*(?:[-*+]|\d+[.)])\s+/.test(l))
    .join('\n')
    .split(/\n\s*\n/)
    .map(plainText);
  const picked: string[] = [];
  const take = (s: string) => {
    if (picked.length >= FALLBACK_SENTENCES || picked.some((p) => nearlySame(p, s))) return;
    const text = [...picked, s].join(' ');
    if (wordCount(text) > SUMMARY_LIMITS.words || sentencesOf(text).length > SUMMARY_LIMITS.sentences) return;
    picked.push(s);
  };
  for (const item of items) {
    const sentences = wholeSentences(item);
    const k = sentences.findIndex(known);
    if (k >= 0) take(withItsLead(sentences, k));
  }
  for (const p of prose) for (const s of wholeSentences(p)) if (known(s)) take(s);
  if (!picked.length) for (const s of wholeSentences([...items, ...prose].join(' '))) take(s);
  return picked.filter(Boolean).join(' ');
}

/** Words of a text, lower case, citations left out. */
const wordsOf = (text: string) =>
  new Set(
    text
      .replace(/\[\d+\]/g, ' ')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [],
  );

/** Two sentences that say the same in nearly the same words (the findings repeat themselves: "The
 *  tramway opened on 14 March 2022." and "The Ostervik tramway opened on 14 March 2022."): at least
 *  NEARLY_SAME of the shorter one's words are in the other. */
const NEARLY_SAME = 0.8;
function nearlySame(a: string, b: string): boolean {
  const [x, y] = [wordsOf(a), wordsOf(b)];
  const shorter = x.size <= y.size ? x : y;
  const longer = shorter === x ? y : x;
  if (!shorter.size) return a === b;
  return [...shorter].filter((w) => longer.has(w)).length / shorter.size >= NEARLY_SAME;
}

/**
 * The sentences of a text that read as sentences in a summary: a list run into one line
 * ("Figures: - Density: 2.71 g/cm³. - …") split at its marks, its lead-in ending in a colon left
 * out, and so is a label with a value ("Density: 2.71 g/cm³.", a colon in six words or fewer) and
 * text that does not end as a sentence does (a list of titles and citations).
 */
function wholeSentences(text: string): string[] {
  return sentencesOf(text)
    .flatMap((s) => s.split(/(?:^|\s)[-*+]\s+(?=\S)/))
    .map((s) => s.trim())
    .filter((s) => {
      const bare = s.replace(/\[\d+\]/g, '').trim();
      // A sentence ends as one; a list of titles and citations ("Velmar datasheet — [1]") does not.
      const ended = /[.!?。！？]["'”’)\]]*$/u.test(bare);
      return ended && !(bare.includes(':') && wordCount(bare) <= 6);
    });
}

export interface SummarizedDraft {
  /** The draft with the summary as its first section. */
  draft: string;
  /** The summary as placed (grounded; [n] of the numbers the reporter was shown). */
  summary: string;
  /** Why the model's summary was replaced by code's, or undefined when it was used. */
  problem?: string;
}

/**
 * Puts the executive summary at the top of a draft: the model's (its `summary` field, or a summary
 * section it wrote into the draft) when it is usable, else one code builds from the draft's cited
 * key points. `ground` grounds a text the way the draft is grounded (citations to [n], links checked);
 * `references`: how many references the reporter was shown (the citable ones).
 */
export function withSummary(args: {
  draft: string;
  summary?: string | null | undefined;
  locale: string | undefined;
  references: number;
  ground: (text: string) => GroundedCitations;
}): SummarizedDraft {
  const taken = takeSummarySection(args.draft);
  const candidate = plainText(args.summary?.trim() || taken.section || '');
  const grounded = candidate ? args.ground(candidate) : undefined;
  const cited = grounded ? grounded.marks - grounded.unresolved - grounded.uncited : 0;
  const problem = summaryProblem(grounded?.markdown, cited, args.references);
  const summary = problem ? summaryFromDraft(args.ground(taken.draft).markdown) : grounded!.markdown.trim();
  const top = summary ? `## ${summaryHeading(args.locale)}\n\n${summary}\n\n` : '';
  return { draft: `${top}${taken.draft}`, summary, ...(problem ? { problem } : {}) };
}

/** True for a heading's text that names an executive summary (in any language of the table). */
export function isSummaryHeading(text: string): boolean {
  return SUMMARY_HEADING.test(`## ${text.trim()}`);
}

/** The executive summary of a stored report (undefined for reports written before it): its
 *  section's text up to the next heading. */
export function reportSummary(doc: Pick<ReportDoc, 'sections'>): string | undefined {
  const section = doc.sections.find((s) => isSummaryHeading(s.heading));
  const text = section?.markdown.split(/\n(?=#{1,6}\s)/)[0]!.trim();
  return text || undefined;
}
