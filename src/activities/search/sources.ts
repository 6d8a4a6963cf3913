// Stable source ids and the merge of hits from several providers.
import { createHash } from 'node:crypto';
import type { StoredSource } from '../store';
import { publicationDay, type DateRange } from '../../shared/time-range';
import { normalizeUrl, type SearchHit } from '../../infra/search/types';

/** 'S' + 8 hex digits of sha256(normalised URL): the same page has the same id in every run. */
export function sourceIdFor(url: string): string {
  return `S${createHash('sha256').update(normalizeUrl(url)).digest('hex').slice(0, 8)}`;
}

/** De-duplicates hits by normalised URL (keeping the best score and longest text), best first. */
export function mergeHits(hits: SearchHit[], max: number): StoredSource[] {
  const byId = new Map<string, StoredSource & { score: number }>();
  for (const h of hits) {
    let id: string;
    try {
      id = sourceIdFor(h.url);
    } catch {
      continue;
    }
    const prev = byId.get(id);
    if (!prev) {
      byId.set(id, { sourceId: id, url: h.url, title: h.title, content: h.content, provider: h.source, score: h.score });
      continue;
    }
    prev.score = Math.max(prev.score, h.score);
    if (h.content.length > prev.content.length) prev.content = h.content;
  }
  return [...byId.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, max)
    .map(({ score: _score, ...s }) => s);
}

/**
 * Ranked hits as sources, in their order, at most `max`; an unparsable URL is skipped. The model
 * reads a hit's publication date with its snippet: "(published 2026-11-02)" where it is known,
 * and, in a run with a time range, "(publication date unknown)" where it is not, so it can weigh
 * a source that may be older than the run asked for.
 */
export function toSources(hits: SearchHit[], max: number, range?: DateRange): StoredSource[] {
  const out: StoredSource[] = [];
  const seen = new Set<string>();
  for (const h of hits) {
    if (out.length >= max) break;
    let id: string;
    try {
      id = sourceIdFor(h.url);
    } catch {
      continue;
    }
    if (seen.has(id)) continue;
    seen.add(id);
    const published = publicationDay(h.published);
    const dated = published ? `(published ${published}) ` : range ? '(publication date unknown) ' : '';
    out.push({
      sourceId: id,
      url: h.url,
      title: h.title,
      content: `${dated}${h.content}`,
      provider: h.source,
      ...(published ? { published } : {}),
    });
  }
  return out;
}
