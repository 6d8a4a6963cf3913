// The background phase in one activity: the rewrite, the searches, the knowledge base, the best
// pages read for the research question, and the brief, on the model queue, each part by its
// role's or its tool's code (expandQueries, webSearch, knowledgeSearch, crawlPage,
// writeBackground). A run pays the Temporal server for one activity task here instead of about
// eight, and for one workflow task instead of four or five. It writes the first plan too, by
// planResearch's code, from the brief it just wrote: one activity task and workflow task fewer.
// Runs that can ask no clarifying question (the default) have the coordinator's classification
// made here first (classifyThenBackground): a request answered
// directly ends the activity with the answer, any other goes on to the phase with the
// coordinator's reading; one activity task and workflow task fewer again.
//
// A retried attempt pays for no model call twice: each part runs inside withinCall, so its calls
// are keyed `<activity>/<part>/…` in the call log, and the next attempt reuses their answers (the
// rewrite, each page's extraction, each query's topic, the brief). The searches and page fetches
// run again: they are idempotent (sources and pages are upserts, and a page read once is in the
// run's page cache). A search's hits may differ on the second attempt; a page not read before is
// then read (and paid for) once.
import { ApplicationFailure } from '@temporalio/activity';
import { bestPages, withCoordinatorReading } from '../../shared/background';
import { briefView } from '../../shared/brief';
import type { PlanBrief } from '../../shared/schemas';
import { ErrorType } from '../../shared/errors';
import { addUsage, ZERO_USAGE } from '../../shared/plain';
import type { MemoryOwner } from '../../shared/memory';
import type { KnowledgeScope, SourceRef, Usage } from '../../shared/schemas';
import { beating, type Beat } from '../beat';
import { allPartsOrThrow, settlePart, withinCall } from '../attempt';
import { oneSettingsRead } from '../run-settings';
import type { CrawlResult } from '../crawl';
import type { Llm } from '../llm/call';
import type { Store } from '../store';
import { pageUrlHash } from '../crawl';
import { createBackgroundActivities, type BackgroundPage } from '../roles/background';
import { createCoordinatorActivities, type CoordinatorDecision } from '../roles/coordinator';
import { createPlannerActivities } from '../roles/planner';
import type { BackgroundWeb, RoleDeps } from '../role-kit/role';
import { createRewriteActivities } from '../roles/rewrite';

export interface BackgroundPhaseInput {
  researchId: string;
  /** The user's question with the coordinator's reading (as expandQueries takes it). */
  question: string;
  locale: string;
  /** Search queries asked of the rewrite. */
  count: number;
  /** Pages to read for the research question (by the run's effort). */
  pages: number;
  /** The run's knowledge base; absent: none is searched. */
  knowledge?: KnowledgeScope;
  /**
   * Epoch ms from which a search or page read that fails transiently is a search error or a failed
   * page (noted, the brief goes on) instead of failing the attempt: the last attempts before the
   * run's outage limit, so that an outage longer than the limit leaves a note, as their own
   * activities did, rather than failing the run. Absent: a transient failure fails the attempt.
   */
  searchesGiveUpAt?: number;
  /** Write the first plan after the brief (planResearch's first attempt, without feedback). */
  plan?: { maxSteps: number; memoryOf?: MemoryOwner };
}

/** What the phase did, for the workflow's notes: counts, ids and reasons, never page text. */
export interface BackgroundPhaseResult {
  researchQuestion: string;
  queries: number;
  /** One message per query whose search failed (permanently: a transient failure is retried). */
  searchErrors: string[];
  /** `<provider>: <error>` for each provider that failed while others answered. */
  providerErrors: string[];
  /** How the knowledge base's vectors were searched, when it was searched ('off': full text only). */
  knowledgeVectors?: string;
  /** The pages chosen, each read (with its source id) or not (with the reason). */
  pages: PhasePage[];
  /** The brief's document key and the number of sources it was written from. */
  brief: { key: string; sources: number };
  /** The brief as the plan's review shows it (absent when none was stored). */
  shown?: PlanBrief;
  /** The phase's model calls, the plan's not included. */
  usage: Usage;
  /** planResearch's answer, when the input asked for the plan (its usage is its own). */
  plan?: PlanAnswer;
}

/** The coordinator's classification, then the phase: the phase's input without the question and
 *  locale, which the classification settles. */
export interface ClassifyThenBackgroundInput extends Omit<BackgroundPhaseInput, 'question' | 'locale'> {
  /** The user's question, as the coordinator reads it. */
  userQuestion: string;
  /** The locale the run asked for; absent: the one the coordinator detects. */
  locale?: string;
  /** Whose memory the coordinator's prompt holds (absent: none). */
  memoryOf?: MemoryOwner;
}

export interface ClassifyThenBackgroundResult {
  /** The coordinator's decision, its locale settled; never a clarifying question. */
  decision: CoordinatorDecision;
  /** The classification's model call. */
  usage: Usage;
  /** The phase, when the request is researched; absent when it was answered directly. */
  background?: BackgroundPhaseResult;
}

type PlanResearch = ReturnType<typeof createPlannerActivities>['planResearch'];
type PlanAnswer = Awaited<ReturnType<PlanResearch>>;
type ClassifyRequest = ReturnType<typeof createCoordinatorActivities>['classifyRequest'];

/** The roles' activities whose work the phase does. */
interface PhaseParts {
  expandQueries: ReturnType<typeof createRewriteActivities>['expandQueries'];
  writeBackground: ReturnType<typeof createBackgroundActivities>['writeBackground'];
  planResearch: PlanResearch;
  /** The brief as the plan's review shows it. */
  readBrief: (researchId: string, key: string, sourceIds: string[]) => Promise<PlanBrief | undefined>;
}

/** A page of the phase: `needsBrowser` when only a browser could read it, which this phase has not. */
export type PhasePage = BackgroundPage & { reason?: string; needsBrowser?: boolean };

/** Beats of the phase: every 10 s at most (a third of its heartbeat timeout), whatever the stage. */
const PHASE_BEAT_MS = 10_000;

/** The phase's searches (each its part of the activity), reading the run's search settings once. */
function searchAll(web: BackgroundWeb, researchId: string, queries: string[], goal: string, givenUp: () => boolean) {
  return oneSettingsRead(() =>
    allPartsOrThrow(
      queries.map((query, i) =>
        settlePart(
          withinCall(`search-${i}`, () => web.webSearch({ researchId, query, goal })),
          givenUp,
        ),
      ),
    ),
  );
}

/** The best pages, each read for the goal (a failed one says why), reading the run's settings once. */
function readAll(web: BackgroundWeb, researchId: string, urls: string[], goal: string, givenUp: () => boolean) {
  return oneSettingsRead(() =>
    allPartsOrThrow(
      urls.map(async (url) => {
        const r = await settlePart(
          withinCall(`page-${pageUrlHash(url).slice(0, 16)}`, () => web.crawlPage({ researchId, url, goal })),
          givenUp,
        );
        return 'error' in r ? { url, status: 'failed' as const, reason: r.error } : r.value;
      }),
    ),
  );
}

/** `writeBackground`, `planResearch`, `classifyRequest`: the roles' own code, whose work the phase
 *  does here. */
export function createBackgroundPhase(
  deps: { llm: Llm; store: Store; web?: BackgroundWeb | undefined },
  writeBackground: ReturnType<typeof createBackgroundActivities>['writeBackground'],
  planResearch: PlanResearch,
  classifyRequest: ClassifyRequest,
) {
  const parts: PhaseParts = {
    expandQueries: createRewriteActivities(deps).expandQueries,
    writeBackground,
    planResearch,
    readBrief: async (researchId, key, sourceIds) => {
      const [doc] = await deps.store.getDocuments(researchId, [key]);
      return doc ? briefView(doc.content, await deps.store.getSources(researchId, sourceIds)) : undefined;
    },
  };

  function webOf(): BackgroundWeb {
    if (!deps.web)
      throw ApplicationFailure.nonRetryable(
        'this worker cannot search: it was made without the web activities',
        ErrorType.SearchNotConfigured,
      );
    return deps.web;
  }

  async function researchBackground(input: BackgroundPhaseInput): Promise<BackgroundPhaseResult> {
    const web = webOf();
    return beating((beat) => phase(parts, web, input, beat), { stage: 'rewrite' }, PHASE_BEAT_MS);
  }

  async function classifyThenBackground(input: ClassifyThenBackgroundInput): Promise<ClassifyThenBackgroundResult> {
    const web = webOf();
    return beating((beat) => classifyThen(web, input, beat), { stage: 'classify' }, PHASE_BEAT_MS);
  }

  async function classifyThen(web: BackgroundWeb, input: ClassifyThenBackgroundInput, beat: Beat): Promise<ClassifyThenBackgroundResult> {
    const { userQuestion, locale: requested, memoryOf, ...rest } = input;
    const { decision, usage } = await withinCall('classify', () =>
      classifyRequest({
        researchId: input.researchId,
        question: userQuestion,
        allowClarification: false,
        clarifications: '',
        ...(requested ? { locale: requested } : {}),
        ...(memoryOf ? { memoryOf } : {}),
      }),
    );
    if (decision.action === 'answer_directly') return { decision, usage };
    beat.say({ stage: 'rewrite' });
    const question = withCoordinatorReading(userQuestion, decision.researchTopic ?? userQuestion);
    // The locale is settled: the run's own when it asked for one, else the one the question is in.
    const background = await phase(parts, web, { ...rest, question, locale: decision.locale }, beat);
    return { decision, usage, background };
  }

  return { researchBackground, classifyThenBackground };
}

/** The phase itself, by the roles' own activities (`parts`), in an activity that beats. */
async function phase(parts: PhaseParts, web: BackgroundWeb, input: BackgroundPhaseInput, beat: Beat): Promise<BackgroundPhaseResult> {
  const { expandQueries, writeBackground, planResearch, readBrief } = parts;
  const { researchId } = input;
  const rewrite = await withinCall('rewrite', () =>
    expandQueries({ researchId, question: input.question, locale: input.locale, count: input.count }),
  );
  const { researchQuestion, queries } = rewrite.expansion;
  beat.say({ stage: 'search', queries: queries.length });
  // Past the time the workflow gave the phase's parts, an outage is a part's error, not a failed attempt.
  const givenUp = () => input.searchesGiveUpAt !== undefined && Date.now() >= input.searchesGiveUpAt;
  const searches = await searchAll(web, researchId, queries, researchQuestion, givenUp);
  // The user's own documents first: they lead the brief's sources (as in the workflow's phase).
  beat.say({ stage: 'knowledge' });
  const knowledge = input.knowledge
    ? await web.knowledgeSearch({ researchId, query: researchQuestion, alternatives: queries.slice(0, 3), scope: input.knowledge, k: 8 })
    : undefined;
  const sourceIds = (knowledge?.results ?? []).map((r) => r.sourceId);
  const hits: SourceRef[][] = [];
  const searchErrors: string[] = [];
  const providerErrors: string[] = [];
  for (const s of searches) {
    if ('error' in s) searchErrors.push(s.error);
    else {
      for (const r of s.value.results) if (!sourceIds.includes(r.sourceId)) sourceIds.push(r.sourceId);
      providerErrors.push(...(s.value.errors ?? []));
    }
    hits.push('error' in s ? [] : s.value.results);
  }
  beat.say({ stage: 'pages' });
  const urls = bestPages(hits, input.pages);
  const read = await readAll(web, researchId, urls, researchQuestion, givenUp);
  const pages = read.map(backgroundPage);
  beat.say({ stage: 'brief' });
  const brief = await withinCall('brief', () =>
    writeBackground({ researchId, question: researchQuestion, locale: input.locale, sourceIds, searchErrors, pages }),
  );
  const usage = [rewrite.usage, ...read.map((p) => p.usage ?? ZERO_USAGE), brief.usage].reduce(addUsage, ZERO_USAGE);
  const shown = await readBrief(researchId, brief.key, brief.sourceIds);
  const asked = input.plan;
  if (asked) beat.say({ stage: 'plan' });
  const plan = asked
    ? await withinCall('plan', () =>
        planResearch({
          researchId,
          question: researchQuestion,
          locale: input.locale,
          maxSteps: asked.maxSteps,
          feedback: '',
          problems: [],
          ...(asked.memoryOf ? { memoryOf: asked.memoryOf } : {}),
        }),
      )
    : undefined;
  return {
    researchQuestion,
    queries: queries.length,
    searchErrors,
    providerErrors,
    ...(knowledge?.vectors ? { knowledgeVectors: knowledge.vectors } : {}),
    pages,
    brief: { key: brief.key, sources: brief.sourceIds.length },
    ...(shown ? { shown } : {}),
    usage,
    ...(plan ? { plan } : {}),
  };
}

/** A page as the brief takes it. One that needs a browser is not read here: the phase cannot wait
 *  for the browser queue inside an activity (the research steps' page reads render such pages). */
function backgroundPage(r: CrawlResult): PhasePage {
  if (r.needsBrowser) return { url: r.url, status: 'skipped', needsBrowser: true, ...(r.reason ? { reason: r.reason } : {}) };
  return { url: r.url, status: r.status, ...(r.sourceId ? { sourceId: r.sourceId } : {}), ...(r.reason ? { reason: r.reason } : {}) };
}

/** The background phase's activities (researchBackground, classifyThenBackground), each part by
 *  its role's own code. */
export function createBackgroundPhaseActivities(deps: RoleDeps) {
  return createBackgroundPhase(
    deps,
    createBackgroundActivities(deps).writeBackground,
    createPlannerActivities(deps).planResearch,
    createCoordinatorActivities(deps).classifyRequest,
  );
}
