// The workflows' view of the activities: one proxy per group, each with the timeouts and retry
// policy its outside system needs. A group's proxy offers only that group's activities, so an
// activity called with another system's options is a type error.
import { proxyActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { CrawlActivities, LlmActivities, McpActivities, SandboxActivities, SearchActivities, StoreActivities } from '../activities';
import { SANDBOX_QUEUE_SUFFIX, SEARCH_QUEUE_SUFFIX } from '../shared/constants';

/** LLM calls: one HTTP call per attempt (the client does not retry); 429 waits for Retry-After
 *  via nextRetryDelay; the activity heartbeats, so a dead worker's call is retried quickly. */
const LLM_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
};

/** PostgreSQL reads and writes. */
const STORE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
};

/** One search query across the routed providers (on the rate-limited search queue). */
const SEARCH_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
};

/** One page read; heartbeats per stage. */
const CRAWL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 4 },
};

/** MCP servers are other people's code: a bounded number of tries, then the step goes on. */
const MCP_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
};

/** Sandbox runs heartbeat while the container runs; few retries (each reruns the program). */
const SANDBOX_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
};

export const llm = proxyActivities<LlmActivities>(LLM_OPTIONS);
export const store = proxyActivities<StoreActivities>(STORE_OPTIONS);
export const crawl = proxyActivities<CrawlActivities>(CRAWL_OPTIONS);
export const mcp = proxyActivities<McpActivities>(MCP_OPTIONS);
const searchProxy = proxyActivities<SearchActivities>(SEARCH_OPTIONS);
const sandboxProxy = proxyActivities<SandboxActivities>(SANDBOX_OPTIONS);

type Input<F extends (...args: never[]) => unknown> = Parameters<F>[0];

/** One web search, on `<queue>-search`: the server rate-limits that queue across all workers. */
export function webSearch(summary: string, input: Input<SearchActivities['webSearch']>) {
  return searchProxy.webSearch.executeWithOptions({ summary, taskQueue: `${workflowInfo().taskQueue}${SEARCH_QUEUE_SUFFIX}` }, [input]);
}

/** One sandbox run, on `<queue>-sandbox`, where each worker runs only a few at once. */
export function runCode(summary: string, input: Input<SandboxActivities['runCode']>) {
  return sandboxProxy.runCode.executeWithOptions({ summary, taskQueue: `${workflowInfo().taskQueue}${SANDBOX_QUEUE_SUFFIX}` }, [input]);
}
