// Temporal-facing operations behind the HTTP API (and the CLI): start a run, read its state.
import { createHash, randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter, type Priority, type UpdateDefinition } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { withTimeout } from './timeout';
import { BlockedError, checkUrl, WEB_PORTS } from '../activities/crawl/ssrf';
import { metrics } from '../infra/metrics';
import { RESEARCH_ID_PREFIX } from '../shared/constants';
import { ApiError, ErrorType, failureMessage } from '../shared/errors';
import {
  PlanView,
  Refusal,
  type Steer,
  type SteerAnswer,
  ResearchStatusView,
  type ResearchView,
  type ReviewAnswer,
  type WaitingCall,
} from '../shared/messages';
import {
  Phase,
  ResearchOptions,
  RunStatus,
  summarize,
  type ResearchInput,
  type ResearchRequest,
  type ResearchResult,
  type RetrySettings,
} from '../shared/schemas';
import type { Store } from '../activities/store';
import type { RecordedRun } from '../activities/store/runs';
import type { Config, Fairness } from '../config';
import {
  answerClarificationSignal,
  answerClarificationUpdate,
  approvePlanSignal,
  approvePlanUpdate,
  getStatusQuery,
  revisePlanSignal,
  revisePlanUpdate,
  steerUpdate,
  admissionId,
  admissionQueueQuery,
} from '../workflows/messages';
import { ResearchPhaseKey, ResearchQuestionKey, ResearchStatusKey, ResearchTenantKey } from '../workflows/search-attributes';
import type { researchWorkflow } from '../workflows/research';
import type { ListedRun, RunList } from './contract';
import type { ArtifactBytes } from './export/html';
import { artifactPath } from '../shared/report';

export interface ResearchServiceDeps {
  client: Client;
  taskQueue: string;
  store: Pick<Store, 'getReport' | 'listArtifacts' | 'getArtifact' | 'getSources' | 'runs' | 'knowledge'>;
  /** Models per role and their prices: a cost budget needs a price for every model it would spend on. */
  llm?: Pick<Config['llm'], 'models' | 'prices'>;
  /** How long a status query may take before the API answers from what was recorded (no worker polling). */
  queryTimeoutMs?: number;
  /** How long a review update may wait for a worker to take it before the API answers 503. */
  updateTimeoutMs?: number;
  /** The operator's retry settings, handed to every run (RETRY_* variables). */
  retry?: RetrySettings;
  /** Webhooks: on when the server has a WEBHOOK_SECRET to sign with; the hosts a URL may name. */
  webhook?: { enabled: boolean; allowHosts: string[] };
  /** Fair sharing between tenants (TENANT_WEIGHTS, TENANT_PRIORITIES, TENANT_MAX_RUNS). */
  fairness?: Fairness;
}

/** The default priority key of Temporal's task queues (1 first, 5 last). */
const DEFAULT_PRIORITY = 3;

/**
 * A run's Temporal priority: its tenant's priority key (one lower for a `low` run) and the tenant
 * as fairness key, with the tenant's weight. Its steps and calls inherit it, so tasks waiting in a
 * queue are dispatched fairly across tenants, not in arrival order.
 */
export function runPriority(tenant: string, options: ResearchOptions, fairness: Fairness | undefined): Priority {
  const key = Math.min(5, (fairness?.priorities[tenant] ?? DEFAULT_PRIORITY) + (options.priority === 'low' ? 1 : 0));
  return { priorityKey: key, fairnessKey: tenant, fairnessWeight: fairness?.weights[tenant] ?? 1 };
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
    .update(JSON.stringify([tenant, req.question, req.options ?? {}, ...(req.sessionId ? [req.sessionId] : [])]))
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
/** How long a review or clarification may wait for a worker to take it before the API answers 503. */
const UPDATE_TIMEOUT_MS = 10_000;

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

export interface RunListFilter {
  status?: RunStatus | undefined;
  phase?: Phase | undefined;
  since?: Date | undefined;
  q?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

const EXECUTION_STATUS: Record<number, RunStatus> = { 2: 'completed', 3: 'failed', 4: 'cancelled', 5: 'cancelled', 7: 'failed' };

/** One visibility record as the list shows it. */
async function listedRun(e: temporal.api.workflow.v1.IWorkflowExecutionInfo): Promise<ListedRun> {
  const attrs = await decodeSearchAttributes(e.searchAttributes?.indexedFields);
  const memo = e.memo?.fields?.question ? await defaultPayloadConverter.fromPayload(e.memo.fields.question) : undefined;
  const recorded = RunStatus.safeParse(attrs.ResearchStatus);
  const phase = Phase.safeParse(attrs.ResearchPhase);
  const closedStatus = e.status ? EXECUTION_STATUS[e.status as number] : undefined;
  return {
    id: e.execution?.workflowId ?? '',
    // A run that ended without writing its last status (terminated) is what Temporal says.
    status:
      closedStatus && (!recorded.success || recorded.data === 'running' || recorded.data === 'awaiting_review')
        ? closedStatus
        : recorded.success
          ? recorded.data
          : 'running',
    phase: phase.success ? phase.data : undefined,
    question: typeof memo === 'string' ? memo : String(attrs.ResearchQuestion ?? ''),
    startedAt: iso(e.startTime),
    closedAt: iso(e.closeTime),
    steps: typeof attrs.ResearchStepCount === 'number' ? attrs.ResearchStepCount : undefined,
  };
}

/** Search attribute payloads to plain values (a keyword list's first value). */
async function decodeSearchAttributes(
  fields: Record<string, temporal.api.common.v1.IPayload> | null | undefined,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(fields ?? {})) {
    const v = defaultPayloadConverter.fromPayload(p);
    out[k] = Array.isArray(v) ? v[0] : v;
  }
  return out;
}

export function createResearchService(deps: ResearchServiceDeps) {
  const queryTimeoutMs = deps.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
  const updateTimeoutMs = deps.updateTimeoutMs ?? UPDATE_TIMEOUT_MS;

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
  async function recordedView(
    id: string,
    question: string,
    desc: WorkflowExecutionDescription,
    row: RecordedRun | undefined,
    cause: unknown,
  ): Promise<ResearchView> {
    const status = RunStatus.safeParse(desc.searchAttributes?.ResearchStatus?.[0]);
    const phase = Phase.safeParse(desc.searchAttributes?.ResearchPhase?.[0]);
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

  /** A queued run's place in its tenant's admission queue (src/workflows/admission.ts). */
  async function queuePlace(id: string, tenant: string): Promise<ResearchView['queue']> {
    const q = await withTimeout(
      deps.client.workflow.getHandle(admissionId(deps.taskQueue, tenant)).query(admissionQueueQuery),
      queryTimeoutMs,
    ).catch(() => undefined);
    const at = q?.waiting.indexOf(id) ?? -1;
    return q && at >= 0 ? { position: at + 1, waiting: q.waiting.length, running: q.running.length, maxRuns: q.maxRuns } : undefined;
  }

  /** A webhook needs the server's secret to be signed, and a URL the SSRF guard lets through. */
  function checkWebhook(url: string): void {
    if (!deps.webhook?.enabled) {
      throw new ApiError(
        400,
        'webhooks_disabled',
        'this server has no WEBHOOK_SECRET to sign deliveries with: options.webhook cannot be used',
      );
    }
    try {
      checkUrl({ allowHosts: deps.webhook.allowHosts, allowedPorts: WEB_PORTS }, new URL(url));
    } catch (err) {
      if (err instanceof BlockedError) throw new ApiError(400, 'invalid_webhook', `options.webhook.url is not allowed: ${err.message}`);
      throw err;
    }
  }

  /** A session and collections the request names must be the tenant's: 404 before anything starts. */
  async function checkKnowledge(sessionId: string | undefined, collections: string[] | undefined, tenant: string): Promise<void> {
    if (sessionId && !(await deps.store.knowledge.getSession(tenant, sessionId))) {
      throw new ApiError(404, 'session_not_found', `no session with id ${sessionId} (create one with POST /v1/sessions)`);
    }
    if (collections?.length) {
      const found = new Set((await deps.store.knowledge.listCollections(tenant, collections)).map((c) => c.collectionId));
      const missing = collections.filter((c) => !found.has(c));
      if (missing.length) {
        throw new ApiError(404, 'collection_not_found', `options.collections names no collection of yours: ${missing.join(', ')}`, {
          missing,
        });
      }
    }
  }

  /**
   * Checks a request before anything starts (a run now, or a schedule's runs later): its options,
   * prices for a cost budget, the tenant's session and collections, the webhook. Returns the
   * options as the workflow gets them.
   */
  async function checkRequest(req: ResearchRequest, tenant: string): Promise<ResearchOptions> {
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
    await checkKnowledge(req.sessionId, options.collections, tenant);
    if (options.webhook) checkWebhook(options.webhook.url);
    return options;
  }

  /** What a run is started with: its input, and the search attributes and memo the list reads. */
  function runStart(req: ResearchRequest, tenant: string, options: ResearchOptions, scheduleId?: string) {
    return {
      taskQueue: deps.taskQueue,
      args: [
        {
          question: req.question,
          tenant,
          options,
          ...(deps.retry ? { retry: deps.retry } : {}),
          ...(req.sessionId ? { sessionId: req.sessionId } : {}),
          ...(scheduleId ? { scheduleId } : {}),
          ...(deps.fairness?.maxRuns
            ? { admission: { maxRuns: deps.fairness.maxRuns, queueId: admissionId(deps.taskQueue, tenant) } }
            : {}),
        },
      ] as [ResearchInput],
      priority: runPriority(tenant, options, deps.fairness),
      typedSearchAttributes: [
        { key: ResearchTenantKey, value: tenant },
        { key: ResearchStatusKey, value: 'running' },
        { key: ResearchPhaseKey, value: 'coordinating' },
        { key: ResearchQuestionKey, value: searchWords(summarize(req.question, 1_000)) },
      ],
      memo: { requestHash: requestHash(tenant, req), question: summarize(req.question, 300) },
      staticSummary: `Research: ${summarize(req.question, 120)}`,
    };
  }

  async function start(req: ResearchRequest, tenant: string, idempotencyKey?: string): Promise<StartResult> {
    const options = await checkRequest(req, tenant);
    const id = idempotencyKey ? idForIdempotencyKey(tenant, idempotencyKey) : `${RESEARCH_ID_PREFIX}${randomUUID()}`;
    const run = runStart(req, tenant, options);
    try {
      await deps.client.workflow.start<typeof researchWorkflow>('researchWorkflow', {
        ...run,
        workflowId: id,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      metrics.runsStarted.inc({ tenant });
      if (req.sessionId) await deps.store.knowledge.addSessionRun(req.sessionId, id, req.question);
      return { id, status: 'running', created: true };
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError) || !idempotencyKey) throw err;
      const existing = await deps.client.workflow.getHandle(id).describe();
      if (existing.memo?.requestHash !== run.memo.requestHash) {
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
    // PostgreSQL unreachable: a worker can still answer the query for a run in flight (and for an
    // ended one, by replaying it), so the GET goes on without the row.
    const row = await deps.store.runs.get(id).catch(() => undefined);
    // A run that has made its last write answers from the view that write kept, closed or in its
    // last steps (a client woken by the `done` event asks at once): a query would have a worker
    // replay the run's whole history once it has closed. Runs that ended before the view was kept
    // have none, and are asked.
    const kept = ResearchStatusView.safeParse(row?.finalView);
    if (kept.success) return fromStatus(id, closed && closed !== 'completed' ? { ...kept.data, status: closed } : kept.data);
    try {
      // Queries are answered by a worker (on closed runs, by replaying the history).
      const view = fromStatus(id, await withTimeout(handle.query(getStatusQuery), queryTimeoutMs));
      if (closed && closed !== 'completed') view.status = closed;
      if (!closed) {
        const waiting = await waitingCalls(id, desc, view);
        if (waiting.length) view.waiting = waiting;
        if (view.phase === 'queued') {
          const queue = await queuePlace(id, tenant);
          if (queue) view.queue = queue;
        }
      }
      return view;
    } catch (err) {
      if (!closed) return recordedView(id, question, desc, row, err);
    }
    if (closed === 'completed') {
      const r = (await handle.result()) as ResearchResult;
      return {
        id,
        status: r.status,
        phase: 'done',
        question,
        usage: r.usage,
        outcome: r.outcome,
        ...(r.outcome === 'answered_directly' && row?.answer ? { answer: row.answer } : {}),
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

  /**
   * Sends a review or clarification update, with the request's Idempotency-Key as its id (a retry
   * gets the first answer). The workflow's validator decides: a refusal is a 409 with the reason
   * and the current plan version. A run whose worker does not know the update yet (deployed before
   * it) gets the signal instead, after the same checks made here.
   */
  async function update<Ret, Arg>(
    id: string,
    tenant: string,
    def: UpdateDefinition<Ret, [Arg]>,
    arg: Arg,
    idempotencyKey: string | undefined,
    fallback: (handle: WorkflowHandle, status: ResearchStatusView) => Promise<Ret>,
  ): Promise<Ret> {
    const handle = await running(id, tenant);
    try {
      return await withTimeout(
        handle.executeUpdate(def, { args: [arg], ...(idempotencyKey ? { updateId: idempotencyKey } : {}) }),
        updateTimeoutMs,
      );
    } catch (err) {
      const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.type === ErrorType.MessageRefused) {
        const refusal = Refusal.safeParse(cause.details?.[0]);
        const code = refusal.success ? refusal.data.code : 'refused';
        const currentVersion = refusal.success ? refusal.data.currentVersion : undefined;
        throw new ApiError(409, code, cause.message, currentVersion !== undefined ? { currentVersion } : undefined);
      }
      if (cause && /no registered handler for update/i.test(cause.message)) return fallback(handle, await liveStatus(id, handle));
      if (err instanceof WorkflowNotFoundError) throw new ApiError(409, 'not_running', `research run ${id} has ended`);
      if (err instanceof WorkflowUpdateFailedError) throw err;
      throw new ApiError(
        503,
        'no_worker',
        `no worker took the message for research run ${id} in time (${summarize(failureMessage(err), 120)}); ` +
          'send it again with the same Idempotency-Key',
        undefined,
        5,
      );
    }
  }

  /** The checks the validator makes, for the signal sent to a run that predates the updates. */
  function checkReview(id: string, s: ResearchStatusView, planVersion: number): void {
    if (s.phase !== 'reviewing' || !s.plan)
      throw new ApiError(409, 'not_reviewing', `research run ${id} has no plan waiting for review (phase ${s.phase})`);
    if (s.plan.version !== planVersion) {
      throw new ApiError(409, 'stale_plan_version', `plan version ${planVersion} is not the one under review (version ${s.plan.version})`, {
        currentVersion: s.plan.version,
      });
    }
  }

  /** Approves plan `planVersion`: 200 with the decision, or 409 saying why not. */
  function approve(id: string, tenant: string, planVersion: number, idempotencyKey?: string): Promise<ReviewAnswer> {
    return update(id, tenant, approvePlanUpdate, { planVersion }, idempotencyKey, async (handle, s) => {
      checkReview(id, s, planVersion);
      await handle.signal(approvePlanSignal, { planVersion });
      return { planVersion, decision: 'approved' };
    });
  }

  function revise(id: string, tenant: string, planVersion: number, feedback: string, idempotencyKey?: string): Promise<ReviewAnswer> {
    return update(id, tenant, revisePlanUpdate, { planVersion, feedback }, idempotencyKey, async (handle, s) => {
      checkReview(id, s, planVersion);
      if ((s.plan?.revisionsLeft ?? 0) <= 0) {
        throw new ApiError(
          409,
          'revision_limit',
          `the plan was already revised ${s.plan?.revisions ?? 0} times (maxPlanRevisions); approve it or cancel the run`,
        );
      }
      await handle.signal(revisePlanSignal, { planVersion, feedback });
      return { planVersion, decision: 'revising', nextPlanVersion: planVersion + 1 };
    });
  }

  /** Answers the coordinator's clarifying question. */
  function answer(id: string, tenant: string, text: string, idempotencyKey?: string): Promise<{ accepted: true }> {
    return update(id, tenant, answerClarificationUpdate, { answer: text }, idempotencyKey, async (handle, s) => {
      if (s.clarificationQuestion === undefined) throw new ApiError(409, 'no_question', `research run ${id} asks no question`);
      await handle.signal(answerClarificationSignal, { answer: text });
      return { accepted: true };
    });
  }

  /** Steers the running research (guidance, wrap-up, a change to a step not yet started). */
  async function steer(id: string, tenant: string, message: Steer, idempotencyKey?: string): Promise<SteerAnswer> {
    if (message.kind === 'mustRead' && message.collections.length) await checkKnowledge(undefined, message.collections, tenant);
    return update(id, tenant, steerUpdate, message, idempotencyKey, async () => {
      throw new ApiError(409, 'not_supported', `research run ${id} runs on a worker too old to be steered`);
    });
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

  /** The images a report links by their API path (its charts), to inline in an export. */
  async function reportImages(id: string, markdown: string): Promise<ArtifactBytes> {
    const out: ArtifactBytes = new Map();
    const prefix = artifactPath(id, '');
    for (const m of markdown.matchAll(/\]\((\/v1\/research\/[^)\s]+)\)/g)) {
      const link = m[1]!;
      if (!link.startsWith(prefix) || out.has(link)) continue;
      const a = await deps.store.getArtifact(id, decodeURIComponent(link.slice(prefix.length)));
      if (a) out.set(link, { contentType: a.contentType, bytes: a.bytes });
    }
    return out;
  }

  /** One source the run retrieved: where it is and the evidence the run kept from it. */
  async function source(id: string, tenant: string, sourceId: string) {
    await describe(id, tenant);
    const [s] = await deps.store.getSources(id, [sourceId]);
    if (!s) throw new ApiError(404, 'not_found', `research run ${id} has no source ${sourceId}`);
    return { sourceId: s.sourceId, title: s.title, url: s.url, provider: s.provider, evidence: s.content.slice(0, 4_000) };
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

  /**
   * The tenant's runs from Temporal's visibility, running ones first (newest first), then ended
   * ones (most recently ended first); filtered by status, phase, start time and words of the
   * question; `cursor` is the page token of the previous answer.
   */
  async function list(tenant: string, f: RunListFilter): Promise<RunList> {
    const clauses = [`WorkflowType = 'researchWorkflow'`, `ResearchTenant = '${tenant}'`];
    if (f.status) clauses.push(`ResearchStatus = '${f.status}'`);
    if (f.phase) clauses.push(`ResearchPhase = '${f.phase}'`);
    if (f.since) clauses.push(`StartTime >= '${f.since.toISOString()}'`);
    const words = searchWords(f.q ?? '');
    if (words) clauses.push(`ResearchQuestion = '${words}'`);
    let nextPageToken: Uint8Array | undefined;
    if (f.cursor) {
      nextPageToken = Buffer.from(f.cursor, 'base64url');
      if (!nextPageToken.length) throw new ApiError(400, 'invalid_cursor', 'cursor is not one this API gave out');
    }
    const res = await deps.client.workflowService
      .listWorkflowExecutions({
        namespace: deps.client.options.namespace,
        // SQL visibility keeps its own order (ORDER BY is for Elasticsearch only): open runs newest
        // first, then closed runs by close time, most recent first.
        query: clauses.join(' AND '),
        pageSize: f.limit,
        ...(nextPageToken ? { nextPageToken } : {}),
      })
      .catch((err: unknown) => {
        if (f.cursor && /token|cursor/i.test(failureMessage(err)))
          throw new ApiError(400, 'invalid_cursor', 'cursor is not one this API gave out');
        throw err;
      });
    const runs = await Promise.all((res.executions ?? []).map((e) => listedRun(e)));
    const token = res.nextPageToken?.length ? Buffer.from(res.nextPageToken).toString('base64url') : undefined;
    return { runs, ...(token ? { nextCursor: token } : {}) };
  }

  /** Checks the run is the tenant's; returns a probe that says whether it has ended. */
  async function owned(id: string, tenant: string): Promise<() => Promise<boolean>> {
    const { handle } = await describe(id, tenant);
    return async () => (await handle.describe()).status.name !== 'RUNNING';
  }

  return {
    checkRequest,
    runStart,
    start,
    get,
    list,
    owned,
    reportImages,
    source,
    approve,
    revise,
    answer,
    steer,
    cancel,
    report,
    artifacts,
    artifact,
  };
}

export type ResearchService = ReturnType<typeof createResearchService>;

/**
 * The question's words as the ResearchQuestion attribute holds them, and a search for them: lower
 * case, punctuation gone. Visibility on PostgreSQL indexes a Text attribute as it is given (case
 * and punctuation kept, words split at spaces), where SQLite's and Elasticsearch's analysers fold
 * them; normalised on both sides, "battery" finds "Battery storage prices?" on every store.
 */
export function searchWords(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
