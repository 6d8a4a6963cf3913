// The researcher's tools. web_search and crawl run inside the turn that asked for them
// (src/activities/phases/researcher-web.ts); their results come here to be kept, and pages that
// need a browser are rendered here. The workflow runs the others as activities: knowledge_search,
// python (the coder's sandbox activity, on the sandbox queue) and MCP tools. Each result is
// written into the conversation at the position the workflow chose, so a retried round finds it
// there.
import { ActivityFailure, ApplicationFailure, isCancellation, TimeoutFailure } from '@temporalio/workflow';
import { ErrorType, failureMessage } from '../shared/errors';
import { pythonRunNumber } from '../shared/plain';
import type { ToolCall } from '../shared/llm-outputs';
import { addUsage, ZERO_USAGE } from '../shared/plain';
import type { StepInput, Usage } from '../shared/schemas';
import type { ToolResultInput } from '../activities/role-kit/conversation';
import type { CrawlResult } from '../activities/crawl';
import type { Calls } from './proxies';
import type { StepNotes } from './step-notes';

/** Keeps a tool's result for the next model turn, which writes it before asking. */
export type KeepToolResult = (result: ToolResultInput) => void;

/** Reads pages for a goal, each an activity; a page that fails is a result saying why. */
export async function crawlPages(calls: Calls, researchId: string, urls: string[], goal: string) {
  const results = await Promise.allSettled(urls.map((url) => crawlPage(calls, researchId, url, goal)));
  const pages = results.map((r, i) =>
    r.status === 'fulfilled' ? r.value : { url: urls[i]!, status: 'failed' as const, reason: failureMessage(r.reason) },
  );
  return { pages, usage: pages.reduce((sum, p) => addUsage(sum, p.usage ?? ZERO_USAGE), ZERO_USAGE) };
}

/**
 * One page read for a goal. A page whose server HTML is too thin comes back from crawlPage as
 * needing a browser: it is rendered and saved on the browser queue, then read for the goal by
 * crawlPage again (on the model queue, from the saved page).
 */
async function crawlPage(calls: Calls, researchId: string, url: string, goal: string): Promise<CrawlResult> {
  const first = await calls.crawl.crawlPage.executeWithOptions({ summary: `crawl: ${url.slice(0, 100)}` }, [{ researchId, url, goal }]);
  return continueInBrowser(calls, researchId, url, goal, first);
}

/**
 * A page read once (by its own crawlPage activity, or inside a researcher turn): one that needs a
 * browser is rendered on the browser queue and read for the goal again; any other is done.
 */
export async function continueInBrowser(
  calls: Calls,
  researchId: string,
  url: string,
  goal: string,
  first: CrawlResult,
): Promise<CrawlResult> {
  if (!first.needsBrowser) return first;
  const summary = `crawl: ${url.slice(0, 100)}`;
  let rendered: CrawlResult;
  try {
    rendered = await calls.renderPage(`render: ${url.slice(0, 100)}`, { researchId, url });
  } catch (err) {
    if (!waitedForBrowser(err)) throw err;
    return {
      url,
      status: 'skipped',
      reason: `${first.reason ?? 'the page needs a browser'}, and no worker with a browser took it within ${calls.browserWait}`,
    };
  }
  if (rendered.status !== 'ok') return rendered;
  const read = await calls.crawl.crawlPage.executeWithOptions({ summary }, [{ researchId, url, goal }]);
  const { blockedRequests, blocked } = rendered;
  return { ...read, cached: false, rendered: true, ...(blockedRequests ? { blockedRequests } : {}), ...(blocked ? { blocked } : {}) };
}

/** No worker with a browser took the page within calls.browserWait (schedule-to-start timeouts are not retried). */
function waitedForBrowser(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START';
}

/**
 * A web_search or crawl call's result that the turn ran in its own activity, kept for the next
 * turn once its pages that need a browser are rendered and read (a page that fails there is a
 * failed page saying why, as in crawlPages). Returns those reads' usage.
 */
export async function keepFromTurn(
  calls: Calls,
  researchId: string,
  call: ToolCall,
  result: ToolResultInput,
  keep: KeepToolResult,
): Promise<Usage> {
  if (call.name !== 'crawl' || !result.crawl?.some((p) => p.needsBrowser)) {
    keep(result);
    return ZERO_USAGE;
  }
  const goal = call.args.goal;
  const read = await Promise.allSettled(
    result.crawl.map((p) => (p.needsBrowser ? continueInBrowser(calls, researchId, p.url, goal, p) : Promise.resolve(p))),
  );
  const pages = read.map((r, i) =>
    r.status === 'fulfilled' ? r.value : { url: result.crawl![i]!.url, status: 'failed' as const, reason: failureMessage(r.reason) },
  );
  keep({ ...result, crawl: pages });
  return pages.reduce((sum, p, i) => (result.crawl![i]!.needsBrowser ? addUsage(sum, p.usage ?? ZERO_USAGE) : sum), ZERO_USAGE);
}

/** A tool call the turn left to the workflow: every one but web_search and crawl, which the turn
 *  ran itself (a worker's researcherTurn always has its web tools). */
export async function runTool(
  calls: Calls,
  input: StepInput,
  convKey: string,
  seq: number,
  call: ToolCall,
  notes: StepNotes,
  keep: KeepToolResult,
): Promise<Usage> {
  const common = { researchId: input.researchId, convKey, seq, toolCallId: call.id };
  switch (call.name) {
    case 'knowledge_search':
      await searchKnowledge(calls, input, call, common, keep);
      return ZERO_USAGE;
    case 'python':
      await runPython(calls, input, call, common, notes, keep);
      return ZERO_USAGE;
    case 'mcp':
      await callMcpTool(calls, call, common, notes, keep);
      return ZERO_USAGE;
    case 'think':
      // Written down by the next turn (a worker without web tools did not answer it in the turn).
      keep({ ...common, think: call.args.reflection });
      return ZERO_USAGE;
    default:
      throw ApplicationFailure.nonRetryable(
        `tool ${(call as { name: string }).name} is not available to this researcher`,
        ErrorType.UnknownTool,
      );
  }
}

/** Where a tool's result goes in the conversation. */
type ResultPlace = Pick<ToolResultInput, 'researchId' | 'convKey' | 'seq' | 'toolCallId'>;
type CallOf<Name extends ToolCall['name']> = Extract<ToolCall, { name: Name }>;

async function searchKnowledge(
  calls: Calls,
  input: StepInput,
  call: CallOf<'knowledge_search'>,
  common: ResultPlace,
  keep: KeepToolResult,
) {
  const r = await calls.knowledge.knowledgeSearch.executeWithOptions({ summary: `knowledge search: ${call.args.query.slice(0, 80)}` }, [
    {
      researchId: input.researchId,
      query: call.args.query,
      ...(call.args.alternatives ? { alternatives: call.args.alternatives } : {}),
      ...(input.knowledge ? { scope: input.knowledge } : {}),
    },
  ]);
  keep({ ...common, text: r.text });
}

async function runPython(
  calls: Calls,
  input: StepInput,
  call: CallOf<'python'>,
  common: ResultPlace,
  notes: StepNotes,
  keep: KeepToolResult,
): Promise<void> {
  const sources = call.args.files ?? [];
  const data = Object.entries(call.args.data ?? {}).map(([name, content]) => ({ name, content }));
  try {
    // The same activity, queue and retry policy as the coder's programs: an unreachable Docker
    // engine is waited out like any outage; a program that fails is a result, not a fault.
    const run = await calls.runCode(`researcher ${input.step.id}: python`, {
      researchId: input.researchId,
      stepId: input.step.id,
      attempt: pythonRunNumber(input.attempt, common.seq),
      code: call.args.code,
      ...(data.length ? { files: data } : {}),
      ...(sources.length ? { sources } : {}),
    });
    keep({ ...common, python: { run, sources, data: data.map((d) => d.name) } });
  } catch (err) {
    if (isCancellation(err)) throw err;
    // The sandbox stayed down past the outage limit, its image is missing, or the program
    // printed more than a result can hold: the step goes on with the other tools.
    notes.add('python sandbox', failureMessage(err));
    keep({ ...common, text: `python could not run: ${failureMessage(err)}` });
  }
}

async function callMcpTool(calls: Calls, call: CallOf<'mcp'>, common: ResultPlace, notes: StepNotes, keep: KeepToolResult): Promise<void> {
  try {
    await calls.mcp.callMcpTool.executeWithOptions({ summary: `mcp: ${call.server}.${call.tool}` }, [
      { ...common, server: call.server, tool: call.tool, args: call.args },
    ]);
  } catch (err) {
    if (isCancellation(err)) throw err;
    notes.add(`MCP tool ${call.server}.${call.tool}`, failureMessage(err));
    // The model must hear that the tool failed, or the conversation has a call with no answer.
    keep({
      ...common,
      text: `Tool ${call.server}.${call.tool} failed: ${failureMessage(err)}`,
    });
  }
}
