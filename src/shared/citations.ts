// Citation bookkeeping done by code, not by the prompt: source ids in findings, numbers in reports.

/** Source ids look like S + 8 hex digits; the model cites them as [S1a2b3c4d] (several: [Sa, Sb]). */
export const SOURCE_ID = /\bS[0-9a-f]{8}\b/g;

export function citedSourceIds(text: string): string[] {
  const seen = new Set<string>();
  for (const block of text.matchAll(/\[([^\]]+)\]/g)) {
    for (const id of block[1]!.match(SOURCE_ID) ?? []) seen.add(id);
  }
  return [...seen];
}

/** Drops citations of ids that are not in `known`; returns the cleaned text and what was dropped. */
export function keepKnownSourceIds(text: string, known: Set<string>): { text: string; dropped: string[] } {
  const dropped = new Set<string>();
  const cleaned = text.replace(/\[((?:\s*S[0-9a-f]{8}\s*,?)+)\]/g, (_m, inner: string) => {
    const ids = inner.match(SOURCE_ID) ?? [];
    const ok = ids.filter((id) => known.has(id));
    for (const id of ids) if (!known.has(id)) dropped.add(id);
    return ok.length ? `[${ok.join(', ')}]` : '';
  });
  return { text: cleaned, dropped: [...dropped] };
}

/** Rewrites [S…] ids to the report's reference numbers [n]. */
export function sourceIdsToNumbers(text: string, numberOf: Map<string, number>): string {
  return text.replace(/\[((?:\s*S[0-9a-f]{8}\s*,?)+)\]/g, (_m, inner: string) => {
    const nums = (inner.match(SOURCE_ID) ?? []).map((id) => numberOf.get(id)).filter((n): n is number => n !== undefined);
    return nums.length ? nums.map((n) => `[${n}]`).join('') : '';
  });
}

export interface CitationCheck {
  markdown: string;
  /** Citation numbers that resolved to no reference and were removed. */
  removed: number[];
  /** How many times such numbers were cited (each occurrence). */
  removedMarks: number;
  /** Reference numbers cited at least once. */
  used: number[];
}

/**
 * Checks every [n] (also [n, m] and [n-m]) against 1..referenceCount: resolvable ones are kept as
 * [n], the rest removed. Code spans and fenced code are left alone.
 */
export function checkCitations(markdown: string, referenceCount: number): CitationCheck {
  const removed = new Set<number>();
  const used = new Set<number>();
  let removedMarks = 0;
  const parts = markdown.split(/(```[\s\S]*?```|`[^`\n]*`)/g);
  const out = parts.map((part, i) => {
    if (i % 2 === 1) return part; // code
    return part.replace(/\[(\d+(?:\s*[-–,]\s*\d+)*)\](?!\()/g, (_m, inner: string) => {
      const nums: number[] = [];
      for (const piece of inner.split(',')) {
        const range = piece.split(/[-–]/).map((x) => Number(x.trim()));
        if (range.length === 2 && range[0]! <= range[1]! && range[1]! - range[0]! < 50) {
          for (let n = range[0]!; n <= range[1]!; n++) nums.push(n);
        } else nums.push(range[0]!);
      }
      const ok = nums.filter((n) => Number.isInteger(n) && n >= 1 && n <= referenceCount);
      for (const n of nums) {
        if (ok.includes(n)) continue;
        removed.add(n);
        removedMarks++;
      }
      for (const n of ok) used.add(n);
      return ok.map((n) => `[${n}]`).join('');
    });
  });
  return {
    markdown: out.join(''),
    removed: [...removed].sort((a, b) => a - b),
    removedMarks,
    used: [...used].sort((a, b) => a - b),
  };
}
