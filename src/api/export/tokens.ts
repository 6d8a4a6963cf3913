// What the PDF, Word and slide exports read alike from the report's Markdown tokens (marked): where
// the reference list is, a text cut at its citations of known references, a list item's first
// link, and entities marked keeps.
import type { Token, Tokens } from 'marked';

/** A text's pieces: plain text, and each citation `[n]` of a reference 1..refCount. */
export function citationPieces(text: string, refCount: number): ({ text: string } | { n: number })[] {
  if (!refCount || !/\[\d/.test(text)) return [{ text }];
  const out: ({ text: string } | { n: number })[] = [];
  let last = 0;
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    const n = Number(m[1]);
    if (n < 1 || n > refCount) continue;
    if (m.index > last) out.push({ text: text.slice(last, m.index) });
    out.push({ n });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last) });
  return out;
}

/** The first link's address in a list item. */
export function findLink(ts: Token[] | undefined): string | undefined {
  for (const t of ts ?? []) {
    if (t.type === 'link') return (t as Tokens.Link).href;
    const inner = findLink((t as { tokens?: Token[] }).tokens);
    if (inner) return inner;
  }
  return undefined;
}

/** The text inline tokens show, their markup and escapes gone (a reference's title, say). */
export function inlineText(ts: Token[] | undefined): string {
  let out = '';
  for (const t of ts ?? []) {
    const inner = (t as { tokens?: Token[] }).tokens;
    if (inner?.length) out += inlineText(inner);
    else if (t.type === 'br') out += ' ';
    else if (t.type !== 'html' && t.type !== 'image' && 'text' in t) out += decode(String(t.text));
  }
  return out.replace(/\s+/g, ' ');
}

/** marked keeps HTML entities in token text. */
export function decode(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}

/** The reference list: the first list after the "References" heading (-1: none). */
export function referenceListAt(tokens: Token[]): number {
  const headingAt = tokens.findIndex((t) => t.type === 'heading' && /^references$/i.test((t as Tokens.Heading).text.trim()));
  const next = headingAt < 0 ? -1 : tokens.findIndex((t, i) => i > headingAt && t.type !== 'space');
  return next >= 0 && tokens[next]!.type === 'list' ? next : -1;
}
