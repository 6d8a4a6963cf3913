// The workflows' view of the activities: one proxy per group, each with the timeouts and retry
// policy its outside system needs. A group's proxy offers only that group's activities, so an
// activity called with another system's options is a type error.
//
// Transient faults are retried with capped backoff and no attempt limit: an outage of the LLM
// provider, PostgreSQL, a search API or the Docker engine only costs time, up to the run's
// maxOutage (the schedule-to-close timeout), after which the call fails with its last error.
// Permanent faults are non-retryable failures thrown by the activities themselves.
import { proxyActivities, proxyLocalActivities, workflowInfo, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import type {
  BrowserActivities,
  CrawlActivities,
  EmbeddingActivities,
  KnowledgeActivities,
  LlmActivities,
  McpActivities,
  NotifyActivities,
  SandboxActivities,
  StoreActivities,
} from '../activities';
import {
  BROWSER_QUEUE_SUFFIX,
  DEFAULT_LLM_HEARTBEAT_TIMEOUT,
  DEFAULT_MAX_OUTAGE,
  LLM_QUEUE_SUFFIX,
  SANDBOX_QUEUE_SUFFIX,
} from '../shared/constants';
import { DEFAULT_RETRY, durationToMs } from '../shared/plain';
import type { Duration, RetrySettings } from '../shared/schemas';

/** A run's outage limit and retry settings; absent, the defaults. */
export interface CallPolicy {
  maxOutage?: Duration | undefined;
  retry?: RetrySettings | undefined;
}

/** How long a webhook delivery is retried while its receiver fails or is unreachable. */
const WEBHOOK_RETRY_FOR = '24h';

/** How long a page that needs a browser waits for a worker with one to take it, unless the run's
 *  retry settings say (BROWSER_WAIT): a deployment without browser workers (BROWSER=false
 *  everywhere) has its page skipped after this, saying so. */
const BROWSER_WAIT = '1 minute';

/**
 * The whole background phase in one model-queue activity (researchBackground),
 * given over the model calls' options: a model call, the searches, up to five page reads (3
 * minutes each, in parallel), the brief. It beats every 10 s at most whatever the stage, so a dead
 * worker is noticed within twice the model calls' heartbeat timeout (LLM_HEARTBEAT_TIMEOUT; 30 s
 * by default); a retry reuses the model calls an earlier attempt made, so the long timeout costs
 * no money, only time on a hung call.
 */
export function backgroundPhaseOptions(retry: RetrySettings | undefined) {
  const heartbeatTimeout = 2 * durationToMs(retry?.heartbeatTimeout ?? DEFAULT_LLM_HEARTBEAT_TIMEOUT);
  return { startToCloseTimeout: '15 minutes', heartbeatTimeout } as const;
}

/**
 * When an activity that does the work of several (a search, a page read) inside it stops failing
 * its attempt on a part's outage and takes the part's failure as a result: a retry interval and
 * `afterMs` (what the activity still does after the part) before the outage limit, counted from
 * now, when the workflow schedules it. A part's outage longer than that ends as the part's own
 * activity would have ended, as an error the workflow notes, and not as a failed activity.
 */
export function partsGiveUpAt(policy: CallPolicy, afterMs: number): number {
  const outage = durationToMs(policy.maxOutage ?? DEFAULT_MAX_OUTAGE);
  const retry = durationToMs((policy.retry ?? DEFAULT_RETRY).maximumInterval);
  return Date.now() + Math.max(0, outage - retry - afterMs);
}

/** MCP servers are other people's machines: a few tries, then the step goes on without. */
const MCP_ATTEMPTS = 3;

type WaitOut = Pick<ActivityOptions, 'retry' | 'scheduleToCloseTimeout'>;
type Input<F extends (...args: never[]) => unknown> = Parameters<F>[0];

export function activitiesFor(policy: CallPolicy) {
  const retry = policy.retry ?? DEFAULT_RETRY;
  const unlimited: RetryPolicy = { initialInterval: retry.initialInterval, backoffCoefficient: 2, maximumInterval: retry.maximumInterval };
  const waitOut: WaitOut = {
    retry: unlimited,
    scheduleToCloseTimeout: policy.maxOutage ?? DEFAULT_MAX_OUTAGE,
  };
  return {
    ...modelQueueCalls(retry, waitOut),
    ...storeCalls(waitOut),
    ...otherPeoplesServers(unlimited),
    ...ownQueueCalls(retry, waitOut),
  };
}

/** The groups on `<queue>-llm`: model calls, page reads (their extraction is a model call) and embeddings. */
function modelQueueCalls(retry: RetrySettings, waitOut: WaitOut) {
  /** Model calls: every role's and phase's activities (src/activities/roles/index.ts, phases/index.ts, docs/roles.md), called as
   *  `calls.llm.<activity>`. On `<queue>-llm` (one rate limit for the provider across all workers):
   *  one HTTP request per attempt (the client does not retry); 429 waits for its Retry-After
   *  (nextRetryDelay); heartbeats, so a dead worker's call is retried quickly. */
  const llmQueue = `${workflowInfo().taskQueue}${LLM_QUEUE_SUFFIX}`;
  // The run's priority and fairness key (its tenant), given to its model calls explicitly: the
  // rate-limited model-call queue is where tenants' tasks wait behind each other.
  const { priority } = workflowInfo();
  const llm = proxyActivities<LlmActivities>({
    taskQueue: llmQueue,
    ...(priority?.fairnessKey ? { priority } : {}),
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: retry.heartbeatTimeout ?? DEFAULT_LLM_HEARTBEAT_TIMEOUT,
    ...waitOut,
  });
  /** One page read; heartbeats per stage. The page's own failures are bounded by attempts inside
   *  the activity; its extraction (an LLM call) waits out outages like any other. */
  const crawl = proxyActivities<CrawlActivities>({
    taskQueue: llmQueue,
    startToCloseTimeout: '3 minutes',
    heartbeatTimeout: '30 seconds',
    ...waitOut,
  });
  /** Embedding requests, on the LLM queue with the model calls: the same provider and rate limit. */
  const embedding = proxyActivities<EmbeddingActivities>({
    taskQueue: llmQueue,
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: retry.heartbeatTimeout ?? DEFAULT_LLM_HEARTBEAT_TIMEOUT,
    ...waitOut,
  });
  return { llm, crawl, embedding };
}

/** PostgreSQL and the knowledge base, on the workflow's own queue. */
function storeCalls(waitOut: WaitOut) {
  /** PostgreSQL reads and writes. */
  const store = proxyActivities<StoreActivities>({ startToCloseTimeout: '1 minute', ...waitOut });
  /** The same, as local activities: run by the worker that runs the workflow task, with no round
   *  trip through the server and one marker event each; for the run row's writes, which are
   *  small, idempotent (ordered by a sequence number) and frequent. */
  const localStore = proxyLocalActivities<StoreActivities>({ startToCloseTimeout: '1 minute', ...waitOut });
  /** Knowledge base reads and document parsing (a large PDF takes a while; heartbeats per stage). */
  const knowledge = proxyActivities<KnowledgeActivities>({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '2 minutes', ...waitOut });
  /** The tenant's collections, once per run: one small query, as a local activity. */
  const localKnowledge = proxyLocalActivities<Pick<KnowledgeActivities, 'listUsableCollections'>>({
    startToCloseTimeout: '1 minute',
    ...waitOut,
  });
  return { store, localStore, knowledge, localKnowledge };
}

/** MCP servers and webhook receivers: not waited out for the run's outage limit. */
function otherPeoplesServers(unlimited: RetryPolicy) {
  const mcp = proxyActivities<McpActivities>({
    startToCloseTimeout: '2 minutes',
    retry: { ...unlimited, maximumAttempts: MCP_ATTEMPTS },
  });
  /** Webhook POSTs: retried with the run's backoff for up to a day; refusals (4xx) fail at once. */
  const notify = proxyActivities<NotifyActivities>({
    startToCloseTimeout: '1 minute',
    retry: unlimited,
    scheduleToCloseTimeout: WEBHOOK_RETRY_FOR,
  });
  return { mcp, notify };
}

/** Browsers and sandboxes, each on a queue of its own that only workers with one poll. */
function ownQueueCalls(retry: RetrySettings, waitOut: WaitOut) {
  /** Sandbox runs heartbeat while the container runs; a finished run is recorded once. */
  const sandbox = proxyActivities<SandboxActivities>({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '15 seconds', ...waitOut });
  /** A page rendered in headless Chromium (BROWSER_TIMEOUT_MS at most 5 minutes); heartbeats while
   *  it renders. Waits at most browserWait for a worker with a browser to take it (not retried). */
  const browserWait = retry.browserWait ?? BROWSER_WAIT;
  const browser = proxyActivities<BrowserActivities>({
    startToCloseTimeout: '6 minutes',
    heartbeatTimeout: '30 seconds',
    scheduleToStartTimeout: browserWait,
    ...waitOut,
  });
  return {
    /** How long a page that needs a browser waits for a worker with one (the skip's reason says it). */
    browserWait,
    /** One page rendered and saved, on `<queue>-browser`, polled only by workers with a browser. */
    renderPage(summary: string, input: Input<BrowserActivities['renderPage']>) {
      return browser.renderPage.executeWithOptions({ summary, taskQueue: `${workflowInfo().taskQueue}${BROWSER_QUEUE_SUFFIX}` }, [input]);
    },
    /** One sandbox run, on `<queue>-sandbox`, where each worker runs only a few at once. */
    runCode(summary: string, input: Input<SandboxActivities['runCode']>) {
      return sandbox.runCode.executeWithOptions({ summary, taskQueue: `${workflowInfo().taskQueue}${SANDBOX_QUEUE_SUFFIX}` }, [input]);
    },
  };
}
export type Calls = ReturnType<typeof activitiesFor>;
