// Phases 2 and 3: rewrite the question and expand it into search queries, run the searches in
// parallel, read the best few pages they found, and write a background brief for the planner
// from the snippets and those pages.
import { isCancellation, patched } from '@temporalio/workflow';
import { failureMessage } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import type { Effort, SourceRef } from '../../shared/schemas';
import { crawlPages } from '../tools';
import { searchKnowledge } from './knowledge';
import type { RunState } from './run-state';

/** Runs started before the background read pages wrote it from the snippets alone. */
export const BACKGROUND_PAGES_PATCH = 'background-reads-pages';

/** Pages the background reads, by effort (a run without one reads the standard number). */
const BACKGROUND_PAGES: Record<Effort, number> = { quick: 1, standard: 3, deep: 5 };

/** Returns the rewritten research question. */
export async function investigate(run: RunState, topic: string): Promise<string> {
  const opts = run.options;
  run.moveTo('planning');
  const { expansion, usage } = await run.calls.llm.expandQueries.executeWithOptions(
    { summary: `rewrite: question and ${opts.queryCount} queries` },
    [
      {
        researchId: run.id,
        question: `${run.userQuestion}\n(Coordinator's reading: ${topic})`,
        locale: run.locale,
        count: opts.queryCount,
      },
    ],
  );
  run.addUsage(usage);
  const searches = await Promise.allSettled(
    expansion.queries.map((query) =>
      run.calls.webSearch(`search: ${summarize(query, 80)}`, { researchId: run.id, query, goal: expansion.researchQuestion }),
    ),
  );
  // The user's own documents first: they lead the background's sources.
  const sourceIds: string[] = await searchKnowledge(run, expansion.researchQuestion, expansion.queries);
  const searchErrors: string[] = [];
  const providerErrors: string[] = [];
  for (const s of searches) {
    if (s.status === 'fulfilled') {
      for (const r of s.value.results) if (!sourceIds.includes(r.sourceId)) sourceIds.push(r.sourceId);
      providerErrors.push(...(s.value.errors ?? []));
    } else {
      if (isCancellation(s.reason)) throw s.reason;
      searchErrors.push(failureMessage(s.reason));
    }
  }
  const queries = expansion.queries.length;
  if (searchErrors.length)
    run.note(`Background search failed for ${searchErrors.length} of ${queries} queries: ${summarize(searchErrors[0]!, 160)}`);
  if (providerErrors.length)
    run.note(
      `Background search: a provider failed ${providerErrors.length} time(s) while others answered: ${summarize(providerErrors[0]!, 160)}`,
    );
  const hits = searches.map((s) => (s.status === 'fulfilled' ? s.value.results : []));
  const pages = patched(BACKGROUND_PAGES_PATCH) ? await readBestPages(run, expansion.researchQuestion, hits) : undefined;
  const background = await run.calls.llm.writeBackground.executeWithOptions(
    { summary: `background brief from ${sourceIds.length} sources${pages ? ` and ${pages.length} page(s)` : ''}` },
    [
      {
        researchId: run.id,
        question: expansion.researchQuestion,
        locale: run.locale,
        sourceIds,
        searchErrors,
        ...(pages ? { pages } : {}),
      },
    ],
  );
  run.addUsage(background.usage);
  return expansion.researchQuestion;
}

/**
 * Reads the best pages of the searches (the first hit of each query, then the second, …; each URL
 * once) for the research question. A page that cannot be read is noted; the brief goes on.
 */
async function readBestPages(run: RunState, question: string, hits: SourceRef[][]) {
  const urls: string[] = [];
  const wanted = BACKGROUND_PAGES[run.options.effort ?? 'standard'];
  for (let rank = 0; urls.length < wanted && hits.some((h) => h.length > rank); rank++) {
    for (const h of hits) {
      const url = h[rank]?.url;
      if (url && !urls.includes(url) && urls.length < wanted) urls.push(url);
    }
  }
  if (!urls.length) return [];
  const read = await crawlPages(run.calls, run.id, urls, question);
  run.addUsage(read.usage);
  const unread = read.pages.filter((p) => p.status !== 'ok');
  if (unread.length)
    run.note(
      `Background: ${unread.length} of ${urls.length} page(s) could not be read (${unread.map((p) => `${p.url}: ${p.status}${p.reason ? `, ${summarize(p.reason, 80)}` : ''}`).join('; ')}); the brief uses the others and the snippets.`,
    );
  return read.pages.map((p) => ({ url: p.url, status: p.status, ...(p.sourceId ? { sourceId: p.sourceId } : {}) }));
}
