// The background brief as a plan's reviewer reads it (in the activity that wrote it: the workflow
// only carries the result, and its bundle stays free of the citation code).
import { SOURCE_ID, sourceIdsToNumbers } from './citations';
import { BRIEF_CHARS, BRIEF_SOURCES, type PlanBrief } from './schemas';

/**
 * The brief as a plan's reviewer reads it: its citations of source ids turned into `[n]` of the
 * sources it cites (numbered in the order it first cites them), its text cut to BRIEF_CHARS, and
 * at most BRIEF_SOURCES of those sources with their titles and addresses.
 */
export function briefView(content: string, sources: { sourceId: string; title: string; url: string }[]): PlanBrief {
  const byId = new Map(sources.map((s) => [s.sourceId, s]));
  const order = [...new Set(content.match(SOURCE_ID) ?? [])].filter((id) => byId.has(id));
  const numberOf = new Map(order.map((id, i) => [id, i + 1]));
  const text = sourceIdsToNumbers(content, numberOf)
    .replace(/[ \t]+([.,;:!?])/g, '$1')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return {
    text: text.length > BRIEF_CHARS ? `${text.slice(0, BRIEF_CHARS).trimEnd()} …` : text,
    sources: order.slice(0, BRIEF_SOURCES).map((id, i) => ({ n: i + 1, title: byId.get(id)!.title, url: byId.get(id)!.url })),
  };
}
