// Citation bookkeeping done by code, not by the prompt: source ids in findings, numbers in reports.
import { normalize } from './memory';

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
  return text.replace(/([ \t]*)\[((?:\s*S[0-9a-f]{8}\s*,?)+)\]/g, (_m, space: string, inner: string) => {
    const nums = (inner.match(SOURCE_ID) ?? []).map((id) => numberOf.get(id)).filter((n): n is number => n !== undefined);
    // A citation of nothing numbered goes with the space before it.
    return nums.length ? `${space}${nums.map((n) => `[${n}]`).join('')}` : '';
  });
}

/** A link, image or bare URL taken out of model text because it points nowhere the run went. */
export interface RemovedLink {
  url: string;
  reason: string;
}

/** A source a citation can resolve to: its number in the list the model was shown, its id, its URL. */
export interface CitableSource {
  n: number;
  sourceId: string;
  url: string;
  /** All the run has of it is a search engine's snippet: the page was not read, so a text may not
   *  cite it. Its citations are known (not made up) and removed, counted as `uncited`. */
  snippet?: boolean | undefined;
}

export interface GroundedCitations {
  /** The text with every resolvable citation written [n] (numbers of the list given), the rest gone. */
  markdown: string;
  /** Citation marks found, resolvable or not, each occurrence counted. */
  marks: number;
  /** Marks that named no known source (an unknown number, id or footnote): removed. */
  unresolved: number;
  /** Marks that named a source whose page the run did not read (a snippet): removed. */
  uncited: number;
  removedNumbers: number[];
  removedIds: string[];
  removedLinks: RemovedLink[];
}

// Private-use characters stand in for resolved citations and removals while the text is scanned,
// so that a later pattern never reads a citation an earlier one wrote.
const CITE = '\uE001';
const GONE = '\uE002';
const HELD = '\uE003';
const CODE = /(```[\s\S]*?```|~~~[\s\S]*?~~~|`[^`\n]*`)/g;
const ID = 'S[0-9a-fA-F]{8}';
/** An id whose S the model left out (`[S1a2b3c4d; 5e6f7a8b]`): eight hex digits, a letter among them. */
const HEX_ID = '(?=\\d*[a-fA-F])[0-9a-fA-F]{8}';
const ITEM = `(?:${ID}|${HEX_ID}|\\d+(?:\\s*[-–]\\s*\\d+)?)`;
const PREFIX = '(?:(?:sources?|refs?|references?)\\s*:?\\s*)?';
/** [1], [1, 2], [1-3], [S…], [S…; S…], [S…/S…], [Source: S…]; not a link's text. */
const BRACKETS = new RegExp(`\\[\\s*${PREFIX}(${ITEM}(?:\\s*[,;/]\\s*${ITEM})*)\\s*\\](?!\\()`, 'gi');
/** (S…), (S…, S…): ids only, as a year in parentheses is no citation. */
const PARENS = new RegExp(`\\(\\s*${PREFIX}(${ID}(?:\\s*[,;/]\\s*${ID})*)\\s*\\)`, 'gi');
// A slash beside an id is not a path: addresses were taken out by the patterns before this one,
// and S1…/S2… is how a small model cites two sources at once.
const BARE_ID = new RegExp(`(?<!\\w)${ID}(?!\\w)`, 'g');
/** A code span that holds only source ids (`S…`, `[S…]`, `S…, S…`): a citation a model wrapped in backticks. */
const ID_SPAN = new RegExp(`\`\\s*\\[?\\s*${ID}(?:\\s*[,;/]\\s*${ID})*\\s*\\]?\\s*\``, 'g');
/** [S…] with the wrong number of hex digits: an id the model got wrong or made up. */
const MISSHAPEN_ID = /\[\s*S[0-9a-fA-F]{5,16}\s*\]/g;
const FOOTNOTE_DEF = /^[ \t]*\[\^([^\]\s]+)\]:[ \t]*(.*)$/gm;
const FOOTNOTE_REF = /\[\^([^\]\s]+)\]/g;
const LINK = /(!?)\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const BARE_URL = /<(https?:\/\/[^>\s]+)>|\bhttps?:\/\/[^\s<>()[\]"'`]*[^\s<>()[\]"'`.,;:!?]/g;

/** A URL as compared with a source's: no fragment, no trailing slash, the scheme and host in lower case. */
export function normalizeUrl(url: string): string {
  return url
    .trim()
    .replace(/#.*$/, '')
    .replace(/\/+$/, '')
    .replace(/^[a-z]+:\/\/[^/?]+/i, (m) => m.toLowerCase());
}

const idOf = (raw: string) => `S${raw.slice(1).toLowerCase()}`;

/**
 * Turns the citations a model writes, in whatever form, into [n] of `sources`' numbers: [n] and
 * [n, m] and [n-m], [S…] and (S…) and a bare S…, footnotes ([^1] with its `[^1]: …` definition, or
 * [^S…]), and links and bare URLs to a source's address (a link keeps its text). Citations of
 * nothing known are removed and counted; links and images to addresses `allowLink` refuses are
 * unlinked (a link keeps its text) and recorded. Code spans and fences are left alone.
 */
export function groundCitations(
  markdown: string,
  sources: CitableSource[],
  allowLink: (url: string) => boolean = () => false,
): GroundedCitations {
  const grounding = new Grounding(sources, allowLink);
  const parts = markdown.replace(ID_SPAN, (m) => `[${m.slice(1, -1).replace(/[[\]]/g, '').trim()}]`).split(CODE);
  // No source id is code: one left in a code block is taken out (a reader cannot resolve it).
  for (let i = 1; i < parts.length; i += 2) parts[i] = grounding.dropIds(parts[i]!);
  // Footnote definitions first: what a footnote cites is whatever known source its definition names.
  for (let i = 0; i < parts.length; i += 2) parts[i] = grounding.readFootnotes(parts[i]!);
  for (let i = 0; i < parts.length; i += 2) parts[i] = grounding.groundProse(parts[i]!);
  const text = parts.map((part, i) => (i % 2 === 1 ? part : tidy(part))).join('');
  return grounding.result(text);
}

/** One text's grounding: the sources it may cite, and what it has found and removed so far. */
class Grounding {
  private readonly byNumber: Map<number, CitableSource>;
  private readonly byId: Map<string, CitableSource>;
  private readonly byUrl: Map<string, CitableSource>;
  private readonly footnotes = new Map<string, CitableSource[]>();
  /** Links `allowLink` keeps, held out of the text until every pattern has run. */
  private readonly held: string[] = [];
  private readonly removedNumbers = new Set<number>();
  private readonly removedIds = new Set<string>();
  private readonly removedLinks: RemovedLink[] = [];
  private marks = 0;
  private unresolved = 0;
  private uncited = 0;

  constructor(
    sources: CitableSource[],
    private readonly allowLink: (url: string) => boolean,
  ) {
    this.byNumber = new Map(sources.map((s) => [s.n, s]));
    this.byId = new Map(sources.map((s) => [s.sourceId, s]));
    this.byUrl = new Map(sources.map((s) => [normalizeUrl(s.url), s]));
  }

  /** Takes out the footnote definitions of a stretch of prose, remembering what each one cites. */
  readFootnotes(text: string): string {
    return text.replace(FOOTNOTE_DEF, (_m, label: string, def: string) => {
      this.footnotes.set(label, this.footnoteSources(def));
      return GONE;
    });
  }

  /** The known sources a footnote definition names: by id, by address, by a leading number. */
  private footnoteSources(def: string): CitableSource[] {
    const found = new Set<CitableSource>();
    for (const m of def.matchAll(new RegExp(ID, 'g'))) {
      const s = this.byId.get(idOf(m[0]));
      if (s) found.add(s);
    }
    for (const m of def.matchAll(/https?:\/\/[^\s<>()[\]"'`]*[^\s<>()[\]"'`.,;:!?]/g)) {
      const s = this.sourceAt(m[0]);
      if (s) found.add(s);
      else if (!this.allowLink(m[0])) this.removedLinks.push({ url: m[0], reason: 'footnote to an address the run did not retrieve' });
    }
    for (const m of def.matchAll(/^\s*\[?(\d+)\]?[\s.:]/g)) {
      const s = this.byNumber.get(Number(m[1]));
      if (s) found.add(s);
    }
    return [...found];
  }

  /** A code block or span without the source ids in it, each counted as a citation removed. */
  dropIds(code: string): string {
    return code.replace(BARE_ID, (raw) => {
      this.marks++;
      this.unresolved++;
      this.removedIds.add(idOf(raw));
      return '';
    });
  }

  /** Every citation form in a stretch of prose (its footnote definitions read) as a stand-in. */
  groundProse(text: string): string {
    return text
      .replace(LINK, (m, bang: string, label: string, url: string) => this.link(m, bang, label, url))
      .replace(BARE_URL, (m, inAngle: string | undefined) => this.bareUrl(m, inAngle ?? m))
      .replace(FOOTNOTE_REF, (_m, label: string) => this.footnoteRef(label))
      .replace(BRACKETS, (_m, inner: string) => this.items(inner))
      .replace(PARENS, (_m, inner: string) => this.items(inner))
      .replace(BARE_ID, (raw) => this.id(raw))
      .replace(MISSHAPEN_ID, (raw) => this.unknown(raw.replace(/[[\]\s]/g, '')));
  }

  /** A link or image: a citation if it points at a source, kept if allowed, else its text alone. */
  private link(m: string, bang: string, label: string, url: string): string {
    const s = bang ? undefined : this.sourceAt(url);
    if (s) {
      const words = label.trim();
      const isCitation = !words || /^\[?\s*(?:\d+|S[0-9a-f]{8}|https?:\/\/\S+)\s*\]?$/i.test(words);
      return isCitation ? this.cite(s) : `${words} ${this.cite(s)}`;
    }
    if (this.allowLink(url)) return this.hold(m);
    this.removedLinks.push({ url, reason: bang ? 'image not made by this run' : 'link to an address the run did not retrieve' });
    return bang || /^https?:\/\//.test(label.trim()) ? GONE : label;
  }

  private bareUrl(m: string, url: string): string {
    const s = this.sourceAt(url);
    if (s) return this.cite(s);
    if (this.allowLink(url)) return this.hold(m);
    this.removedLinks.push({ url, reason: 'bare URL the run did not retrieve' });
    return GONE;
  }

  /** [^label]: a defined footnote, or a label that is itself an id or a number. */
  private footnoteRef(label: string): string {
    const defined = this.footnotes.get(label);
    if (defined) return defined.length ? defined.map((s) => this.cite(s)).join('') : this.unknown(null);
    if (new RegExp(`^${ID}$`).test(label)) return this.id(label);
    if (/^\d+$/.test(label)) return this.number(Number(label));
    return this.unknown(null);
  }

  /** The inside of [1, 2-4; S…] or (S…; S…): each id, number and range in turn. */
  private items(inner: string): string {
    let out = '';
    for (const piece of inner.split(/[,;/]/)) {
      const item = piece.trim();
      if (new RegExp(`^${ID}$`).test(item)) out += this.id(item);
      else if (new RegExp(`^${HEX_ID}$`).test(item)) out += this.id(`S${item}`);
      else for (const n of rangeNumbers(item)) out += this.number(n);
    }
    return out;
  }

  private id(raw: string): string {
    const s = this.byId.get(idOf(raw));
    return s ? this.cite(s) : this.unknown(idOf(raw));
  }

  private number(n: number): string {
    const s = this.byNumber.get(n);
    return s ? this.cite(s) : this.unknown(n);
  }

  private sourceAt(url: string): CitableSource | undefined {
    return this.byUrl.get(normalizeUrl(url));
  }

  private cite(s: CitableSource): string {
    this.marks++;
    if (!s.snippet) return `${CITE}${s.n}${CITE}`;
    this.uncited++;
    return GONE;
  }

  /** A citation of nothing known: a number, an id, or (null) a footnote that names no source. */
  private unknown(what: number | string | null): string {
    this.marks++;
    this.unresolved++;
    if (typeof what === 'number') this.removedNumbers.add(what);
    else if (what !== null) this.removedIds.add(what);
    return GONE;
  }

  private hold(text: string): string {
    return `${HELD}${this.held.push(text) - 1}${HELD}`;
  }

  /** What was found, with the grounded text and the links held out of it put back. */
  result(text: string): GroundedCitations {
    return {
      markdown: text.replace(new RegExp(`${HELD}(\\d+)${HELD}`, 'g'), (_m, k: string) => this.held[Number(k)]!),
      marks: this.marks,
      unresolved: this.unresolved,
      uncited: this.uncited,
      removedNumbers: [...this.removedNumbers].sort((a, b) => a - b),
      removedIds: [...this.removedIds],
      removedLinks: this.removedLinks,
    };
  }
}

/** The numbers an item of a citation names: n, or n to m (just the two ends when m < n or m - n >= 50). */
function rangeNumbers(item: string): number[] {
  const range = item.split(/[-–]/).map((x) => Number(x.trim()));
  const [from, to] = [range[0]!, range[1] ?? range[0]!];
  return from <= to && to - from < 50 ? Array.from({ length: to - from + 1 }, (_, k) => from + k) : [from, to];
}

/** Writes the resolved citations as [n] (one citation of a source twice in a row once), and closes
 *  the gaps removals left: no space before punctuation, no empty parentheses, no line of a footnote
 *  definition. */
function tidy(text: string): string {
  return (
    text
      // Brackets around nothing but citations ([[S…]], [`S…`]) are the citations.
      .replace(new RegExp(`\\[\\s*((?:${CITE}\\d+${CITE}\\s*)+)\\]`, 'g'), (_m, inner: string) => inner.replace(/\s+/g, ''))
      .replace(new RegExp(`(${CITE}\\d+${CITE})(?:\\s*\\1)+`, 'g'), '$1')
      .replace(new RegExp(`${CITE}(\\d+)${CITE}`, 'g'), '[$1]')
      .replace(new RegExp(`^[ \\t]*${GONE}[ \\t]*(?:\\n|$)`, 'gm'), '')
      .replace(new RegExp(`\\([ \\t]*(?:${GONE}[ \\t]*)+\\)`, 'g'), GONE)
      .replace(new RegExp(`([ \\t]*)(?:${GONE})+([ \\t]*)`, 'g'), (m: string, before: string, after: string, at: number, all: string) => {
        const next = all[at + m.length];
        const previous = at > 0 ? all[at - 1] : '\n';
        if (next === undefined || previous === '\n' || /[\n.,;:!?)\]]/.test(next)) return '';
        return before || after ? ' ' : '';
      })
  );
}

/**
 * Renumbers a text's [n] citations (n from `sources`) 1..k in order of first citation, outside
 * code. Returns the text and, for every source, its new number: the cited ones first, in that
 * order, then the others in their old order.
 */
export function renumberCitations<S extends CitableSource>(
  markdown: string,
  sources: S[],
): { markdown: string; sources: (S & { cited: boolean })[]; numberOf: Map<number, number> } {
  const known = new Set(sources.map((s) => s.n));
  const numberOf = new Map<number, number>();
  const parts = markdown.split(CODE);
  for (let i = 0; i < parts.length; i += 2) {
    parts[i] = parts[i]!.replace(/\[(\d+)\](?!\()/g, (m, raw: string) => {
      const n = Number(raw);
      if (!known.has(n)) return m;
      if (!numberOf.has(n)) numberOf.set(n, numberOf.size + 1);
      return `[${numberOf.get(n)}]`;
    });
  }
  const cited = numberOf.size;
  for (const s of sources) if (!numberOf.has(s.n)) numberOf.set(s.n, numberOf.size + 1);
  const renumbered = sources.map((s) => ({ ...s, n: numberOf.get(s.n)!, cited: numberOf.get(s.n)! <= cited })).sort((a, b) => a.n - b.n);
  return { markdown: parts.join(''), sources: renumbered, numberOf };
}

/** Numbers no model writes by itself: the stand-ins for source ids while findings are grounded. */
const FINDING_BASE = 900_000;

/**
 * Findings (a step's, the background brief) cite sources by id, [S…]. A model writes them in other
 * forms too — (S…), a bare id, a footnote, a link or a bare URL to the page — and makes some up:
 * every form of a source the writer was shown becomes [S…]; the rest is removed, and counted.
 */
export function groundFindings(
  text: string,
  sources: { sourceId: string; url: string }[],
): { text: string; cited: string[]; dropped: string[]; removedLinks: RemovedLink[] } {
  const citable = sources.map((s, i) => ({ n: FINDING_BASE + i, sourceId: s.sourceId, url: s.url }));
  const grounded = groundCitations(text, citable);
  const idOfNumber = new Map(citable.map((s) => [s.n, s.sourceId]));
  const cited = new Set<string>();
  const back = grounded.markdown.replace(/\[(\d+)\](?!\()/g, (m, raw: string) => {
    const id = idOfNumber.get(Number(raw));
    if (!id) return m;
    cited.add(id);
    return `[${id}]`;
  });
  return { text: back, cited: [...cited], dropped: grounded.removedIds, removedLinks: grounded.removedLinks };
}

/**
 * The text without lines that repeat the head code writes before a source ("[S1a2b3c4d] Title —
 * https://…", and "[1] Title — https://…" in the reporter's reference list): a small model copies
 * it into its answer, where it reads as a title glued to the sentences after it. A line goes when,
 * list marks and emphasis aside, it is a source's title (a citation before it or not), a dash and that
 * source's address or a citation; or a citation and a title alone. A sentence that names a source stays.
 */
export function withoutSourceHeads(text: string, sources: { title: string; url: string }[]): string {
  const titles = new Set(sources.map((s) => normalize(s.title)).filter((t) => t.length >= 3));
  if (!titles.size) return text;
  const urls = new Set(sources.map((s) => normalizeUrl(s.url)));
  const CITED = `\\[\\s*(?:${ID}|\\d+)\\s*\\]`;
  const head = new RegExp(`^[ \\t>]*(?:[-*+][ \\t]+)?[*_]*(${CITED})?[ \\t]*(.+?)[ \\t]+[—–-][ \\t]+[*_]*(\\S+?)[*_]*[ \\t]*$`);
  const bare = new RegExp(`^[ \\t>]*(?:[-*+][ \\t]+)?[*_]*${CITED}[ \\t]*(.+?)[*_]*[ \\t]*:?[ \\t]*$`);
  const cited = new RegExp(`^${CITED}$`);
  const named = (title: string) => titles.has(normalize(title.replace(/[*_]+/g, '')));
  const isHead = (line: string): boolean => {
    const h = head.exec(line);
    if (h && named(h[2]!) && (cited.test(h[3]!) || urls.has(normalizeUrl(h[3]!.replace(/^<|>$/g, ''))))) return true;
    const b = bare.exec(line);
    return Boolean(b && named(b[1]!));
  };
  const lines = text.split('\n');
  const kept = lines.filter((line) => !isHead(line));
  return kept.length === lines.length ? text : kept.join('\n').replace(/\n{3,}/g, '\n\n');
}
