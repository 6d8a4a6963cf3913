// The limits a document must stay within to be parsed: what it may expand to (decompressed
// bytes), how much structure it may have (pages, slides, sheets, rows, columns), and how much
// text is kept. A file past a structural cap is refused whole with the cap it broke: a cut-off
// spreadsheet or half a deck would be read as the whole document. Only the kept text is cut, at
// maxChars, as it always was.
import type { Config } from '../../config';

/** A file the parser cannot read: corrupt, encrypted, or without text. The message says why. */
export class DocumentUnreadable extends Error {
  override readonly name: string = 'DocumentUnreadable';
}

/** A document past one of its caps: refused, never retried (the same bytes break the same cap). */
export class DocumentTooLarge extends DocumentUnreadable {
  override readonly name = 'DocumentTooLarge';
}

/** A document's caps (KB_PARSE_*, each field's meaning in the configuration's type). */
export type ParseCaps = Config['knowledge']['parse']['caps'];

export const DEFAULT_PARSE_CAPS: ParseCaps = {
  maxInflatedBytes: 200_000_000,
  maxPages: 2_000,
  maxSheets: 100,
  maxRows: 100_000,
  maxColumns: 1_000,
  maxZipEntries: 10_000,
  maxChars: 2_000_000,
};

/** Decompressed bytes counted against a document's cap as they come out of the decompressor. */
export class InflateBudget {
  private used = 0;

  constructor(readonly max: number) {}

  get spent(): number {
    return this.used;
  }

  /** Counts `bytes` more; past the cap, the document is refused. */
  take(bytes: number, what: string): void {
    this.used += bytes;
    if (this.used > this.max)
      throw tooLarge(`${what} decompresses to more than ${megabytes(this.max)}, the most a document may`, 'KB_PARSE_MAX_INFLATED_MB');
  }
}

/** The refusal for a document past a cap, naming the setting that raises it. */
export function tooLarge(reason: string, setting: string): DocumentTooLarge {
  return new DocumentTooLarge(`${reason} (${setting})`);
}

/** Refuses `count` of `what` over `max`; `atLeast` when counting stopped at the first one too many. */
export function capCount(count: number, max: number, what: string, setting: string, atLeast = false): void {
  if (count <= max) return;
  const n = atLeast ? `more than ${max.toLocaleString('en')}` : count.toLocaleString('en');
  throw tooLarge(`the file has ${n} ${what}; at most ${max.toLocaleString('en')} are parsed`, setting);
}

export const megabytes = (bytes: number) => `${Math.round(bytes / 1e5) / 10} MB`;
