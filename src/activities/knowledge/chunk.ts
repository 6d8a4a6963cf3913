// Token-aware chunking: sections are split at paragraphs, then sentences, then tokens for a giant
// sentence; chunks of one section overlap by whole sentences; small neighbouring sections under the
// same heading path and page are merged. Tokens are counted with cl100k_base (a good estimate for
// most embedding models' limits), once per sentence.
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import type { ParsedDocument, Section } from './parse';

export interface Chunk {
  seq: number;
  text: string;
  headingPath: string[];
  page?: number;
  tokens: number;
}

let encoder: Tiktoken | undefined;
const enc = () => (encoder ??= new Tiktoken(cl100k));

export function countTokens(text: string): number {
  return text ? enc().encode(text).length : 0;
}

interface Piece {
  text: string;
  tokens: number;
  /** What follows it: a blank line (end of paragraph), a newline (end of line: table rows), a space. */
  joiner: '\n\n' | '\n' | ' ';
}

const SENTENCE = /[^.!?]+(?:[.!?]+["')\]]*|$)\s*/g;

/** A section as sentence-sized pieces of at most `max` tokens each. */
function pieces(text: string, max: number): Piece[] {
  const out: Piece[] = [];
  for (const para of text.split(/\n\s*\n/)) {
    const lines = para.split('\n');
    lines.forEach((line, li) => {
      const sentences =
        line
          .match(SENTENCE)
          ?.map((s) => s.trim())
          .filter(Boolean) ?? [];
      sentences.forEach((s, i) => {
        const joiner = i < sentences.length - 1 ? ' ' : li < lines.length - 1 ? '\n' : '\n\n';
        const tokens = countTokens(s);
        if (tokens <= max) return void out.push({ text: s, tokens, joiner });
        // A sentence longer than a chunk (a long row, a URL list): cut it by tokens.
        const ids = enc().encode(s);
        for (let at = 0; at < ids.length; at += max) {
          const part = enc()
            .decode(ids.slice(at, at + max))
            .trim();
          if (part) out.push({ text: part, tokens: countTokens(part), joiner: at + max >= ids.length ? joiner : ' ' });
        }
      });
    });
  }
  return out;
}

const join = (ps: Piece[]) => ps.map((p, i) => p.text + (i < ps.length - 1 ? p.joiner : '')).join('');

function chunkSection(s: Section, max: number, overlap: number): Omit<Chunk, 'seq'>[] {
  const ps = pieces(s.text, max);
  const out: Omit<Chunk, 'seq'>[] = [];
  let cur: Piece[] = [];
  let tokens = 0;
  const emit = () => {
    if (!cur.length) return;
    const text = join(cur);
    out.push({ text, headingPath: s.headingPath, ...(s.page !== undefined ? { page: s.page } : {}), tokens: countTokens(text) });
  };
  for (const p of ps) {
    if (tokens + p.tokens > max && cur.length) {
      emit();
      // Carry whole sentences from the end of this chunk, up to `overlap` tokens, into the next.
      const carry: Piece[] = [];
      let carried = 0;
      for (let i = cur.length - 1; i > 0 && carried + cur[i]!.tokens <= overlap; i--) {
        carry.unshift(cur[i]!);
        carried += cur[i]!.tokens;
      }
      if (carried + p.tokens > max) {
        carry.length = 0;
        carried = 0;
      }
      cur = carry;
      tokens = carried;
    }
    cur.push(p);
    tokens += p.tokens + 1;
  }
  emit();
  return out;
}

const samePlace = (a: Section, b: Section) => a.page === b.page && a.headingPath.join('\u0000') === b.headingPath.join('\u0000');

export function chunkDocument(doc: ParsedDocument, opts: { maxTokens?: number; overlapTokens?: number } = {}): Chunk[] {
  const max = opts.maxTokens ?? 350;
  const overlap = Math.min(opts.overlapTokens ?? 50, Math.floor(max / 2));
  // Neighbouring sections at the same place (a Markdown file's paragraphs under one heading) merge.
  const merged: Section[] = [];
  for (const s of doc.sections) {
    const text = s.text.trim();
    if (!text) continue;
    const prev = merged.at(-1);
    if (prev && samePlace(prev, s)) prev.text = `${prev.text}\n\n${text}`;
    else merged.push({ ...s, text });
  }
  return merged.flatMap((s) => chunkSection(s, max, overlap)).map((c, seq) => ({ seq, ...c }));
}
