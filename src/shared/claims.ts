// Claim-level grounding, the code half: the report body cut into cited sentences (a table row is
// one), the passage of a source that a sentence is compared with, and the removal of citations a
// verifier found unsupported. The model only judges; what counts and what changes is decided here.

/** A sentence of the report body that cites reference numbers. */
export interface CitedClaim {
  /** [start, end) of the sentence in the body, its trailing citations included. */
  start: number;
  end: number;
  /** The sentence without its citation markers. */
  text: string;
  /** The reference numbers it cites, each once, in order of appearance. */
  numbers: number[];
}

const MARKER = /\[(\d+)\](?!\()/g;
// A sentence ends at . ! ? … (and closing quotes) before whitespace or the end, so "3.5" and
// "example.com" stay whole; CJK full stops need no space. Citations right after the full stop
// ("… in 2024. [3]") still belong to the sentence they follow.
const SENTENCE_END = /(?:[.!?…]+["'”’»)]*(?=\s|$)|[。！？]+)(?:\s*\[\d+\](?!\())*/g;

/** Where the sentences of one line start and end ([start, end)), each with its trailing citations. */
export function sentenceSpans(line: string): [number, number][] {
  const spans: [number, number][] = [];
  let from = 0;
  for (const m of line.matchAll(SENTENCE_END)) {
    const end = m.index + m[0].length;
    if (end > from) spans.push([from, end]);
    from = end;
  }
  if (from < line.length) spans.push([from, line.length]);
  return spans;
}

/** The cited sentences of a Markdown body, outside code. Table rows and list items are sentences
 *  of their own; headings are skipped. */
export function citedClaims(body: string): CitedClaim[] {
  const claims: CitedClaim[] = [];
  let offset = 0;
  let inFence = false;
  let header: string | undefined; // the header row of the table being read
  for (const line of body.split('\n')) {
    const lineStart = offset;
    offset += line.length + 1;
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      continue;
    }
    const row = /^\s*\|/.test(line);
    if (!row) header = undefined;
    else if (header === undefined) header = line;
    if (inFence || /^\s*#/.test(line) || !line.includes('[')) continue;
    const spans = row ? [[0, line.length] as [number, number]] : sentenceSpans(line);
    for (const [s, e] of spans) {
      const piece = withoutCode(line.slice(s, e));
      const numbers = [...new Set([...piece.matchAll(MARKER)].map((m) => Number(m[1])))];
      if (!numbers.length) continue;
      const text = piece
        .replace(MARKER, '')
        .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '')
        .replace(/\s+([.,;:!?])/g, '$1')
        .replace(/\s+/g, ' ')
        .trim();
      if (text.length < 3) continue;
      // A table row means something under its header: "Plant | Capacity → Veyra | 412 MW".
      const cells = (r: string) =>
        r
          .split('|')
          .map((c) => c.trim())
          .filter(Boolean)
          .join(' | ');
      const said = row && header !== line ? `${cells(header!)} → ${cells(text)}` : row ? cells(text) : text;
      claims.push({ start: lineStart + s, end: lineStart + e, text: said, numbers });
    }
  }
  return claims;
}

const withoutCode = (s: string) => s.replace(/`[^`\n]*`/g, (m) => m.replace(/\[\d+\]/g, ''));

/** Citation markers [n] in a body, outside code: every occurrence counted. */
export function countCitationMarkers(body: string): number {
  let n = 0;
  const parts = body.split(/(```[\s\S]*?```|`[^`\n]*`)/g);
  parts.forEach((part, i) => {
    if (i % 2 === 0) n += [...part.matchAll(MARKER)].length;
  });
  return n;
}

const words = (s: string) =>
  new Set(
    s
      .toLowerCase()
      .normalize('NFKC')
      .match(/[\p{L}\p{N}][\p{L}\p{N}.,%-]*[\p{L}\p{N}%]|[\p{N}\p{Script=Han}]/gu)
      ?.filter((w) => w.length > 2 || /\p{N}|\p{Script=Han}/u.test(w)) ?? [],
  );

/**
 * The part of a source's stored evidence a sentence should be compared with: the whole text when
 * it is short, otherwise the paragraphs (or windows of a long paragraph) sharing the most words and
 * figures with the sentence, in their original order, up to `maxChars`.
 */
export function evidenceFor(sentence: string, evidence: string, maxChars = 1800): string {
  const text = evidence.trim();
  if (text.length <= maxChars) return text;
  const want = words(sentence);
  const blocks: { at: number; text: string; score: number }[] = [];
  for (const para of text.split(/\n\s*\n/)) {
    for (let i = 0; i < para.length; i += 600) {
      const piece = para.slice(Math.max(0, i - 100), i + 600);
      let score = 0;
      for (const w of words(piece)) if (want.has(w)) score += /\p{N}/u.test(w) ? 3 : 1;
      blocks.push({ at: blocks.length, text: piece.trim(), score });
    }
  }
  const chosen: typeof blocks = [];
  let size = 0;
  for (const b of [...blocks].sort((a, b) => b.score - a.score || a.at - b.at)) {
    if (size + b.text.length > maxChars) continue;
    chosen.push(b);
    size += b.text.length + 5;
  }
  return chosen
    .sort((a, b) => a.at - b.at)
    .map((b) => b.text)
    .join('\n[…]\n');
}

/** Citations side by side, with the blank before them: "[1][2]", " [1], [3]". Not links. */
const CITATION_GROUP = /(\s*)\[\d+\](?!\()(?:[ \t]*[,;]?[ \t]*\[\d+\](?!\())*/g;

/**
 * Removes the citations `drop` names (claim index → numbers) from their sentences and nothing else;
 * a sentence keeps its text and its other citations.
 */
/** What a removed citation leaves inside parentheses, tidied: "([3]: IEA)" → "(IEA)",
 *  "(IEA, [3])" → "(IEA)", "([3])" → nothing. */
function tidyBrackets(text: string): string {
  return text
    .replace(/\(\s*[,;:]\s*/g, '(')
    .replace(/\s*[,;:]\s*\)/g, ')')
    .replace(/\s*\(\s*\)/g, '');
}

export function removeCitations(body: string, claims: CitedClaim[], drop: Map<number, Set<number>>): string {
  let out = body;
  const order = [...drop.keys()].sort((a, b) => claims[b]!.start - claims[a]!.start);
  for (const i of order) {
    const c = claims[i]!;
    const numbers = drop.get(i)!;
    // A group of citations ("[1], [2], [3]") keeps its other numbers with its own separator: no
    // ",," or ", ," is left where one went.
    const piece = out.slice(c.start, c.end).replace(CITATION_GROUP, (group: string, space: string) => {
      const all = [...group.matchAll(/\[(\d+)\]/g)].map((m) => m[1]!);
      const kept = all.filter((n) => !numbers.has(Number(n)));
      if (kept.length === all.length) return group;
      const sep = /\]([ \t]*[,;]?[ \t]*)\[/.exec(group)?.[1] ?? '';
      return kept.length ? `${space}${kept.map((n) => `[${n}]`).join(sep)}` : '';
    });
    out = out.slice(0, c.start) + tidyBrackets(piece) + out.slice(c.end);
  }
  return out;
}
