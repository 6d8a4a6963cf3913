// A researcher turn's web tools, run in the turn's own activity: the web_search and crawl calls
// the model just asked for (webSearch's and crawlPage's code), so a tool round costs the Temporal
// server no activity task per query or page and no workflow task between them. What comes back is
// each call's result (ToolResultInput, written by the next turn) with the notes the workflow
// records: ids, counts and reasons, never page text.
//
// A retried attempt pays for no model call twice: each call's work runs inside withinCall
// (`tool-<seq>/search-<i>`, `tool-<seq>/page-<url hash>`), so the topic classifier's and the page
// extractions' answers are found in the call log. The searches and page fetches run again; they
// are idempotent (sources and pages are upserts; a page read once is in the run's page cache).
import type { ToolCall } from '../../shared/llm-outputs';
import { addUsage, ZERO_USAGE } from '../../shared/plain';
import type { Usage } from '../../shared/schemas';
import { allPartsOrThrow, settlePart, withinCall } from '../attempt';
import { beating } from '../beat';
import { oneSettingsRead } from '../run-settings';
import { pageUrlHash, type CrawlResult } from '../crawl';
import type { BackgroundWeb } from '../role-kit/role';
import type { ToolResultInput } from '../role-kit/conversation';

/** The workflow's leave to run the turn's web tools in the turn. */
export interface WebToolsInTurn {
  /**
   * Epoch ms from which a search or page read that fails transiently is a result (an error entry,
   * a failed page) instead of failing the attempt: the last attempts before the step's outage
   * limit, so that an outage longer than it ends as it would have in the tools' own activities.
   * Absent: a transient failure always fails the attempt.
   */
  giveUpAt?: number;
}

/** What the turn's web tools did, for the workflow to keep as runTool would have. */
export interface WebToolsResult {
  /** One per web_search or crawl call, at the position of its result (the turn's next seq + its index). */
  results: ToolResultInput[];
  /** `<provider>: <error>` for each provider that failed while others answered. */
  providerErrors: string[];
  /** One message per query whose search failed. */
  searchErrors: string[];
  /** The page extractions' model usage. */
  usage: Usage;
}

/** Beats while the tools run: a search has none of its own (a page read beats itself). */
const TOOLS_BEAT_MS = 10_000;

export function isWebTool(call: ToolCall): call is Extract<ToolCall, { name: 'web_search' | 'crawl' }> {
  return call.name === 'web_search' || call.name === 'crawl';
}

/** A call the turn answers itself: its web tools, and `think` (written down, nothing run). */
export function runsInTurn(call: ToolCall): boolean {
  return isWebTool(call) || call.name === 'think';
}

/**
 * Runs the web_search and crawl calls among `calls` and writes down the think calls (the others
 * are the workflow's), each result
 * at `nextSeq + <its index in calls>`. `goal`: what the search hits are ranked for (the step's
 * description, as the workflow gives webSearch).
 */
export async function runWebTools(
  web: BackgroundWeb,
  conversation: { researchId: string; convKey: string; nextSeq: number; goal: string },
  calls: ToolCall[],
  leave: WebToolsInTurn,
): Promise<WebToolsResult> {
  const givenUp = () => leave.giveUpAt !== undefined && Date.now() >= leave.giveUpAt;
  const out: WebToolsResult = { results: [], providerErrors: [], searchErrors: [], usage: ZERO_USAGE };
  await beating(
    () =>
      oneSettingsRead(() =>
        allPartsOrThrow(
          calls.map(async (call, i) => {
            const seq = conversation.nextSeq + i;
            const common = { researchId: conversation.researchId, convKey: conversation.convKey, seq, toolCallId: call.id };
            if (call.name === 'think') return void out.results.push({ ...common, think: call.args.reflection });
            if (!isWebTool(call)) return;
            await withinCall(`tool-${seq}`, async () => {
              if (call.name === 'web_search') {
                const search = await searchAll(web, conversation, call.args.queries, givenUp, out);
                out.results.push({ ...common, search });
              } else {
                const pages = await readAll(web, conversation.researchId, call.args.urls, call.args.goal, givenUp);
                for (const p of pages) out.usage = addUsage(out.usage, p.usage ?? ZERO_USAGE);
                out.results.push({ ...common, crawl: pages });
              }
            });
          }),
        ),
      ),
    { stage: 'tools' },
    TOOLS_BEAT_MS,
  );
  // In the calls' order, whatever order they finished in.
  out.results.sort((a, b) => a.seq - b.seq);
  return out;
}

/** Each query's source ids, or its error (noted as the workflow notes a failed webSearch). */
async function searchAll(
  web: BackgroundWeb,
  conversation: { researchId: string; goal: string },
  queries: string[],
  givenUp: () => boolean,
  out: WebToolsResult,
): Promise<NonNullable<ToolResultInput['search']>> {
  const settled = await allPartsOrThrow(
    queries.map((query, i) =>
      settlePart(
        withinCall(`search-${i}`, () => web.webSearch({ researchId: conversation.researchId, query, goal: conversation.goal })),
        givenUp,
      ),
    ),
  );
  return settled.map((r, i) => {
    const query = queries[i]!;
    if ('error' in r) {
      out.searchErrors.push(r.error);
      return { query, sourceIds: [], error: r.error };
    }
    out.providerErrors.push(...(r.value.errors ?? []));
    return { query, sourceIds: r.value.results.map((x) => x.sourceId), ...(r.value.notes?.length ? { notes: r.value.notes } : {}) };
  });
}

/** Each page read for the goal; one that failed is a failed page saying why (as crawlPages makes it).
 *  A page that needs a browser comes back as crawlPage left it: the workflow renders it. */
async function readAll(
  web: BackgroundWeb,
  researchId: string,
  urls: string[],
  goal: string,
  givenUp: () => boolean,
): Promise<CrawlResult[]> {
  return allPartsOrThrow(
    urls.map(async (url) => {
      const r = await settlePart(
        withinCall(`page-${pageUrlHash(url).slice(0, 16)}`, () => web.crawlPage({ researchId, url, goal })),
        givenUp,
      );
      return 'error' in r ? { url, status: 'failed' as const, reason: r.error } : r.value;
    }),
  );
}
