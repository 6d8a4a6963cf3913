// Stable source ids and the merge of hits from several providers.
import { createHash } from 'node:crypto';
import type { StoredSource } from '../store';
import { normalizeUrl, type SearchHit } from './types';

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
