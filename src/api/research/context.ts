// What the parts of the research service share: their dependencies, how long they wait for a
// worker, and the one check that a run is the caller's.
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { ApiError, failureMessage } from '../../shared/errors';
import { type Duration, type RetrySettings, type RunStatus } from '../../shared/schemas';
import { summarize } from '../../shared/plain';
import type { Store } from '../../activities/store';
import type { Config, Fairness } from '../../config';
import { NO_QUOTAS, type TenantQuotas } from '../quotas';
import type { ModelCatalog } from '../model-check';
import type { Caller } from '../auth';
import { RunsInFlight } from './in-flight';
import { closedRuns, OpenRuns } from './open-runs';

export interface ResearchServiceDeps {
  client: Client;
  taskQueue: string;
  store: Pick<Store, 'getReport' | 'listArtifacts' | 'getArtifact' | 'getSources' | 'runs' | 'knowledge' | 'reportVersions'>;
  /** Models per role and their prices: a cost budget needs a price for every model it would spend on. */
  llm?: Pick<Config['llm'], 'models' | 'prices'>;
  /** The models a request may name (a run's options.models, a rewrite's model); absent: not checked. */
  modelCatalog?: ModelCatalog;
  /** How long a status query may take before the API answers from what was recorded (no worker polling). */
  queryTimeoutMs?: number;
  /** How long a run seen open is taken to be open without describing it again, and without a sweep of closed runs since (open-runs.ts). */
  openRecheckMs?: number;
  /** How long a review update may wait for a worker to take it before the API answers 503. */
  updateTimeoutMs?: number;
  /** The operator's retry settings, handed to every run (RETRY_* variables). */
  retry?: RetrySettings;
  /** Webhooks: on when the server has a WEBHOOK_SECRET to sign with; the hosts a URL may name. */
  webhook?: { enabled: boolean; allowHosts: string[] };
  /** Fair sharing between tenants (TENANT_WEIGHTS, TENANT_PRIORITIES, TENANT_MAX_RUNS). */
  fairness?: Fairness;
  /** SEARCH_PROVIDERS: a run's options.searchProviders must name some of these (absent: not checked). */
  searchProviders?: string[];
  /** Per-tenant quotas; a run checks runsInFlight (absent: none). */
  quotas?: TenantQuotas;
  /** RUN_MAX_TOKENS: the token budget of a run whose request sets none, and the most one may set (absent or 0: none). */
  runMaxTokens?: number;
  /** RUN_MIN_OUTAGE: the shortest options.maxOutage a request may set (absent: DEFAULT_MIN_OUTAGE). */
  minOutage?: Duration;
}

export interface ResearchContext {
  deps: ResearchServiceDeps;
  /** How long a query waits for a worker to answer. */
  queryTimeoutMs: number;
  /** How long a review, clarification or steering update waits for a worker to take it. */
  updateTimeoutMs: number;
  /** The runsInFlight quota's count. */
  inFlight: RunsInFlight;
  /** Runs seen open lately: their status reads need no describe. */
  openRuns: OpenRuns;
}

const QUERY_TIMEOUT_MS = 5_000;
const UPDATE_TIMEOUT_MS = 10_000;

export function researchContext(deps: ResearchServiceDeps): ResearchContext {
  return {
    deps,
    queryTimeoutMs: deps.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
    updateTimeoutMs: deps.updateTimeoutMs ?? UPDATE_TIMEOUT_MS,
    inFlight: new RunsInFlight(deps.client, deps.taskQueue, deps.quotas ?? NO_QUOTAS),
    openRuns: new OpenRuns(deps.openRecheckMs, closedRuns(deps.client, deps.taskQueue)),
  };
}

/** The run, if it is the tenant's: another tenant's run is as unknown as one that does not exist. */
export async function tenantRun(ctx: ResearchContext, id: string, tenant: string) {
  const handle = ctx.deps.client.workflow.getHandle(id);
  try {
    const desc = await handle.describe();
    if (desc.type !== 'researchWorkflow' || desc.searchAttributes?.ResearchTenant?.[0] !== tenant) {
      throw new ApiError(404, 'not_found', `no research run with id ${id}`);
    }
    return { handle, desc };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new ApiError(404, 'not_found', `no research run with id ${id}`);
    throw err;
  }
}

/** The tenant's run, if it is still going: 409 once it has ended. */
export async function runningRun(ctx: ResearchContext, id: string, tenant: string, speaker?: Caller): Promise<WorkflowHandle> {
  const { handle, desc } = await tenantRun(ctx, id, tenant);
  if (desc.status.name !== 'RUNNING')
    throw new ApiError(409, 'not_running', `research run ${id} has ended (${desc.status.name.toLowerCase()})`);
  if (speaker) checkSpeaker(id, desc.memo?.memoryUser, speaker);
  return handle;
}

/**
 * What is said to a run whose memory is on (plan feedback, an answer, guidance) is learned as its
 * user's words: another user's key may not say it (403), an admin key may. (`memoryUser` is in the
 * memo of runs started since; an older run's words are heard from any key of the tenant.)
 */
function checkSpeaker(id: string, memoryUser: unknown, speaker: Caller): void {
  if (typeof memoryUser !== 'string' || memoryUser === speaker.userId || speaker.admin) return;
  throw new ApiError(
    403,
    'not_your_user',
    `research run ${id} learns what is said to it as the words of its user (${memoryUser}): this key acts for ${speaker.userId} only, so only that user or an admin key of the tenant may send it feedback, an answer or guidance`,
    { userId: speaker.userId },
  );
}

/** 503 with Retry-After: no worker answered in time (none is polling, or all are busy). */
export function noWorker(message: string): ApiError {
  return new ApiError(503, 'no_worker', message, undefined, 5);
}

/** Why a worker did not answer, short enough for a message. */
export const noAnswerReason = (err: unknown) => summarize(failureMessage(err), 120);

// @temporalio/proto is CommonJS: Node's ESM loader gives it as a default export only.
const ExecutionStatus = proto.temporal.api.enums.v1.WorkflowExecutionStatus;
const ENDED_AS: Partial<Record<number, RunStatus>> = {
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED]: 'completed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_FAILED]: 'failed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_TIMED_OUT]: 'failed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED]: 'cancelled',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_CANCELED]: 'cancelled',
};

/** How Temporal says a run's workflow ended, as a run status; undefined while it is open. */
export function endedStatus(code: number | null | undefined): RunStatus | undefined {
  return code == null ? undefined : ENDED_AS[code];
}

export const iso = (ts: Parameters<typeof optionalTsToDate>[0]) => optionalTsToDate(ts)?.toISOString();
