// What makes one query's hits worth keeping, in the order the web search applies it: the
// run's time range on known publication dates, one hit per document however many URLs it has, the
// tenant's avoided domains, and an order by relevance to what the results are for (the step's
// goal), with the tenant's preferred domains ahead and the providers' own scores breaking ties.
import { bannedDomainOf } from '../../shared/domains';
import { describeRange, outsideRange, publicationDay, type DateRange } from '../../shared/time-range';
import type { SearchHit } from '../../infra/search/types';
import { plural, wasWere } from '../../shared/plural';

/** Which providers a query may use: the run's choice, else its tenant's, else every configured
 *  one. Names this worker does not have are left out, and said so. */
export function allowedProviders(
  configured: string[],
  choice: { runProviders?: string[] | undefined; tenantProviders?: string[] | undefined },
): { names: string[]; note?: string } {
  const [wanted, whose] = choice.runProviders
    ? [choice.runProviders, "the run's searchProviders"]
    : choice.tenantProviders
      ? [choice.tenantProviders, "the tenant's search preferences"]
      : [configured, ''];
  const names = wanted.filter((n) => configured.includes(n));
  const missing = wanted.filter((n) => !configured.includes(n));
  if (!missing.length) return { names };
  if (!names.length)
    return {
      names: configured,
      note: `${whose} name providers this worker does not have (${missing.join(', ')}): all configured ones were used (${configured.join(', ')})`,
    };
  return { names, note: `${whose} name providers this worker does not have (${missing.join(', ')}): left out` };
}

/** Hits known to be published outside the range are dropped; hits without a date are kept. */
export function filterByTime(hits: SearchHit[], range: DateRange | undefined): { kept: SearchHit[]; note?: string } {
  if (!range) return { kept: hits };
  const kept = hits.filter((h) => !outsideRange(publicationDay(h.published), range));
  const dropped = hits.length - kept.length;
  return dropped
    ? {
        kept,
        note: `${plural(dropped, 'result')} published outside the run's time range (${describeRange(range)}) ${wasWere(dropped)} dropped`,
      }
    : { kept };
}

const MOBILE_HOST = /^(www|m|mobile|amp)\./;
const INDEX_FILE = /\/(index|default)\.(html?|php|aspx?)$/i;
const AMP_PATH = /(\/amp|\.amp)$/i;
const DROPPED_PARAMS = /^(utm_.*|fbclid|gclid|amp|outputtype|ref|ref_src)$/i;

/**
 * One key for the URLs of one document: scheme, `www.`/`m.`/`amp.` host prefixes, a trailing
 * `index.html`, AMP suffixes, tracking parameters and the fragment do not count. An unparsable
 * URL is its own key.
 */
export function documentKey(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return raw;
  }
  const host = u.hostname.toLowerCase().replace(/\.$/, '').replace(MOBILE_HOST, '');
  let path = u.pathname.replace(INDEX_FILE, '/').replace(AMP_PATH, '').replace(/\/+$/, '');
  if (!path) path = '/';
  const params = [...u.searchParams.entries()].filter(([k]) => !DROPPED_PARAMS.test(k)).sort(([a], [b]) => a.localeCompare(b));
  const query = params.length ? `?${new URLSearchParams(params).toString()}` : '';
  const port = u.port && u.port !== '80' && u.port !== '443' ? `:${u.port}` : '';
  return `${host}${port}${path}${query}`;
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** A title without its site name (" - Site", " | Site"), as words. */
function titleKey(title: string): string {
  return words(title.replace(/\s+[|–—-]\s+[^|–—-]{1,60}$/, '')).join(' ');
}

/** Word 3-shingles of a text (its words, when it has fewer than three). */
function shingles(text: string): Set<string> {
  const w = words(text);
  if (w.length < 3) return new Set(w.length ? [w.join(' ')] : []);
  const out = new Set<string>();
  for (let i = 0; i + 3 <= w.length; i++) out.add(w.slice(i, i + 3).join(' '));
  return out;
}

/** Jaccard similarity of two shingle sets (0 when either is empty). */
export function similarity(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0;
  let common = 0;
  for (const s of a) if (b.has(s)) common++;
  return common / (a.size + b.size - common);
}

/** Snippets this alike, under the same title, are one document (a mirror, a syndicated copy). */
export const SNIPPET_SIMILARITY = 0.6;

/** The better address of one document: https, not AMP or mobile, then the shorter. */
function betterUrl(a: string, b: string): string {
  const rank = (u: string) => [u.startsWith('https:') ? 0 : 1, /[/.]amp\b|\/\/(m|mobile|amp)\./i.test(u) ? 1 : 0, u.length];
  const [x, y] = [rank(a), rank(b)];
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? a : b;
  return a;
}

function merge(into: SearchHit, h: SearchHit): SearchHit {
  const url = betterUrl(into.url, h.url);
  return {
    ...(url === into.url ? into : { ...into, url, source: h.source }),
    score: Math.max(into.score, h.score),
    content: h.content.length > into.content.length ? h.content : into.content,
    title: into.title || h.title,
    ...(into.published || h.published ? { published: into.published ?? h.published } : {}),
  };
}

/**
 * Merges hits that are one document under several URLs: the same document key (http/https,
 * mobile and AMP versions, index.html), or the same title with near-identical snippets (mirrors).
 * The first hit's place is kept.
 */
export function dedupeHits(hits: SearchHit[]): SearchHit[] {
  const out: { hit: SearchHit; key: string; title: string; shingles: Set<string> }[] = [];
  for (const h of hits) {
    const key = documentKey(h.url);
    const title = titleKey(h.title);
    const sh = shingles(h.content);
    const same = out.find((o) => o.key === key || (title !== '' && o.title === title && similarity(o.shingles, sh) >= SNIPPET_SIMILARITY));
    if (same) {
      same.hit = merge(same.hit, h);
      for (const s of sh) same.shingles.add(s);
    } else out.push({ hit: h, key, title, shingles: sh });
  }
  return out.map((o) => o.hit);
}

/** Hits on avoided domains are dropped, unless nothing else is left: then they are kept, and said so. */
export function dropAvoided(hits: SearchHit[], avoid: readonly string[]): { kept: SearchHit[]; note?: string } {
  if (!avoid.length) return { kept: hits };
  const kept = hits.filter((h) => !bannedDomainOf(h.url, avoid));
  if (kept.length || !hits.length) return { kept };
  return { kept: hits, note: `every result was on a domain the tenant avoids (${avoid.join(', ')}): kept, as nothing else was found` };
}

const STOPWORDS = new Set(
  'a an and are as at be by for from has have how in is it its of on or that the this to was were what when where which who why will with'.split(
    ' ',
  ),
);

/** Query and document terms: words without stopwords, a plural's s cut. */
export function terms(text: string): string[] {
  return words(text)
    .filter((w) => !STOPWORDS.has(w))
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/** BM25 (k1 1.2, b 0.75) of each document for the query, the documents themselves the corpus. */
export function bm25(query: string, docs: string[]): number[] {
  const q = [...new Set(terms(query))];
  const tokenized = docs.map(terms);
  const avg = tokenized.reduce((s, d) => s + d.length, 0) / Math.max(1, tokenized.length) || 1;
  const df = new Map(q.map((t) => [t, tokenized.filter((d) => d.includes(t)).length]));
  return tokenized.map((d) => {
    let score = 0;
    for (const t of q) {
      const tf = d.filter((x) => x === t).length;
      if (!tf) continue;
      const n = df.get(t)!;
      const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
      score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * d.length) / avg));
    }
    return score;
  });
}

/** Embeds texts as L2-normalised vectors (the knowledge base's embedder). */
export type Embed = (texts: string[]) => Promise<number[][]>;

/** How much a preferred domain moves a hit up, on the 0-1 scale of relevance. */
export const PREFER_BOOST = 0.2;

export interface Ranked {
  hits: SearchHit[];
  method: 'embeddings' | 'lexical';
  note?: string;
}

/** Reciprocal rank fusion's constant: how much a first place outweighs a tenth. */
const RRF_K = 10;

/** Each score's place (0 first, higher scores first); equal scores share a place. */
function places(score: number[]): number[] {
  const distinct = [...new Set(score)].sort((a, b) => b - a);
  return score.map((x) => distinct.indexOf(x));
}

/**
 * Orders hits by relevance to the goal: BM25 over title and snippet, fused by reciprocal rank with
 * the cosine of goal and hit when there is an embedder (neither decides alone: an embedder can
 * miss a figure the words hold, words miss a synonym); scaled to 0-1, preferred domains raised by
 * PREFER_BOOST. Relevance within 0.01 is a tie, which the provider's score breaks. An embedder
 * that fails leaves the words, and the note says why.
 */
export async function rerank(
  hits: SearchHit[],
  goal: string,
  opts: { embed?: Embed | undefined; prefer?: readonly string[] },
): Promise<Ranked> {
  if (hits.length < 2 && !opts.prefer?.length) return { hits, method: opts.embed ? 'embeddings' : 'lexical' };
  const texts = hits.map((h) => `${h.title}\n${h.content}`);
  let cosine: number[] | undefined;
  let note: string | undefined;
  if (opts.embed) {
    try {
      const [g, ...v] = await opts.embed([goal, ...texts]);
      cosine = v.map((x) => x.reduce((s, xi, i) => s + xi * (g![i] ?? 0), 0));
    } catch (err) {
      note = `results ranked by words, not embeddings: ${(err as Error).message}`;
    }
  }
  const lexical = bm25(goal, texts);
  const raw = cosine ? fuse([places(lexical), places(cosine)]) : lexical;
  const lo = Math.min(...raw);
  const span = Math.max(...raw) - lo;
  const key = hits.map((h, i) => {
    const relevance = span > 0 ? (raw[i]! - lo) / span : 0;
    const boost = opts.prefer?.length && bannedDomainOf(h.url, opts.prefer) ? PREFER_BOOST : 0;
    return Math.round((relevance + boost) * 100);
  });
  const order = hits.map((_, i) => i).sort((a, b) => key[b]! - key[a]! || hits[b]!.score - hits[a]!.score || a - b);
  return { hits: order.map((i) => hits[i]!), method: cosine ? 'embeddings' : 'lexical', ...(note ? { note } : {}) };
}

/** Reciprocal rank fusion of rankings given as each hit's place. */
function fuse(rankings: number[][]): number[] {
  return rankings[0]!.map((_, i) => rankings.reduce((s, at) => s + 1 / (RRF_K + at[i]!), 0));
}
