// Tokens counted with the model's tokenizer family. OpenAI's current models (gpt-4o, gpt-4.1,
// gpt-5, the o-series) use o200k_base; gpt-4 and gpt-3.5 use cl100k_base, and so, near enough,
// do Qwen 2/2.5/3 and Llama 3 (their vocabularies extend cl100k_base's merges), which is why it is
// the family of every other model too. LLM_TOKENIZER names the family where the model's name does
// not tell.
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { BytePairEncoder } from './bpe';

export type TokenizerFamily = 'o200k' | 'cl100k';

/** The family a model's name belongs to (`auto`), or the one the operator named. */
export function tokenizerFamily(model: string, setting: 'auto' | TokenizerFamily = 'auto'): TokenizerFamily {
  if (setting !== 'auto') return setting;
  const name = model.toLowerCase().replace(/^.*\//, '');
  return /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o[1-9](-|$)|chatgpt-|gpt-oss)/.test(name) ? 'o200k' : 'cl100k';
}

const encoders = new Map<TokenizerFamily, BytePairEncoder>();
function encoder(family: TokenizerFamily): BytePairEncoder {
  let e = encoders.get(family);
  if (!e) encoders.set(family, (e = new BytePairEncoder(family === 'o200k' ? o200k : cl100k)));
  return e;
}

// js-tiktoken's byte-pair merge is quadratic in the length of one pre-token: 20,000 letters
// without a space take 45 s, 1,000 CJK characters half a second. Runs longer than RUN are
// encoded RUN characters at a time, which bounds the cost and changes the count only for such
// runs (by a token or so per seam, upwards: a safe estimate against a limit). The ids still
// decode to the text exactly. Text is text: "<|endoftext|>" in a page is not a special token.
const RUN = 32;
const LONG_RUNS = /\S{33,}|\s{33,}/g;
const HAS_LONG_RUN = /\S{33}|\s{33}/;

/** The token ids of a text in a family (long runs without a break encoded in parts). */
export function encodeTokens(text: string, family: TokenizerFamily = 'cl100k'): number[] {
  const plain = (part: string) => encoder(family).encode(part);
  if (!HAS_LONG_RUN.test(text)) return plain(text);
  const ids: number[] = [];
  const add = (part: string) => {
    for (const id of plain(part)) ids.push(id);
  };
  let last = 0;
  for (const m of text.matchAll(LONG_RUNS)) {
    if (m.index > last) add(text.slice(last, m.index));
    const runEnd = m.index + m[0].length;
    for (let at = m.index; at < runEnd;) {
      let end = Math.min(runEnd, at + RUN);
      if (end < runEnd && /[\udc00-\udfff]/.test(text[end]!)) end++; // not between the halves of a surrogate pair
      add(text.slice(at, end));
      at = end;
    }
    last = runEnd;
  }
  if (last < text.length) add(text.slice(last));
  return ids;
}

/** The text of token ids (a cut through a character decodes to U+FFFD). */
export function decodeTokens(ids: number[], family: TokenizerFamily = 'cl100k'): string {
  return encoder(family).decode(ids);
}

/** Tokens in a text, in a family. */
export function countTokens(text: string, family: TokenizerFamily = 'cl100k'): number {
  return text ? encodeTokens(text, family).length : 0;
}

/** Counts tokens of one family. */
export interface TokenCounter {
  family: TokenizerFamily;
  count(text: string): number;
  /** The longest start of `text` within `tokens`, ended at a paragraph, sentence or word break
   *  when one is near (the cut never splits a word it can avoid splitting). */
  head(text: string, tokens: number): string;
}

export function tokenCounter(family: TokenizerFamily): TokenCounter {
  const count = (text: string) => countTokens(text, family);
  return {
    family,
    count,
    head(text, tokens) {
      if (tokens <= 0) return '';
      const ids = encodeTokens(text, family);
      if (ids.length <= tokens) return text;
      // The decoded prefix can end inside a character (a CJK character is several tokens): drop it.
      const raw = decodeTokens(ids.slice(0, tokens), family).replace(/\uFFFD+$/, '');
      const prefix = text.startsWith(raw) ? raw : text.slice(0, raw.length);
      return atBreak(prefix);
    },
  };
}

/** A cut moved back to the last paragraph, sentence or word break in its final fifth. */
function atBreak(prefix: string): string {
  const floor = Math.floor(prefix.length * 0.8);
  for (const re of [/\n\s*\n/g, /[.!?。！？](?=\s|$)/g, /\s/g]) {
    let at = -1;
    for (const m of prefix.matchAll(re)) if (m.index >= floor) at = m.index + (re.source.startsWith('[') ? 1 : 0);
    if (at > 0) return prefix.slice(0, at).trimEnd();
  }
  return prefix;
}
