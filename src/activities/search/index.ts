// The web search, run inside the background phase's activity and the researcher's turns (not an
// activity of its own): one query across the providers the run may use (its own choice, its
// tenant's, or every configured one), routed by topic (router.ts, with the searchTopic model when
// its rules are unsure); hits outside the run's time range, on its
// banned domains or (unless nothing else is left) on its tenant's avoided domains are dropped,
// copies of one document merged, the rest ranked for the goal (quality.ts) and stored; the
// workflow gets source ids and titles. Providers that failed while others answered are named in
// `errors`, and the workflow records them: a failure never becomes a silent gap.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorType } from '../../shared/errors';
import { type SourceRef } from '../../shared/schemas';
import { summarize } from '../../shared/plain';
import type { RunSearchSettings, Store } from '../store';
import { runSettings } from '../run-settings';
import type { Embedder } from '../knowledge/embed';
import { chooseProviders, type TopicClassifier } from './router';
import { allowedProviders, dedupeHits, dropAvoided, filterByTime, rerank } from './quality';
import { toSources } from './sources';
import type { SearchHit, SearchProvider } from '../../infra/search/types';
import { metrics } from '../../infra/metrics';
import { bannedDomainOf } from '../../shared/domains';

export interface WebSearchInput {
  researchId: string;
  query: string;
  /** What the results are for (the step's description, the research question): they are ranked
   *  by their relevance to it. Absent: ranked for the query. */
  goal?: string;
}

export interface WebSearchResult {
  query: string;
  results: SourceRef[];
  providers: string[];
  /** The query's topic as the router named it, and who decided. */
  route?: { topic: string; decidedBy: string };
  /** `<provider>: <error>` for each provider that failed while another answered (absent: none). */
  errors?: string[];
  /** What shaped the results beyond the query: dropped as too old, avoided domains kept because
   *  nothing else was left, providers left out, a ranking without embeddings. */
  notes?: string[];
}

interface SearchDeps {
  store: Store;
  providers: Map<string, SearchProvider>;
  maxResults: number;
  /** The knowledge base's embedder: with one enabled, results are ranked by embeddings. */
  embedder?: Embedder;
  /** The model call that names a query's topic when the router's rules are unsure, for a run (the
   *  search-topic role's; absent: rules only). */
  classifierFor?: (researchId: string) => TopicClassifier;
}

function isPermanent(err: unknown): boolean {
  const status = (err as { status?: number }).status;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** Every routed provider's hits; fails (retryably or not) only when every one of them failed. */
async function askProviders(deps: SearchDeps, query: string, names: string[], settings: RunSearchSettings) {
  const signal = Context.current().cancellationSignal;
  const opts = { maxResults: deps.maxResults, signal, ...(settings.timeRange ? { timeRange: settings.timeRange } : {}) };
  const settled = await Promise.allSettled(names.map((n) => deps.providers.get(n)!.search(query, opts)));
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
      throw ApplicationFailure.nonRetryable(`every search provider refused "${query}": ${errors.join('; ')}`, ErrorType.SearchRejected);
    throw ApplicationFailure.retryable(`every search provider failed for "${query}": ${errors.join('; ')}`, ErrorType.SearchUnavailable);
  }
  return { hits, errors };
}

export function createSearchActivities(deps: SearchDeps) {
  const embedder = deps.embedder?.enabled ? deps.embedder : undefined;
  const embed = embedder && (async (texts: string[]) => (await embedder.embed(texts, Context.current().cancellationSignal)).vectors);

  async function webSearch(input: WebSearchInput): Promise<WebSearchResult> {
    if (deps.providers.size === 0) {
      throw ApplicationFailure.nonRetryable(
        "no search provider is configured: set SEARCH_PROVIDERS (and SEARXNG_URL or the providers' keys)",
        ErrorType.SearchNotConfigured,
      );
    }
    // Bans, time range, provider choice and the tenant's preferences: one read, before the providers
    // (one for the whole round when the search runs in one with others).
    const settings = await runSettings(deps.store.bans, input.researchId);
    const allowed = allowedProviders([...deps.providers.keys()], settings);
    const classify = deps.classifierFor?.(input.researchId);
    const route = await chooseProviders(input.query, allowed.names, classify);
    const names = route.providers;
    const { hits, errors } = await askProviders(deps, input.query, names, settings);
    // Results on domains the user banned from this run are dropped before anything is kept.
    const timed = filterByTime(
      hits.filter((h) => !bannedDomainOf(h.url, settings.banned)),
      settings.timeRange,
    );
    const wanted = dropAvoided(dedupeHits(timed.kept), settings.avoidDomains);
    const ranked = await rerank(wanted.kept, input.goal ?? input.query, { embed, prefer: settings.preferDomains });
    const sources = toSources(ranked.hits, deps.maxResults, settings.timeRange);
    await deps.store.saveSources(input.researchId, sources);
    const notes = [allowed.note, timed.note, wanted.note, ranked.note].filter((n): n is string => n !== undefined);
    return {
      query: input.query,
      results: sources.map((s) => ({ sourceId: s.sourceId, title: summarize(s.title, 120), url: s.url })),
      providers: names,
      route: { topic: route.topic, decidedBy: route.decidedBy },
      errors,
      ...(notes.length ? { notes } : {}),
    };
  }

  return { webSearch };
}
