// Token-aware chunking. A section is cut into pieces (sentences and lines; a sentence longer than
// a chunk by tokens), each counted once with cl100k_base (a good estimate of most embedding
// models' limits). Pieces are packed up to the limit and a chunk ends at the strongest boundary
// in its second half: a paragraph, else a sentence, else a line. The next chunk repeats whole
// sentences from the end of the previous one. A chunk's text is always a slice of the section's
// text, never re-joined, so "3.5" or a table row comes out exactly as it went in.
import { countTokens as countIn, decodeTokens, encodeTokens } from '../llm/tokens';
import type { ParsedDocument, Section } from './parse';

export interface ChunkOptions {
  maxTokens?: number;
  overlapTokens?: number;
}

/** A document as its chunks: what a parse thread hands back for ingestion. */
export interface ChunkedDocument {
  title: string;
  pages?: number;
  chunks: Chunk[];
}

export interface Chunk {
  seq: number;
  text: string;
  headingPath: string[];
  page?: number;
  tokens: number;
}

/** Tokens in cl100k_base (runs of more than 32 characters without a break counted in parts:
 *  src/activities/llm/tokens.ts). */
export function countTokens(text: string): number {
  return countIn(text, 'cl100k');
}

/** How good a place to end a chunk the end of a piece is. */
const enum Boundary {
  Token = 0,
  Line = 1,
  Sentence = 2,
  Paragraph = 3,
}

/** [start, end) of the section text: the whitespace before the piece, then the piece. */
interface Piece {
  start: number;
  end: number;
  tokens: number;
  after: Boundary;
}

// A sentence ends at . ! ? … (and closing quotes or brackets) before whitespace, so "3.5" and
// "example.com" are not cut; CJK full stops need no space. Any newline ends a line; a blank line
// ends a paragraph.
const BREAKS = /([.!?…]+["'”’»)\]]*(?=\s|$)|[。！？]+["'”’」』)]*)|([ \t]*\n\s*)/g;

function pieces(text: string, max: number): Piece[] {
  const cuts: { at: number; after: Boundary }[] = [];
  for (const m of text.matchAll(BREAKS)) {
    const sentence = m[1] !== undefined;
    const at = sentence ? m.index + m[1]!.length : m.index;
    const after = sentence ? Boundary.Sentence : /\n[^\n]*\n/.test(m[2]!) ? Boundary.Paragraph : Boundary.Line;
    const last = cuts.at(-1);
    if (last?.at === at) last.after = Math.max(last.after, after);
    else if (at > 0 && at < text.length) cuts.push({ at, after });
  }
  cuts.push({ at: text.length, after: Boundary.Paragraph });
  const out: Piece[] = [];
  let start = 0;
  for (const { at, after } of cuts) {
    const tokens = countTokens(text.slice(start, at));
    if (tokens <= max) out.push({ start, end: at, tokens, after });
    else out.push(...splitByTokens(text, start, at, max, after));
    start = at;
  }
  return out;
}

/** A sentence longer than a chunk (a long table row, a URL list, text without punctuation), cut
 *  every `max` tokens at a place where the cut is also a character boundary. */
function splitByTokens(text: string, from: number, to: number, max: number, after: Boundary): Piece[] {
  const slice = text.slice(from, to);
  const ids = encodeTokens(slice, 'cl100k');
  const out: Piece[] = [];
  let at = 0;
  let offset = 0;
  while (at < ids.length) {
    let end = Math.min(ids.length, at + max);
    let part = decodeTokens(ids.slice(at, end));
    // A token may hold half a character (emoji, CJK): step back until the part is whole text.
    while (end > at + 1 && !(slice.startsWith(part, offset) && countTokens(part) <= max)) part = decodeTokens(ids.slice(at, --end));
    while (!slice.startsWith(part, offset) && end < ids.length) part = decodeTokens(ids.slice(at, ++end));
    if (part) out.push({ start: from + offset, end: from + offset + part.length, tokens: countTokens(part), after: Boundary.Token });
    at = end;
    offset += part.length;
  }
  const last = out.at(-1);
  if (last) last.after = after;
  return out;
}

/** The chunks of one section (`text` already trimmed and non-empty). */
function chunkSection(text: string, max: number, overlap: number): { text: string; tokens: number }[] {
  const ps = pieces(text, max);
  const sliceOf = (from: number, to: number) => text.slice(ps[from]!.start, ps[to - 1]!.end).trim();
  const out: { text: string; tokens: number }[] = [];
  let from = 0; // first piece of this chunk, overlap included
  let fresh = 0; // first piece not yet in any chunk
  while (fresh < ps.length) {
    let budget = ps.slice(from, fresh).reduce((n, p) => n + p.tokens, 0);
    // The overlap gives way when it leaves no room for a new piece.
    while (from < fresh && budget + ps[fresh]!.tokens > max) budget -= ps[from++]!.tokens;
    let to = fresh;
    while (to < ps.length && budget + ps[to]!.tokens <= max) budget += ps[to++]!.tokens;
    if (to === fresh) to++; // a piece over the limit on its own (cannot happen after splitByTokens, but must not stall)
    if (to < ps.length) to = bestCut(ps, from, fresh, to, max);
    // Counted pieces may tokenise differently once joined: the chunk's own count has the last word.
    let chunk = sliceOf(from, to);
    let tokens = countTokens(chunk);
    while (tokens > max && to - from > 1) {
      if (to - 1 > fresh) to--;
      else from++;
      chunk = sliceOf(from, to);
      tokens = countTokens(chunk);
    }
    if (chunk) out.push({ text: chunk, tokens });
    fresh = to;
    from = overlapStart(ps, from, to, overlap);
  }
  return out;
}

/** Where to end a chunk that could run to `to`: the strongest boundary in its second half,
 *  the latest of equals; `to` itself when the chunk has no boundary there. */
function bestCut(ps: Piece[], from: number, fresh: number, to: number, max: number): number {
  let best = to;
  let bestAfter = ps[to - 1]!.after;
  let size = ps.slice(from, to).reduce((n, p) => n + p.tokens, 0);
  for (let k = to - 1; k > fresh && size - ps[k]!.tokens >= max / 2; k--) {
    size -= ps[k]!.tokens;
    if (ps[k - 1]!.after > bestAfter) {
      best = k;
      bestAfter = ps[k - 1]!.after;
    }
  }
  return best;
}

/** The first piece of the next chunk: whole pieces from the end of this one, up to `overlap`
 *  tokens, never the whole chunk (the next must move on) and never a token-cut fragment. */
function overlapStart(ps: Piece[], from: number, to: number, overlap: number): number {
  let start = to;
  let carried = 0;
  while (start - 1 > from && ps[start - 2]!.after !== Boundary.Token && carried + ps[start - 1]!.tokens <= overlap) {
    carried += ps[--start]!.tokens;
  }
  return start;
}

const samePlace = (a: Section, b: Section) => a.page === b.page && a.headingPath.join('\u0000') === b.headingPath.join('\u0000');

/**
 * The document's chunks, `seq` from 0 without gaps. Consecutive sections at the same place
 * (heading path and page) are read as one; sections at different places never share a chunk.
 * Deterministic: the same document and options give the same chunks.
 */
export function chunkDocument(doc: ParsedDocument, opts: ChunkOptions = {}): Chunk[] {
  const max = Math.max(1, Math.floor(opts.maxTokens ?? 350));
  const overlap = Math.max(0, Math.min(Math.floor(opts.overlapTokens ?? 50), Math.floor(max / 2)));
  const merged: Section[] = [];
  for (const s of doc.sections) {
    const text = s.text.trim();
    if (!text) continue;
    const prev = merged.at(-1);
    if (prev && samePlace(prev, s)) prev.text = `${prev.text}\n\n${text}`;
    else merged.push({ ...s, text });
  }
  return merged
    .flatMap((s) =>
      chunkSection(s.text, max, overlap).map((c) => ({
        text: c.text,
        headingPath: [...s.headingPath],
        ...(s.page !== undefined ? { page: s.page } : {}),
        tokens: c.tokens,
      })),
    )
    .map((c, seq) => ({ seq, ...c }));
}

/** The parsed document's title and pages with its chunks (its sections left behind). */
export function chunkParsed(doc: ParsedDocument, opts: ChunkOptions): ChunkedDocument {
  return { title: doc.title, ...(doc.pages !== undefined ? { pages: doc.pages } : {}), chunks: chunkDocument(doc, opts) };
}
