// The background phase's choice of pages, shared by the workflow (runs that read them with one
// crawlPage activity each) and the activity that does the whole phase in one (background-in-one).
import type { Effort, SourceRef } from './schemas';

/** What the rewrite's input appends after the user's question: the coordinator's reading of it. */
export const COORDINATOR_READING = "\n(Coordinator's reading:";

/** The background's question: the user's, and the coordinator's reading of it (its research topic). */
export function withCoordinatorReading(question: string, topic: string): string {
  return `${question}${COORDINATOR_READING} ${topic})`;
}

/** Pages the background reads, by effort (a run without one reads the standard number). */
export const BACKGROUND_PAGES: Readonly<Record<Effort, number>> = Object.freeze({ quick: 1, standard: 3, deep: 5 });

/** The best pages of the searches: the first hit of each query, then the second, …; each URL once. */
export function bestPages(hits: SourceRef[][], wanted: number): string[] {
  const urls: string[] = [];
  for (let rank = 0; urls.length < wanted && hits.some((h) => h.length > rank); rank++) {
    for (const h of hits) {
      const url = h[rank]?.url;
      if (url && !urls.includes(url) && urls.length < wanted) urls.push(url);
    }
  }
  return urls;
}
