// Phases 2 and 3: rewrite the question and expand it into search queries, run the searches in
// parallel, read the best few pages they found, and write a background brief for the planner
// from the snippets and those pages, then the planner's first answer: all of it in one activity
// on the model queue (researchBackground).
import { plural } from '../../shared/plural';
import { BACKGROUND_PAGES, withCoordinatorReading } from '../../shared/background';
import { summarize } from '../../shared/plain';
import type { BackgroundPhaseResult } from '../../activities/phases/background-phase';
import { backgroundPhaseOptions, partsGiveUpAt } from '../proxies';
import type { Coordination } from './coordinate';
import type { PlannerAnswer } from './plan';
import type { RunState } from './run-state';

/** Phases 1 to 3's outcome: the coordinator's direct answer, or the phase's for research. */
export type Opening = Extract<Coordination, { kind: 'answer' }> | ({ kind: 'research' } & Investigated);

/** The phase's outcome: the rewritten research question, and the planner's first answer, written
 *  in the phase's activity from its brief. */
export interface Investigated {
  researchQuestion: string;
  firstPlan?: PlannerAnswer;
}

/**
 * The whole phase in one activity: one activity task and one workflow task instead of eight or so
 * and four or five. The knowledge base is searched inside it too (when the run has one), and the
 * first plan is written there (the planner's first attempt, which needs nothing but the brief).
 */
export async function investigate(run: RunState, topic: string): Promise<Investigated> {
  run.moveTo('planning');
  const question = withCoordinatorReading(run.userQuestion, topic);
  const opts = run.options;
  const wanted = BACKGROUND_PAGES[opts.effort ?? 'standard'];
  const r = await run.calls.llm.researchBackground.executeWithOptions(
    {
      summary: `background: ${opts.queryCount} queries, ${plural(wanted, 'page')}, then the plan`,
      ...backgroundPhaseOptions(run.retry),
      startToCloseTimeout: BACKGROUND_AND_PLAN_TIMEOUT,
    },
    [
      {
        researchId: run.id,
        question,
        locale: run.locale,
        count: opts.queryCount,
        pages: wanted,
        ...(run.knowledge ? { knowledge: run.knowledge } : {}),
        searchesGiveUpAt: searchesGiveUpAt(run),
        plan: { maxSteps: opts.maxSteps, ...(run.memoryOf ? { memoryOf: run.memoryOf } : {}) },
      },
    ],
  );
  return tookBackground(run, r);
}

/** What the phase's activity did: its usage and notes on the run, and the phase's outcome. */
function tookBackground(run: RunState, r: BackgroundPhaseResult): Investigated {
  run.addUsage(r.usage);
  if (r.shown) run.board.showBrief(r.shown);
  if (r.knowledgeVectors === 'off') noteFullTextOnly(run);
  noteSearches(run, r.queries, r.searchErrors, r.providerErrors);
  noteUnread(run, r.pages);
  return { researchQuestion: r.researchQuestion, ...(r.plan ? { firstPlan: r.plan } : {}) };
}

/** The phase's time with the plan: one model call more (the LLM proxy's 5 minutes). */
const BACKGROUND_AND_PLAN_TIMEOUT = '20 minutes';
/** With the coordinator's classification first: one model call more again. */
const CLASSIFY_AND_BACKGROUND_TIMEOUT = '25 minutes';

/**
 * The coordinator and this phase in one activity, for a run that can ask no clarifying question:
 * the classification, then, unless it answered directly, the phase and the first plan as
 * investigate has them made.
 */
export async function classifyThenInvestigate(run: RunState): Promise<Opening> {
  const opts = run.options;
  const wanted = BACKGROUND_PAGES[opts.effort ?? 'standard'];
  const r = await run.calls.llm.classifyThenBackground.executeWithOptions(
    {
      summary: `coordinator, then background: ${opts.queryCount} queries, ${plural(wanted, 'page')}, then the plan`,
      ...backgroundPhaseOptions(run.retry),
      startToCloseTimeout: CLASSIFY_AND_BACKGROUND_TIMEOUT,
    },
    [
      {
        researchId: run.id,
        userQuestion: run.userQuestion,
        ...(opts.locale ? { locale: opts.locale } : {}),
        ...(run.memoryOf ? { memoryOf: run.memoryOf } : {}),
        count: opts.queryCount,
        pages: wanted,
        ...(run.knowledge ? { knowledge: run.knowledge } : {}),
        searchesGiveUpAt: searchesGiveUpAt(run),
        plan: { maxSteps: opts.maxSteps, ...(run.memoryOf ? { memoryOf: run.memoryOf } : {}) },
      },
    ],
  );
  run.addUsage(r.usage);
  run.setLocale(opts.locale ?? r.decision.locale);
  if (!r.background) return { kind: 'answer', answer: r.decision.directAnswer ?? '' };
  return { kind: 'research', ...tookBackground(run, r.background) };
}

/** What the phase still needs after its searches (pages and the brief), kept out of their retries. */
const AFTER_SEARCHES_MS = 2 * 60_000;

/**
 * When the phase's searches and page reads stop failing its attempt on an outage: a retry interval
 * and the rest of the phase before the run's outage limit. A search or page outage longer than that
 * is a note and the brief is written from what answered; a model or database outage still fails
 * the phase at the limit.
 */
function searchesGiveUpAt(run: RunState): number {
  return partsGiveUpAt({ maxOutage: run.options.maxOutage, retry: run.retry }, AFTER_SEARCHES_MS);
}

function noteSearches(run: RunState, queries: number, searchErrors: string[], providerErrors: string[]): void {
  if (searchErrors.length)
    run.note(`Background search failed for ${searchErrors.length} of ${queries} queries: ${summarize(searchErrors[0]!, 160)}`);
  if (providerErrors.length)
    run.note(
      `Background search: a provider failed ${plural(providerErrors.length, 'time')} while others answered: ${summarize(providerErrors[0]!, 160)}`,
    );
}

function noteFullTextOnly(run: RunState): void {
  run.note('Knowledge base: no embeddings endpoint is configured, so its passages were found by full text only.');
}

/** A page the background did not read, as its note names it. */
interface UnreadPage {
  url: string;
  status: string;
  reason?: string | undefined;
  needsBrowser?: boolean | undefined;
}

/** Pages that could not be read, with their reasons; the brief went on with the others. */
function noteUnread(run: RunState, pages: UnreadPage[]): void {
  const unread = pages.filter((p) => p.status !== 'ok');
  if (unread.length)
    run.note(
      `Background: ${unread.length} of ${plural(pages.length, 'page')} could not be read (${unread.map(unreadReason).join('; ')}); the brief uses the others and the snippets.`,
    );
}

function unreadReason(p: UnreadPage): string {
  // The one-activity phase cannot wait for the browser queue; the research steps' reads render.
  if (p.needsBrowser) return `${p.url}: ${p.status}, it needs a browser, which the background does not use (the research steps do)`;
  return `${p.url}: ${p.status}${p.reason ? `, ${summarize(p.reason, 80)}` : ''}`;
}
