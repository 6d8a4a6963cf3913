// Temporal-facing operations behind the HTTP API (and the CLI): start a run, read its state.
import { createHash, randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { withTimeout } from './timeout';
import { RESEARCH_ID_PREFIX } from '../shared/constants';
import { ApiError, failureMessage } from '../shared/errors';
import { PlanView, type ResearchStatusView, type ResearchView, type WaitingCall } from '../shared/messages';
import {
  Phase,
  ResearchOptions,
  RunStatus,
  summarize,
  type ResearchRequest,
  type ResearchResult,
  type RetrySettings,
} from '../shared/schemas';
import type { Store } from '../activities/store';
import type { Config } from '../config';
import { approvePlanSignal, getStatusQuery, revisePlanSignal } from '../workflows/messages';
import { ResearchPhaseKey, ResearchStatusKey, ResearchTenantKey } from '../workflows/search-attributes';
import type { researchWorkflow } from '../workflows/research';

export interface ResearchServiceDeps {
  client: Client;
  taskQueue: string;
  store: Pick<Store, 'getReport' | 'listArtifacts' | 'getArtifact' | 'runs'>;
  /** Models per role and their prices: a cost budget needs a price for every model it would spend on. */
  llm?: Pick<Config['llm'], 'models' | 'prices'>;
  /** How long a status query may take before the API answers from what was recorded (no worker polling). */
  queryTimeoutMs?: number;
  /** The operator's retry settings, handed to every run (RETRY_* variables). */
  retry?: RetrySettings;
}

export interface StartResult {
  id: string;
  status: RunStatus;
  /** False when an Idempotency-Key matched a run that already exists. */
  created: boolean;
}

/** The status view as the API answers it: the workflow's own view plus the run's id. */
function fromStatus(id: string, s: ResearchStatusView): ResearchView {
  return { id, ...s };
}

const TERMINAL_STATUS: Record<string, RunStatus | undefined> = {
  COMPLETED: 'completed',
  FAILED: 'failed',
  TIMED_OUT: 'failed',
  TERMINATED: 'cancelled',
  CANCELLED: 'cancelled',
};

function requestHash(tenant: string, req: ResearchRequest): string {
  return createHash('sha256')
    .update(JSON.stringify([tenant, req.question, req.options ?? {}]))
    .digest('hex');
}

/** A direct answer as a report: the question as its title, the answer as its one paragraph. */
function directAnswerReport(id: string, question: string, answer: string) {
  const title = summarize(question.replace(/\s+/g, ' ').trim(), 200);
  return {
    researchId: id,
    title,
    locale: undefined,
    markdown: `# ${title}\n\n${answer.trim()}\n`,
    references: [],
    removedCitations: [],
  };
}

export function idForIdempotencyKey(tenant: string, key: string): string {
  return `${RESEARCH_ID_PREFIX}${createHash('sha256').update(`${tenant}\u0000${key}`).digest('hex').slice(0, 32)}`;
}

const QUERY_TIMEOUT_MS = 5_000;

const iso = (ts: Parameters<typeof optionalTsToDate>[0]) => optionalTsToDate(ts)?.toISOString();

/** Pending activities of a workflow that are being retried (attempt 2 and later). */
function retried(desc: WorkflowExecutionDescription, step?: string): WaitingCall[] {
  return (desc.raw.pendingActivities ?? [])
    .filter((p) => (p.attempt ?? 1) > 1)
    .map((p) => ({
      ...(step ? { step } : {}),
      activity: p.activityType?.name ?? 'unknown',
      attempt: p.attempt ?? 0,
      ...(p.lastFailure?.message ? { lastError: summarize(p.lastFailure.message, 300) } : {}),
      ...(iso(p.lastStartedTime) ? { lastAttemptAt: iso(p.lastStartedTime) } : {}),
      ...(iso(p.nextAttemptScheduleTime) ? { nextAttemptAt: iso(p.nextAttemptScheduleTime) } : {}),
    }));
}

export function createResearchService(deps: ResearchServiceDeps) {
  const queryTimeoutMs = deps.queryTimeoutMs ?? QUERY_TIMEOUT_MS;

  /** The run's status from a worker; 503 with Retry-After when none answers (a review must see it). */
  async function liveStatus(id: string, handle: ReturnType<Client['workflow']['getHandle']>): Promise<ResearchStatusView> {
    try {
      return await withTimeout(handle.query(getStatusQuery), queryTimeoutMs);
    } catch (err) {
      throw new ApiError(
        503,
        'no_worker',
        `no worker answered for research run ${id}: ${summarize(failureMessage(err), 120)}; try again`,
        undefined,
        5,
      );
    }
  }

  /** What the run and its running steps are retrying right now (an outage, a rate limit). */
  async function waitingCalls(id: string, desc: WorkflowExecutionDescription, view: ResearchView): Promise<WaitingCall[]> {
    const running = (view.plan?.steps ?? []).filter((s) => s.status === 'running').map((s) => s.id);
    const children = await Promise.all(
      running.map((step) =>
        deps.client.workflow
          .getHandle(`${id}/step/${step}`)
          .describe()
          .then((d) => retried(d, step))
          .catch(() => []),
      ),
    );
    return [...retried(desc), ...children.flat()];
  }

  /**
   * No worker answered the status query (none is polling, or all are busy): the status and phase
   * Temporal's visibility holds, the plan and usage of the run's row in PostgreSQL.
   */
  async function recordedView(id: string, question: string, desc: WorkflowExecutionDescription, cause: unknown): Promise<ResearchView> {
    const status = RunStatus.safeParse(desc.searchAttributes?.ResearchStatus?.[0]);
    const phase = Phase.safeParse(desc.searchAttributes?.ResearchPhase?.[0]);
    const row = await deps.store.runs.get(id).catch(() => undefined);
    if (!status.success || !phase.success) {
      throw new ApiError(
        503,
        'status_unavailable',
        `no worker answered for research run ${id}, and nothing was recorded yet`,
        undefined,
        5,
      );
    }
    const plan = PlanView.safeParse(row?.plan);
    return {
      id,
      status: status.data,
      phase: phase.data,
      question,
      ...(plan.success ? { plan: plan.data } : {}),
      ...(row ? { usage: row.usage } : {}),
      ...(row?.error ? { error: row.error } : {}),
      stale: `no worker answered (${summarize(failureMessage(cause), 120)}): this is what Temporal and PostgreSQL last recorded`,
    };
  }

  async function start(req: ResearchRequest, tenant: string, idempotencyKey?: string): Promise<StartResult> {
    const options = ResearchOptions.parse(req.options ?? {});
    if (options.maxCostUsd !== undefined && deps.llm) {
      const unpriced = [...new Set(Object.values(deps.llm.models))].filter((m) => !deps.llm!.prices[m]);
      if (unpriced.length) {
        throw new ApiError(
          400,
          'cost_unknown',
          `options.maxCostUsd needs the price of every model the run uses, and ${unpriced.join(', ')} has none: set LLM_PRICES (model=input/output USD per million tokens)`,
          { unpriced },
        );
      }
    }
    const id = idempotencyKey ? idForIdempotencyKey(tenant, idempotencyKey) : `${RESEARCH_ID_PREFIX}${randomUUID()}`;
    const hash = requestHash(tenant, req);
    try {
      await deps.client.workflow.start<typeof researchWorkflow>('researchWorkflow', {
        taskQueue: deps.taskQueue,
        workflowId: id,
        args: [{ question: req.question, tenant, options, ...(deps.retry ? { retry: deps.retry } : {}) }],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: ResearchTenantKey, value: tenant },
          { key: ResearchStatusKey, value: 'running' },
          { key: ResearchPhaseKey, value: 'coordinating' },
        ],
        memo: { requestHash: hash, question: summarize(req.question, 300) },
        staticSummary: `Research: ${summarize(req.question, 120)}`,
      });
      return { id, status: 'running', created: true };
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError) || !idempotencyKey) throw err;
      const existing = await deps.client.workflow.getHandle(id).describe();
      if (existing.memo?.requestHash !== hash) {
        throw new ApiError(409, 'idempotency_key_reused', 'this Idempotency-Key was already used for a different request');
      }
      const view = await get(id, tenant);
      return { id, status: view.status, created: false };
    }
  }

  /** The run, if it is the tenant's: another tenant's run is as unknown as one that does not exist. */
  async function describe(id: string, tenant: string) {
    const handle = deps.client.workflow.getHandle(id);
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

  async function get(id: string, tenant: string): Promise<ResearchView> {
    const { handle, desc } = await describe(id, tenant);
    const question = String(desc.memo?.question ?? '');
    const closed = TERMINAL_STATUS[desc.status.name];
    try {
      // Queries are answered by a worker (on closed runs, by replaying the history).
      const view = fromStatus(id, await withTimeout(handle.query(getStatusQuery), queryTimeoutMs));
      if (closed && closed !== 'completed') view.status = closed;
      if (!closed) {
        const waiting = await waitingCalls(id, desc, view);
        if (waiting.length) view.waiting = waiting;
      }
      return view;
    } catch (err) {
      if (!closed) return recordedView(id, question, desc, err);
    }
    if (closed === 'completed') {
      const r = (await handle.result()) as ResearchResult;
      const row = r.outcome === 'answered_directly' ? await deps.store.runs.get(id).catch(() => undefined) : undefined;
      return {
        id,
        status: r.status,
        phase: 'done',
        question,
        usage: r.usage,
        outcome: r.outcome,
        ...(row?.answer ? { answer: row.answer } : {}),
      };
    }
    let error: string | undefined;
    if (closed === 'failed') {
      error = await handle.result().then(
        () => undefined,
        (e: unknown) => summarize(failureMessage(e)),
      );
    }
    return { id, status: closed, phase: 'done', question, ...(error ? { error } : {}) };
  }

  async function running(id: string, tenant: string) {
    const { handle, desc } = await describe(id, tenant);
    if (desc.status.name !== 'RUNNING')
      throw new ApiError(409, 'not_running', `research run ${id} has ended (${desc.status.name.toLowerCase()})`);
    return handle;
  }

  async function reviewable(id: string, tenant: string, planVersion: number) {
    const handle = await running(id, tenant);
    const s = await liveStatus(id, handle);
    if (s.phase !== 'reviewing' || !s.plan)
      throw new ApiError(409, 'not_reviewing', `research run ${id} has no plan waiting for review (phase ${s.phase})`);
    if (s.plan.version !== planVersion) {
      throw new ApiError(409, 'stale_plan_version', `plan version ${planVersion} is not the one under review (version ${s.plan.version})`, {
        currentVersion: s.plan.version,
      });
    }
    return handle;
  }

  /** Sends approvePlan. The workflow checks the version again: a race loses nothing, it is recorded. */
  async function approve(id: string, tenant: string, planVersion: number): Promise<void> {
    const handle = await reviewable(id, tenant, planVersion);
    await handle.signal(approvePlanSignal, { planVersion });
  }

  async function revise(id: string, tenant: string, planVersion: number, feedback: string): Promise<void> {
    const handle = await reviewable(id, tenant, planVersion);
    const s = await liveStatus(id, handle);
    if ((s.plan?.revisionsLeft ?? 0) <= 0) {
      throw new ApiError(
        409,
        'revision_limit',
        `the plan was already revised ${s.plan?.revisions ?? 0} times (maxPlanRevisions); approve it or cancel the run`,
      );
    }
    await handle.signal(revisePlanSignal, { planVersion, feedback });
  }

  async function cancel(id: string, tenant: string): Promise<void> {
    const handle = await running(id, tenant);
    await handle.cancel();
  }

  /** The run's report; for a run the coordinator answered directly, that answer as a short report. */
  async function report(id: string, tenant: string) {
    await describe(id, tenant);
    const r = await deps.store.getReport(id);
    if (r) return r;
    const row = await deps.store.runs.get(id);
    if (row?.outcome === 'answered_directly' && row.answer) return directAnswerReport(id, row.question, row.answer);
    throw new ApiError(404, 'report_not_ready', `research run ${id} has no report yet`);
  }

  async function artifacts(id: string, tenant: string) {
    await describe(id, tenant);
    return deps.store.listArtifacts(id);
  }

  async function artifact(id: string, tenant: string, artifactId: string) {
    await describe(id, tenant);
    const a = await deps.store.getArtifact(id, artifactId);
    if (!a) throw new ApiError(404, 'not_found', `research run ${id} has no artifact ${artifactId}`);
    return a;
  }

  return { start, get, approve, revise, cancel, report, artifacts, artifact };
}

export type ResearchService = ReturnType<typeof createResearchService>;
