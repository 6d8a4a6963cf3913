// A report sentence that repeats a finding's sentence word for word keeps the finding's citation.
// A small model copies sentences of the findings into the report and drops their [n] marks (the
// quality bench's reports: facts stated, none cited); the words are the finding's, and so is the
// source. Only a long repeat counts (MIN_WORDS), only a sentence that cites nothing gets one, and
// only a source the report may cite (a page the run read) is added. A sentence that puts figures of
// the findings in words of its own ("Its tensile strength is 610 MPa, density 2.71 g/cm3") gets the
// one source whose finding sentences state every figure it has (MIN_FIGURES or more); the claim
// check then judges it like any citation. Given the sources' own texts (what the run read), a
// sentence's figures may be stated there too, and a short line a page states word for word with its
// figure ("Tensile strength: 610 MPa.", which code lists from a page and a small model copies) gets
// that page, when only one says it.
import { sentenceSpans } from './claims';
import { SOURCE_ID } from './citations';

const CITATION = /\[\d+(?:\s*,\s*\d+)*\](?!\()/;

/** Fewer words than this repeat by chance ("Solar costs fell sharply."). */
const MIN_WORDS = 8;
/** Fewer figures than this match a source by chance (one year, one count). */
const MIN_FIGURES = 2;
/** A quoted line with one figure names its source when it has this many words and figures or more. */
const MIN_QUOTE_WORDS = 3;

/** The figures of a text, citations left out: "41,000" and "41000" alike, "2.71" as written. */
function figuresOf(text: string): Set<string> {
  const bare = text.replace(/\[[^\]]*\]/g, ' ');
  return new Set([...bare.matchAll(/\d+(?:[.,]\d+)*/g)].map((m) => m[0].replace(/,(?=\d{3}(?!\d))/g, '')));
}

/** Lower-case words and figures, without citations, Markdown marks or punctuation between them. */
function normalized(text: string): string {
  return text
    .replace(/\[[^\]]*\]/g, ' ')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}%]+/gu, ' ')
    .trim();
}

interface CitedSentence {
  words: string;
  sourceIds: string[];
  figures: Set<string>;
}

/** The findings' sentences with the sources each cites: its own ids, else its paragraph's or list
 *  item's when that cites exactly one source. An id after a full stop ("… in 2022. [S…]") is the
 *  sentence's it follows (written as a number for the split, which keeps [n] with its sentence). */
function citedSentences(findings: { content: string }[]): CitedSentence[] {
  const out: CitedSentence[] = [];
  for (const f of findings)
    for (const block of f.content.split(/\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)/)) {
      const ids: string[] = [];
      const line = block
        .replace(/\s+/g, ' ')
        .replace(/\[((?:\s*S[0-9a-f]{8}\s*,?)+)\]/g, (_m, inner: string) =>
          (inner.match(SOURCE_ID) ?? []).map((id) => `[${ids.push(id) - 1}]`).join(''),
        );
      const blockIds = [...new Set(ids)];
      for (const [start, end] of sentenceSpans(line)) {
        const sentence = line.slice(start, end);
        const own = [...new Set([...sentence.matchAll(/\[(\d+)\]/g)].map((m) => ids[Number(m[1])]!))];
        const cited = own.length ? own : blockIds.length === 1 ? blockIds : [];
        if (cited.length) out.push({ words: normalized(sentence), sourceIds: cited, figures: figuresOf(sentence) });
      }
    }
  return out;
}

/**
 * Adds to each sentence of a draft (citations as [n]) whose line cites nothing the numbers of the
 * sources of a finding sentence it repeats: the whole draft sentence is in it, or it is in the draft
 * sentence, at least MIN_WORDS words long. Failing that, a sentence of MIN_FIGURES figures or more
 * gets the number of the one source whose finding sentences (those citing it alone) state them all.
 * With `sourceTexts` (source id to the text stored for it), the figures a source's text states count
 * as that source's, and a sentence with a figure and MIN_QUOTE_WORDS words or more that one source's
 * text holds word for word gets that source. Headings, code and table rows are left alone.
 * `numberOf` maps the sources the report may cite to their numbers; others are never added.
 */
export function citeRepeatedSentences(
  draft: string,
  findings: { content: string }[],
  numberOf: Map<string, number>,
  sourceTexts: Map<string, string> = new Map(),
): { markdown: string; added: number } {
  const known = citedSentences(findings)
    .map((s) => ({ ...s, numbers: [...new Set(s.sourceIds.map((id) => numberOf.get(id)).filter((n): n is number => n !== undefined))] }))
    .filter((s) => s.numbers.length);
  const texts = [...sourceTexts].flatMap(([id, text]) => {
    const n = numberOf.get(id);
    return n === undefined ? [] : [{ n, words: ` ${normalized(text)} `, figures: figuresOf(text) }];
  });
  if (!known.length && !texts.length) return { markdown: draft, added: 0 };
  const repeats = known.filter((k) => k.words.split(' ').length >= MIN_WORDS);
  // The figures each source's own sentences state.
  const figuresBy = new Map<number, Set<string>>();
  for (const k of known)
    if (k.numbers.length === 1) for (const f of k.figures) figuresBy.set(k.numbers[0]!, (figuresBy.get(k.numbers[0]!) ?? new Set()).add(f));
  for (const t of texts) for (const f of t.figures) figuresBy.set(t.n, (figuresBy.get(t.n) ?? new Set()).add(f));
  const byFigures = (sentence: string): number[] => {
    const figures = [...figuresOf(sentence)];
    if (figures.length < MIN_FIGURES) return [];
    const stating = [...figuresBy].filter(([, stated]) => figures.every((f) => stated.has(f))).map(([n]) => n);
    return stating.length === 1 ? stating : [];
  };
  const quoted = (sentence: string): number[] => {
    const words = normalized(sentence);
    if (!figuresOf(sentence).size || words.split(' ').length < MIN_QUOTE_WORDS) return [];
    const holding = [...new Set(texts.filter((t) => t.words.includes(` ${words} `)).map((t) => t.n))];
    return holding.length === 1 ? holding : [];
  };
  let added = 0;
  let inFence = false;
  const lines = draft.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    // A line (a paragraph or list item as models write them) that cites anything is left as written.
    if (inFence || /^\s*(```|~~~|#|\|)/.test(line) || CITATION.test(line)) return line;
    let out = '';
    let from = 0;
    for (const [start, end] of sentenceSpans(line)) {
      const sentence = line.slice(start, end);
      out += line.slice(from, start);
      from = end;
      const words = normalized(sentence);
      const repeated =
        words.split(' ').length >= MIN_WORDS
          ? repeats.find((k) => ` ${k.words} `.includes(` ${words} `) || ` ${words} `.includes(` ${k.words} `))
          : undefined;
      const figured = repeated ? [] : byFigures(sentence);
      const numbers = repeated?.numbers ?? (figured.length ? figured : quoted(sentence));
      if (!numbers.length) {
        out += sentence;
        continue;
      }
      added++;
      // The mark goes before the sentence's full stop, as the reporter writes it.
      const m = /^([\s\S]*?)([.!?…]+["'”’»)]*)?(\s*)$/.exec(sentence)!;
      out += `${m[1]!.replace(/\s+$/, '')} [${numbers.join(', ')}]${m[2] ?? ''}${m[3] ?? ''}`;
    }
    return out + line.slice(from);
  });
  return { markdown: lines.join('\n'), added };
}
