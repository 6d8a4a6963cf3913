// Activity options shared by the research workflow and its step workflows: one place for the
// timeouts and retry policies each kind of outside call gets.
import type { ActivityOptions } from '@temporalio/workflow';

/** LLM calls: one HTTP call per attempt (the client does not retry); 429 waits for Retry-After
 *  via nextRetryDelay; the activity heartbeats, so a dead worker's call is retried quickly. */
export const LLM_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
};

/** PostgreSQL reads and writes. */
export const STORE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
};

/** One search query across the routed providers (on the rate-limited search queue). */
export const SEARCH_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
};

/** One page read; heartbeats per stage. */
export const CRAWL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 4 },
};

/** MCP servers are other people's code: a bounded number of tries, then the step goes on. */
export const MCP_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
};

/** Sandbox runs heartbeat while the container runs; few retries (each reruns the program). */
export const SANDBOX_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
};
