// The web-search activity: one query across the providers routed for it, merged by URL and
// stored; the workflow gets source ids and titles. Providers that failed while others answered
// are named in `errors`, and the workflow records them: a failure never becomes a silent gap.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { type SourceRef } from '../../shared/schemas';
import { summarize } from '../../shared/plain';
import type { Store } from '../store';
import { routeQuery } from './providers';
import { mergeHits } from './sources';
import type { SearchHit, SearchProvider } from './types';
import { metrics } from '../../infra/metrics';
import { bannedDomainOf } from '../../shared/domains';

export interface WebSearchInput {
  researchId: string;
  query: string;
  /** What the results are for (the step's description, the research question): they are ranked
   *  by their relevance to it. Absent (histories before it existed): ranked for the query. */
  goal?: string;
}

export interface WebSearchResult {
  query: string;
  results: SourceRef[];
  providers: string[];
  /** `<provider>: <error>` for each provider that failed while another answered. Optional: results
   *  recorded in histories before it existed have none. */
  errors?: string[];
}

function isPermanent(err: unknown): boolean {
  const status = (err as { status?: number }).status;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

export function createSearchActivities(deps: { store: Store; providers: Map<string, SearchProvider>; maxResults: number }) {
  async function webSearch(input: WebSearchInput): Promise<WebSearchResult> {
    if (deps.providers.size === 0) {
      throw ApplicationFailure.nonRetryable(
        "no search provider is configured: set SEARCH_PROVIDERS (and SEARXNG_URL or the providers' keys)",
        ErrorType.SearchNotConfigured,
      );
    }
    const names = routeQuery(input.query, [...deps.providers.keys()]);
    const signal = Context.current().cancellationSignal;
    // The run's banned domains are read while the providers answer (awaited below; a failed read
    // fails the attempt there, and is marked handled here in case a provider failure comes first).
    const bannedRead = deps.store.bans.of(input.researchId);
    bannedRead.catch(() => undefined);
    const settled = await Promise.allSettled(
      names.map((n) => deps.providers.get(n)!.search(input.query, { maxResults: deps.maxResults, signal })),
    );
    const errors: string[] = [];
    const hits: SearchHit[] = [];
    settled.forEach((r, i) => {
      metrics.searches.inc({ provider: names[i]!, outcome: r.status === 'fulfilled' ? 'ok' : 'failed' });
      if (r.status === 'fulfilled') hits.push(...r.value);
      else errors.push(`${names[i]}: ${(r.reason as Error).message}`);
    });
    if (hits.length === 0 && errors.length === names.length) {
      const permanent = settled.every((r) => r.status === 'rejected' && isPermanent(r.reason));
      if (permanent)
        throw ApplicationFailure.nonRetryable(
          `every search provider refused "${input.query}": ${errors.join('; ')}`,
          ErrorType.SearchRejected,
        );
      throw new Error(`every search provider failed for "${input.query}": ${errors.join('; ')}`);
    }
    // Results on domains the user banned from this run are dropped before anything is kept.
    const banned = await bannedRead;
    const sources = mergeHits(
      hits.filter((h) => !bannedDomainOf(h.url, banned)),
      deps.maxResults,
    );
    await deps.store.saveSources(input.researchId, sources);
    return {
      query: input.query,
      results: sources.map((s) => ({ sourceId: s.sourceId, title: summarize(s.title, 120), url: s.url })),
      providers: names,
      errors,
    };
  }

  return { webSearch };
}
