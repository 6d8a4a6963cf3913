// Phases 2 and 3: rewrite the question and expand it into search queries, run the searches in
// parallel, and write a background brief for the planner from what they found.
import { isCancellation } from '@temporalio/workflow';
import { failureMessage } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import { searchKnowledge } from './knowledge';
import type { RunState } from './run-state';

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
    expansion.queries.map((query) => run.calls.webSearch(`search: ${summarize(query, 80)}`, { researchId: run.id, query })),
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
  const background = await run.calls.llm.writeBackground.executeWithOptions(
    { summary: `background brief from ${sourceIds.length} sources` },
    [{ researchId: run.id, question: expansion.researchQuestion, locale: run.locale, sourceIds, searchErrors }],
  );
  run.addUsage(background.usage);
  return expansion.researchQuestion;
}
