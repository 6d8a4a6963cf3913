// The crawl activity: read one URL for a goal. Blocked and skipped pages are results with a
// reason (the step goes on); transient failures throw so Temporal retries them.
import { createHash } from 'node:crypto';
import { bannedDomainOf } from '../../shared/domains';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Config } from '../../config';
import { ErrorType } from '../../shared/errors';
import { type Usage } from '../../shared/schemas';
import { addUsage, summarize, ZERO_USAGE } from '../../shared/plain';
import { sourceIdFor } from '../search/sources';
import { normalizeUrl } from '../../infra/search/types';
import type { Store, StoredPage } from '../store';
import { runSettings } from '../run-settings';
import { toReadable } from './extract';
import { modelGaveUp, noteFallback } from '../role-kit/fallbacks';
import { documentToReadable, OFFICE_CONTENT_TYPES } from './office';
import type { DocumentParser } from '../knowledge/parse-thread';
import { createRobotsChecker } from './robots';
import { createSafeFetcher, DEFAULT_ALLOWED_TYPES, type SafeFetcher, SkippedError } from './safe-fetch';
import { BlockedError, WEB_PORTS } from './ssrf';
import { metrics } from '../../infra/metrics';
import { beating, type Beat } from '../beat';
import { tokenCounter, type TokenCounter } from '../llm/tokens';
import { figuresLeftOut, goalTerms, partsForGoal } from './goal-passages';
import { NEEDS_BROWSER_REASON, needsBrowser } from './browser-rule';
import { describeRange, outsideRange, type DateRange } from '../../shared/time-range';
import { FIGURES_FROM_PAGE } from '../../shared/source-kinds';

export interface CrawlResult {
  url: string;
  status: 'ok' | 'blocked' | 'skipped' | 'failed';
  reason?: string;
  sourceId?: string;
  title?: string;
  /** Short summary of what the page says about the goal. */
  summary?: string;
  relevant?: boolean;
  /** What the extraction cost (the page's read is free); counted against the run's budget. */
  usage?: Usage;
  cached?: boolean;
  /** The server's HTML was too thin (browser-rule.ts): the workflow has the page rendered on the browser queue. */
  needsBrowser?: boolean;
  /** Read in headless Chromium; requests of the page the guard refused, counted and the first few named. */
  rendered?: boolean;
  blockedRequests?: number;
  blocked?: string[];
  /** The publication date the page states (`YYYY-MM-DD`), when it does. */
  published?: string;
}

/** Attempts at fetching one page before it counts as failed (the site, not ours, is down). */
const PAGE_FETCH_ATTEMPTS = 4;

/** Beats of a page read (its heartbeat timeout is 30 s): every 10 s while it lasts. */
const CRAWL_BEAT_MS = 10_000;

/** Tokens of page text one extraction reads when the extractor's context window is not known;
 *  halved on each context-length error. */
const PAGE_BUDGET_TOKENS = 6_000;
/** The most one extraction reads, whatever the window: about what Tongyi's readers take. */
const MAX_PAGE_BUDGET_TOKENS = 96_000;
/** What the extractor's instructions, goal, URL and title take beside the page, in tokens. */
const EXTRACT_PROMPT_TOKENS = 800;

/**
 * Tokens of page text one extraction reads: nine-tenths (token counts are estimates) of what the
 * extractor's context window leaves after its instructions and its answer, between 500 and
 * MAX_PAGE_BUDGET_TOKENS; PAGE_BUDGET_TOKENS while the window is unknown. An 8k window reads about
 * 5.7k tokens of a page at a time; a 128k window about 96k.
 */
export function pageBudgetTokens(window: number | undefined, outputLimit: number): number {
  if (!window) return PAGE_BUDGET_TOKENS;
  return Math.max(500, Math.min(MAX_PAGE_BUDGET_TOKENS, Math.floor((window - outputLimit - EXTRACT_PROMPT_TOKENS) * 0.9)));
}

/** `counter`: the extractor's model's tokenizer family (default cl100k). `parser`: the parse
 *  threads, for PDFs and Office files (without: parsed on the calling thread, as tests do). */
/** What the crawl asks of the model for a fetched page: the evidence it holds for the goal. The
 *  extractor role's call (src/activities/roles/extractor.ts), given by the worker. */
export type PageExtractor = ((
  vars: {
    goal: string;
    url: string;
    title: string;
    page: string;
    truncated: boolean;
    shownChars: number;
    pageChars: number;
    inParts: boolean;
    part: number;
    parts: number;
  },
  ctx: { researchId: string; key: string },
) => Promise<{ output: PageReading; usage: Usage }>) & {
  /** Tokens of page text one extraction reads (pageBudgetTokens of its model's window); without:
   *  PAGE_BUDGET_TOKENS. */
  pageBudget?: () => Promise<number>;
};

type PageReading = { relevant: boolean; evidence: string; summary: string };

type CrawlDeps = {
  config: Pick<Config, 'crawl'>;
  store: Store;
  /** The extractor role's call (src/activities/roles/extractor.ts), which reads a fetched page for the goal. */
  extract: PageExtractor;
  counter?: TokenCounter;
  parser?: DocumentParser;
};
type CrawlInput = { researchId: string; url: string; goal: string };

/** What reading a page needs: the activity's dependencies and the guarded fetcher. */
interface Reader {
  deps: CrawlDeps;
  fetcher: SafeFetcher;
  robotsAllowed: ReturnType<typeof createRobotsChecker>;
}

export function createCrawlActivities(deps: CrawlDeps) {
  const fetcher = createSafeFetcher({
    allowHosts: deps.config.crawl.allowHosts,
    allowedPorts: WEB_PORTS,
    maxBytes: deps.config.crawl.maxBytes,
    connectTimeoutMs: deps.config.crawl.connectTimeoutMs,
    totalTimeoutMs: deps.config.crawl.timeoutMs,
    maxRedirects: 5,
    userAgent: deps.config.crawl.userAgent,
    allowedTypes: [...new Set([...DEFAULT_ALLOWED_TYPES, ...OFFICE_CONTENT_TYPES])],
  });
  const reader: Reader = { deps, fetcher, robotsAllowed: createRobotsChecker(fetcher, deps.config.crawl.userAgent) };

  /** One page read for a goal; counted by outcome (ok, blocked, skipped, failed). */
  async function crawlPage(input: CrawlInput): Promise<CrawlResult> {
    // The stage each beat names; a page read within the first beat asks the server nothing.
    const result = await beating((beat) => readPage(reader, input, beat), { stage: 'start' }, CRAWL_BEAT_MS);
    metrics.pages.inc({ status: result.needsBrowser ? 'needs_browser' : result.status });
    return result;
  }

  return { crawlPage };
}

async function readPage(reader: Reader, input: CrawlInput, beat: Beat): Promise<CrawlResult> {
  const base = { url: input.url };
  let normalized: string;
  try {
    normalized = normalizeUrl(input.url);
  } catch {
    return { ...base, status: 'blocked', reason: 'not a valid URL' };
  }
  const { banned, timeRange } = await runSettings(reader.deps.store.bans, input.researchId);
  const ban = bannedDomainOf(normalized, banned);
  if (ban) return { ...base, status: 'blocked', reason: `the user banned ${ban} from this research` };
  const urlHash = pageUrlHash(normalized);
  const stored = await reader.deps.store.getPage(input.researchId, urlHash);
  const page = stored ?? (await fetchAndSavePage(reader, input, urlHash, banned, beat));
  if ('status' in page) return page;
  if (outsideRange(page.published, timeRange)) {
    // The search snippet of this page, if one was kept, is dated too: the report leaves it out.
    const ids = new Set([sourceIdFor(input.url), sourceIdFor(page.finalUrl)]);
    for (const id of ids) await reader.deps.store.setPublished(input.researchId, id, page.published!);
    const reason = `published ${page.published}, outside the run's time range (${describeRange(timeRange!)}): not used as a source`;
    return { ...base, status: 'skipped', reason };
  }
  return dated(
    reader.deps.store,
    input.researchId,
    await extractForGoal(reader.deps, input, page, stored !== undefined, beat),
    page,
    timeRange,
  );
}

/**
 * A read page's publication date on its source and in its result's title, as the model reads it:
 * "(published 2026-11-02)", or in a run with a time range "(publication date unknown)".
 */
async function dated(
  store: Store,
  researchId: string,
  r: CrawlResult,
  page: StoredPage,
  range: DateRange | undefined,
): Promise<CrawlResult> {
  if (r.status !== 'ok' || !r.sourceId || (!page.published && !range)) return r;
  if (!page.published) return { ...r, title: `${r.title ?? ''} (publication date unknown)`.trim() };
  await store.setPublished(researchId, r.sourceId, page.published);
  return { ...r, published: page.published, title: `${r.title ?? ''} (published ${page.published})`.trim() };
}

/** The key of a page in the run's page cache: its normalized URL, hashed. */
export function pageUrlHash(normalized: string): string {
  return createHash('sha256').update(normalized).digest('hex');
}

/** The page fetched, made readable and saved; or why there is no page. */
async function fetchAndSavePage(
  reader: Reader,
  input: CrawlInput,
  urlHash: string,
  banned: string[],
  beat: Beat,
): Promise<StoredPage | CrawlResult> {
  const ctx = Context.current();
  const base = { url: input.url };
  try {
    beat.say({ stage: 'robots' });
    if (reader.deps.config.crawl.respectRobots && !(await reader.robotsAllowed(input.url, ctx.cancellationSignal))) {
      return { ...base, status: 'skipped', reason: 'robots.txt disallows this URL' };
    }
    beat.say({ stage: 'fetch' });
    const fetched = await reader.fetcher.get(input.url, { signal: ctx.cancellationSignal });
    const redirectedToBan = bannedDomainOf(fetched.finalUrl, banned);
    if (redirectedToBan)
      return { ...base, status: 'blocked', reason: `redirected to ${redirectedToBan}, which the user banned from this research` };
    beat.say({ stage: 'extract', bytes: fetched.body.length });
    const readable =
      (await documentToReadable(fetched.body, fetched.contentType, fetched.finalUrl, reader.deps.parser)) ??
      (await toReadable(fetched.body, fetched.contentType, fetched.finalUrl));
    if (needsBrowser(fetched.contentType, fetched.body, readable.markdown))
      return { ...base, status: 'skipped', reason: NEEDS_BROWSER_REASON, needsBrowser: true };
    if (!readable.markdown.trim()) return { ...base, status: 'skipped', reason: 'no readable text on the page' };
    const page = {
      finalUrl: fetched.finalUrl,
      title: readable.title,
      markdown: readable.markdown,
      contentType: fetched.contentType,
      ...(readable.published ? { published: readable.published } : {}),
    };
    await reader.deps.store.savePage(input.researchId, { urlHash, url: input.url, ...page });
    return page;
  } catch (err) {
    return fetchFailure(err, input.url, ctx.info.attempt);
  }
}

/** A page that cannot be had is a result with a reason; a transient fault throws to be retried. */
export function fetchFailure(err: unknown, url: string, attempt: number): CrawlResult {
  const base = { url };
  if (err instanceof BlockedError) return { ...base, status: 'blocked', reason: err.message };
  if (err instanceof SkippedError) return { ...base, status: 'skipped', reason: err.message };
  const status = (err as { status?: number }).status;
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return { ...base, status: 'failed', reason: (err as Error).message };
  }
  const code = (err as { code?: string; cause?: { code?: string } }).cause?.code ?? (err as { code?: string }).code;
  if (code === 'ENOTFOUND') return { ...base, status: 'failed', reason: `host not found: ${new URL(url).hostname}` };
  // 5xx, 429, timeouts, resets: retried, a few times; then the page is a failed page.
  if (attempt >= PAGE_FETCH_ATTEMPTS) return { ...base, status: 'failed', reason: `${(err as Error).message} (${attempt} attempts)` };
  throw err;
}

/**
 * The page read for the goal (a page too long for the model's window is cut shorter and tried again). A page over the extraction's budget is read in parts (at most
 * `crawl.pageParts`, each read for the goal on its own, their evidence joined), not cut; a page
 * longer than that is first reduced to the passages that bear most on the goal. A part the model
 * could not read is left out; when it could read none, the page's opening is the evidence.
 */
async function extractForGoal(deps: CrawlDeps, input: CrawlInput, page: StoredPage, cached: boolean, beat: Beat): Promise<CrawlResult> {
  let budget = deps.extract.pageBudget ? await deps.extract.pageBudget() : PAGE_BUDGET_TOKENS;
  const counter = deps.counter ?? tokenCounter('cl100k');
  for (let attempt = 1; ; attempt++) {
    beat.say({ stage: 'llm', attempt });
    const { parts, reduced } = partsForGoal(page.markdown, input.goal, budget, deps.config.crawl.pageParts, counter);
    const settled = await Promise.allSettled(
      parts.map((text, i) =>
        deps.extract(
          {
            goal: input.goal,
            url: page.finalUrl,
            title: page.title || '(untitled)',
            page: text,
            truncated: reduced,
            shownChars: parts.reduce((n, p) => n + p.length, 0),
            pageChars: page.markdown.length,
            inParts: parts.length > 1,
            part: i + 1,
            parts: parts.length,
          },
          // A page read whole keeps the key it always had: a retry finds the logged answer.
          { researchId: input.researchId, key: parts.length > 1 ? `extract-${attempt}-part-${i + 1}` : `extract-${attempt}` },
        ),
      ),
    );
    const failed = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    const tooLong = failed.find((err) => err instanceof ApplicationFailure && err.type === ErrorType.LlmContextLength);
    if (tooLong && attempt < 3 && budget > 500) {
      budget = Math.floor(budget / 2);
      continue;
    }
    const fault = tooLong ?? failed.find((err) => !modelGaveUp(err));
    if (fault) throw fault;
    const read = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    if (!read.length) return quoteOpening(deps, input, page, cached, failed[0]);
    const reading = withFigures(joinReadings(read.map((r) => r.output)), parts.join('\n\n'), input.goal);
    const sourceId = await saveReading(deps.store, input, page, `${reading.summary}\n\n${reading.evidence}`.trim());
    return {
      url: input.url,
      status: 'ok',
      sourceId,
      title: summarize(page.title || page.finalUrl, 120),
      summary: summarize(reading.summary, 300),
      relevant: reading.relevant,
      cached,
      usage: read.map((r) => r.usage).reduce(addUsage),
    };
  }
}

/** The reading with the page's own sentences that state figures for the goal its evidence left out
 *  (figuresLeftOut), after a line that says where they come from. */
function withFigures(reading: PageReading, shown: string, goal: string): PageReading {
  const figures = figuresLeftOut(shown, goal, reading.evidence);
  if (!figures.length) return reading;
  const listed = `${FIGURES_FROM_PAGE}\n${figures.map((s) => `- ${s}`).join('\n')}`;
  // A reading that found nothing for the goal on a page that states figures for it says what is not
  // so: the page's own sentences stand for it, when one shares a word with the goal.
  const wanted = new Set(goalTerms(goal));
  if (!reading.relevant && figures.some((f) => goalTerms(f).some((t) => wanted.has(t))))
    return { relevant: true, evidence: listed, summary: summarize(figures.join(' '), 300) };
  return {
    ...reading,
    evidence: [reading.evidence.trim(), listed].filter(Boolean).join('\n\n'),
  };
}

/** The parts' readings as one: the evidence and summaries of the parts that serve the goal (all
 *  parts' when none does), in the page's order. */
function joinReadings(readings: PageReading[]): PageReading {
  if (readings.length === 1) return readings[0]!;
  const relevant = readings.filter((r) => r.relevant);
  const used = relevant.length ? relevant : readings;
  const joined = (texts: string[]) =>
    texts
      .map((t) => t.trim())
      .filter(Boolean)
      .join('\n\n');
  return {
    relevant: relevant.length > 0,
    evidence: joined(used.map((r) => r.evidence)),
    summary: summarize(
      used
        .map((r) => r.summary.trim())
        .filter(Boolean)
        .join(' '),
      600,
    ),
  };
}

/** What a read of a page found, as the source of its final address (its id returned). A search hit whose address
 *  redirected there was read too: its source becomes a read page with the same text (a citation of
 *  either is then a citation of a page the run read). */
async function saveReading(store: Store, input: CrawlInput, page: StoredPage, content: string): Promise<string> {
  const sourceId = sourceIdFor(page.finalUrl);
  await store.saveSources(input.researchId, [
    { sourceId, url: page.finalUrl, title: page.title || page.finalUrl, content, provider: 'crawl' },
  ]);
  const asked = sourceIdFor(input.url);
  if (asked !== sourceId) await store.markSnippetRead(input.researchId, asked, content);
  return sourceId;
}

/** The model could not read the page for the goal: the page's opening is the evidence. */
async function quoteOpening(deps: CrawlDeps, input: CrawlInput, page: StoredPage, cached: boolean, err: unknown): Promise<CrawlResult> {
  const opening = page.markdown.replace(/\s+/g, ' ').trim().slice(0, FALLBACK_EVIDENCE_CHARS);
  const sourceId = await saveReading(deps.store, input, page, opening);
  await noteFallback(
    deps.store,
    input.researchId,
    'extractor',
    sourceId,
    `the page ${page.finalUrl} is quoted from its opening instead of read for the goal`,
    err,
  );
  return {
    url: input.url,
    status: 'ok',
    sourceId,
    title: summarize(page.title || page.finalUrl, 120),
    summary: summarize(opening, 300),
    relevant: true,
    cached,
    usage: ZERO_USAGE,
  };
}

/** Characters of a page kept as evidence when the model cannot extract from it. */
const FALLBACK_EVIDENCE_CHARS = 1_500;
