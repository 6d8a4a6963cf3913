// Full-text tokens for Chinese, Japanese and Korean. PostgreSQL's parser splits words at spaces and
// punctuation, so a Chinese sentence (no spaces) is one "word" and nothing inside it can be found.
// Instead, every run of CJK characters becomes its overlapping character bigrams (the approach of
// Lucene's CJKBigramFilter): "太阳能电池" → 太阳 阳能 能电 电池. A query is tokenised the same way, so a
// word of two or more characters matches wherever it occurs, without a dictionary or an extension
// (PGlite and a stock PostgreSQL have neither zhparser nor pg_bigm). Other text (Latin words,
// numbers) is left as it is for the `simple` configuration to split and lowercase.
//
// The index also keeps each character as a unigram, so that a one-character query word ("水",
// Korean "물") finds something; a query uses unigrams only for runs of one character, because
// a longer run's bigrams already say more than its single characters would.

/** Runs of Han (with 々 〇 〆), Hiragana, Katakana (with the prolonged sound mark ー) and Hangul. */
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3006]+/gu;

/** The bigrams of one run of CJK characters, with its unigrams when `unigrams` (or when it has one character). */
function runTokens(run: string, unigrams: boolean): string[] {
  const chars = Array.from(run);
  if (chars.length === 1) return chars;
  const out: string[] = [];
  for (let i = 0; i < chars.length; i++) {
    if (unigrams) out.push(chars[i]!);
    if (i + 1 < chars.length) out.push(chars[i]! + chars[i + 1]!);
  }
  return out;
}

function tokenise(text: string, unigrams: boolean): string {
  // NFKC folds full-width Latin and digits (ＧＰＵ２０２４) and half-width katakana (ｶﾀｶﾅ) to their usual forms.
  return text.normalize('NFKC').replace(CJK_RUN, (run) => ` ${runTokens(run, unigrams).join(' ')} `);
}

/** A text as it is indexed: CJK runs as bigrams and unigrams, everything else unchanged. */
export function cjkIndexText(text: string): string {
  return tokenise(text, true);
}

/** A query as it is searched: CJK runs as bigrams (a lone character as itself), everything else unchanged. */
export function cjkQueryText(text: string): string {
  return tokenise(text, false);
}
