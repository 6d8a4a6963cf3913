// Byte-pair encoding over tiktoken's rank files, in a form that keeps one small string per token.
// js-tiktoken's own encoder holds every token three times (a Uint8Array with its ArrayBuffer, and
// a comma-joined key string): about 33 MB of heap and 60 MB resident for cl100k_base, in the
// process that runs the activities. Here a token is one Latin-1 string (a character per byte),
// the key of the rank map and the entry of the decode table at once: about 7 MB. Pieces are
// looked up by slicing that string instead of joining byte arrays, and a merge recomputes only
// the two pairs beside it, so encoding is faster too (bench/tokenizer.ts).
//
// The result is the same as js-tiktoken's `encode(text, [], [])` and `decode(ids)`: the same
// pre-tokenizing pattern, the same merge order (the lowest rank first, the leftmost on a tie),
// and special tokens read as plain text (test/unit/bpe.test.ts holds it to that).

/** A rank file as js-tiktoken ships it (`js-tiktoken/ranks/*`). */
export interface RankFile {
  pat_str: string;
  special_tokens: Record<string, number>;
  /** Lines of `<first token> <offset> <token base64> <token base64> …`, ranks counting up from offset. */
  bpe_ranks: string;
}

const utf8 = new TextDecoder('utf-8');

/** A piece's bytes as a string of char codes 0–255 (lone surrogates become U+FFFD's bytes, as TextEncoder does). */
const bytesOfText = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

export class BytePairEncoder {
  private readonly rankOf = new Map<string, number>();
  private readonly bytesOf: string[] = [];
  private readonly pattern: RegExp;

  constructor(ranks: RankFile) {
    for (const line of ranks.bpe_ranks.split('\n')) {
      if (!line) continue;
      const fields = line.split(' ');
      const offset = Number.parseInt(fields[1]!, 10);
      for (let i = 2; i < fields.length; i++) {
        const bytes = Buffer.from(fields[i]!, 'base64').toString('latin1');
        this.rankOf.set(bytes, offset + i - 2);
        this.bytesOf[offset + i - 2] = bytes;
      }
    }
    for (const [text, id] of Object.entries(ranks.special_tokens)) this.bytesOf[id] ??= bytesOfText(text);
    this.pattern = new RegExp(ranks.pat_str, 'gu');
  }

  /** The token ids of a text; special tokens' text is encoded as ordinary text. */
  encode(text: string): number[] {
    const ids: number[] = [];
    for (const match of text.matchAll(this.pattern)) {
      const piece = bytesOfText(match[0]);
      const whole = this.rankOf.get(piece);
      if (whole !== undefined) ids.push(whole);
      else this.merge(piece, ids);
    }
    return ids;
  }

  /** The text of token ids; bytes that do not form a character decode to U+FFFD; unknown ids are skipped. */
  decode(ids: readonly number[]): string {
    let bytes = '';
    for (const id of ids) bytes += this.bytesOf[id] ?? '';
    return utf8.decode(Buffer.from(bytes, 'latin1'));
  }

  /**
   * Merges a piece's bytes pair by pair, always the pair of lowest rank (the leftmost on a tie),
   * until no adjacent pair has a rank; appends the parts' ranks. `cuts` are the parts' boundaries;
   * `pairRank[j]` is the rank of parts j and j+1 together (Infinity: none).
   */
  private merge(piece: string, ids: number[]): void {
    const cuts = Array.from({ length: piece.length + 1 }, (_, i) => i);
    const rankAt = (j: number) => (j + 2 < cuts.length ? (this.rankOf.get(piece.slice(cuts[j], cuts[j + 2])) ?? Infinity) : Infinity);
    const pairRank = Array.from({ length: piece.length - 1 }, (_, j) => rankAt(j));
    while (pairRank.length > 0) {
      let best = -1;
      let lowest = Infinity;
      for (let j = 0; j < pairRank.length; j++) {
        if (pairRank[j]! < lowest) {
          lowest = pairRank[j]!;
          best = j;
        }
      }
      if (best < 0) break;
      cuts.splice(best + 1, 1);
      pairRank.splice(best, 1);
      if (best < pairRank.length) pairRank[best] = rankAt(best);
      if (best > 0) pairRank[best - 1] = rankAt(best - 1);
    }
    for (let j = 0; j + 1 < cuts.length; j++) {
      const rank = this.rankOf.get(piece.slice(cuts[j], cuts[j + 1]));
      if (rank !== undefined) ids.push(rank);
    }
  }
}
