// Recurring research on Temporal Schedules: a schedule starts the same research request on a cron
// expression or at an interval, skips a start while its previous run is still going (overlap
// policy skip), and can be paused, resumed, triggered now and deleted. Each run it starts carries
// the schedule's id, so its report says what changed since the schedule's previous report, and
// the schedule's `notify` choice: with `on_change` its runs call report_ready only on a change.
import { createHash, randomUUID } from 'node:crypto';
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleHandle,
  type ScheduleSummary,
} from '@temporalio/client';
import type { NotifyWhen, RunChanges } from '../shared/changes';
import type { ResearchRequest } from '../shared/schemas';
import { ApiError, failureMessage } from '../shared/errors';
import { durationToMs } from '../shared/plain';
import { summarize } from '../shared/plain';
import { ResearchTenantKey } from '../workflows/search-attributes';
import type { researchWorkflow } from '../workflows/research';
import type { ScheduledReportsTable } from '../activities/store/schedules';
import type { ScheduleBody, ScheduleList, ScheduleView } from './contract';
import type { ResearchService } from './research-service';
import type { Caller } from './auth';
import { shortestCronGapMs } from './cron-gap';
import { checkQuota, RecentlyMade, TenantLocks, type TenantQuotas } from './quotas';

export interface ScheduleServiceDeps {
  client: Client;
  research: Pick<ResearchService, 'checkRequest' | 'runStart'>;
  /** The shortest interval a schedule may run at (SCHEDULE_MIN_INTERVAL). */
  minIntervalMs: number;
  /** What each scheduled run's report found changed (the recent runs show it). */
  reports: Pick<ScheduledReportsTable, 'changesOf'>;
  /** Per-tenant quotas: the schedules one may have (absent: none). */
  quotas?: TenantQuotas;
}

/** What the schedule's memo keeps for the API: whose it is and what it was asked to do. */
interface ScheduleMemo {
  tenant: string;
  question: string;
  cron?: string;
  every?: string;
  timezone?: string;
  requestHash?: string;
  /** Absent in schedules made before it existed: always. */
  notify?: NotifyWhen;
}

const SCHEDULE_PREFIX = 'schedule-';
/** gRPC status INVALID_ARGUMENT: the server refused the spec. */
const GRPC_INVALID_ARGUMENT = 3;

function scheduleIdFor(tenant: string, idempotencyKey: string | undefined): string {
  const hex = idempotencyKey
    ? createHash('sha256').update(`schedule\u0000${tenant}\u0000${idempotencyKey}`).digest('hex').slice(0, 32)
    : randomUUID().replace(/-/g, '');
  return `${SCHEDULE_PREFIX}${hex}`;
}

/** The runs of a schedule are named after it; Temporal appends the time each was scheduled for. */
export const scheduledRunPrefix = (scheduleId: string) => `research-${scheduleId}`;

/** A schedule as the API shows it, from Temporal's description and the memo the API gave it, with
 *  what each recent run's report found changed (from the store, under the schedule's own id). */
function view(desc: ScheduleDescription, changes: Map<string, RunChanges>): ScheduleView {
  const memo = (desc.memo ?? {}) as Partial<ScheduleMemo>;
  const iso = (d: Date | undefined) => d?.toISOString();
  return {
    id: desc.scheduleId,
    question: memo.question ?? '',
    ...(memo.cron ? { cron: memo.cron } : {}),
    ...(memo.every ? { every: memo.every } : {}),
    ...(memo.timezone ? { timezone: memo.timezone } : {}),
    paused: desc.state.paused,
    ...(desc.state.note ? { note: desc.state.note } : {}),
    notify: memo.notify ?? 'always',
    createdAt: iso(desc.info.createdAt),
    runsStarted: desc.info.numActionsTaken,
    runsSkipped: desc.info.numActionsSkippedOverlap,
    nextRunsAt: desc.info.nextActionTimes.slice(0, 5).map((d) => d.toISOString()),
    recentRuns: desc.info.recentActions
      .slice(-10)
      .reverse()
      .map((a) => {
        const id = a.action.workflow.workflowId;
        const changed = changes.get(id);
        return { id, scheduledAt: iso(a.scheduledAt), startedAt: iso(a.takenAt), ...(changed ? { changes: changed } : {}) };
      }),
    running: desc.info.runningActions.map((a) => a.workflow.workflowId),
  };
}

/** A schedule as the list shows it (from the list's summary, not a description). */
function listed(s: ScheduleSummary, memo: Partial<ScheduleMemo>): ScheduleList['schedules'][number] {
  return {
    id: s.scheduleId,
    question: memo.question ?? '',
    ...(memo.cron ? { cron: memo.cron } : {}),
    ...(memo.every ? { every: memo.every } : {}),
    paused: s.state.paused,
    notify: memo.notify ?? 'always',
    nextRunsAt: (s.info?.nextActionTimes ?? []).slice(0, 5).map((d) => d.toISOString()),
  };
}

function scheduleMemo(body: ScheduleBody, tenant: string): ScheduleMemo {
  const { cron, every, timezone, notify } = body;
  return {
    tenant,
    question: summarize(body.question, 300),
    requestHash: createHash('sha256').update(JSON.stringify(body)).digest('hex'),
    ...(cron ? { cron } : {}),
    ...(every ? { every } : {}),
    ...(timezone ? { timezone } : {}),
    ...(notify ? { notify } : {}),
  };
}

/** The run each firing starts: what the API would start for the request, named after the schedule. */
function scheduleAction(id: string, run: ReturnType<ResearchService['runStart']>, notify: NotifyWhen | undefined) {
  // The SDK compiles the action's priority (its type does not list it yet): the runs a schedule
  // starts are shared fairly, like the ones the API starts.
  return {
    type: 'startWorkflow' as const,
    workflowType: 'researchWorkflow' as unknown as typeof researchWorkflow,
    workflowId: scheduledRunPrefix(id),
    taskQueue: run.taskQueue,
    // Only on_change travels: the input of an `always` schedule's runs is what it was before the option.
    args: notify === 'on_change' ? ([{ ...run.args[0], notify }] as typeof run.args) : run.args,
    typedSearchAttributes: run.typedSearchAttributes,
    memo: run.memo,
    staticSummary: run.staticSummary,
    priority: run.priority,
  };
}

/** What Temporal is asked to create: when the schedule starts, what, and whose it is. */
function scheduleOptions(id: string, tenant: string, body: ScheduleBody, run: ReturnType<ResearchService['runStart']>, memo: ScheduleMemo) {
  const { cron, every, timezone, paused, note, notify } = body;
  return {
    scheduleId: id,
    spec: cron ? { cronExpressions: [cron], ...(timezone ? { timezone } : {}) } : { intervals: [{ every: every! }] },
    action: scheduleAction(id, run, notify),
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    state: { paused: paused ?? false, ...(note ? { note } : {}) },
    memo: memo as unknown as Record<string, unknown>,
    typedSearchAttributes: [{ key: ResearchTenantKey, value: tenant }],
  };
}

/** A spec the client or the server refused (the cron expression, the time zone) as a 400. */
function refusedSpec(err: unknown): ApiError | undefined {
  if (!(err instanceof TypeError) && (err as { code?: unknown }).code !== GRPC_INVALID_ARGUMENT) return undefined;
  return new ApiError(400, 'invalid_schedule', `the schedule was refused: ${summarize(failureMessage(err), 300)}`);
}

/** A schedule may start no more often than SCHEDULE_MIN_INTERVAL, by `every` or by `cron`. */
function checkInterval(body: ScheduleBody, minIntervalMs: number): void {
  const least = `${minIntervalMs / 1000}s (SCHEDULE_MIN_INTERVAL)`;
  if (body.every !== undefined && durationToMs(body.every) < minIntervalMs) {
    throw new ApiError(400, 'invalid_schedule', `every must be at least ${least}`);
  }
  const gap = body.cron === undefined ? undefined : shortestCronGapMs(body.cron);
  if (gap !== undefined && gap < minIntervalMs) {
    throw new ApiError(
      400,
      'invalid_schedule',
      `cron "${body.cron}" starts runs ${gap / 1000}s apart at its closest; a schedule may start at most once every ${least}`,
      { shortestGapSeconds: gap / 1000, minIntervalSeconds: minIntervalMs / 1000 },
    );
  }
}

/** The research request a schedule repeats: its body without the schedule's own fields. */
function researchRequestOf(body: ScheduleBody): ResearchRequest {
  const { cron: _cron, every: _every, timezone: _timezone, paused: _paused, note: _note, notify: _notify, ...request } = body;
  return request;
}

/**
 * The schedules quota. Listing schedules is eventually consistent, so the ones made here a moment
 * ago count whether listed or not, the ones deleted here a moment ago do not count though still
 * listed, and a tenant's creations are checked one at a time.
 */
export class ScheduleQuota {
  private readonly locks = new TenantLocks();
  private readonly recent = new RecentlyMade();
  private readonly gone = new RecentlyMade();

  constructor(
    private readonly quotas: TenantQuotas | undefined,
    private readonly listed: (tenant: string) => Promise<string[]>,
  ) {}

  /** Runs `create` (which makes schedule `id`) unless the tenant has its quota: 403. A retry of one it made passes. */
  admit<T extends { created: boolean }>(tenant: string, id: string, create: () => Promise<T>): Promise<T> {
    const quotas = this.quotas;
    if (!quotas?.schedules) return create();
    return this.locks.run(tenant, async () => {
      const gone = new Set(this.gone.of(tenant));
      const ids = new Set([...this.recent.of(tenant), ...(await this.listed(tenant))].filter((x) => !gone.has(x)));
      if (!ids.has(id)) checkQuota(quotas, 'schedules', ids.size);
      const made = await create();
      if (made.created) {
        this.gone.remove(id);
        this.recent.add(id, tenant);
      }
      return made;
    });
  }

  deleted(id: string, tenant: string): void {
    this.recent.remove(id);
    this.gone.add(id, tenant);
  }
}

export function createScheduleService(deps: ScheduleServiceDeps) {
  const schedules = deps.client.schedule;
  const quota = new ScheduleQuota(deps.quotas, async (tenant) => (await list(tenant)).schedules.map((s) => s.id));

  async function owned(id: string, tenant: string): Promise<{ handle: ScheduleHandle; desc: ScheduleDescription }> {
    const handle = schedules.getHandle(id);
    try {
      const desc = await handle.describe();
      const memo = desc.memo as Partial<ScheduleMemo> | undefined;
      if (memo?.tenant !== tenant) throw new ApiError(404, 'not_found', `no schedule with id ${id}`);
      return { handle, desc };
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) throw new ApiError(404, 'not_found', `no schedule with id ${id}`);
      throw err;
    }
  }

  /** Makes a schedule; `caller` (the key that asks) decides whose memory its runs may use, as for a run. */
  async function create(
    body: ScheduleBody,
    tenant: string,
    idempotencyKey?: string,
    caller?: Caller,
  ): Promise<{ schedule: ScheduleView; created: boolean }> {
    checkInterval(body, deps.minIntervalMs);
    const options = await deps.research.checkRequest(researchRequestOf(body), tenant, caller);
    const id = scheduleIdFor(tenant, idempotencyKey);
    const memo = scheduleMemo(body, tenant);
    const run = deps.research.runStart(researchRequestOf(body), tenant, options, { scheduleId: id, caller });
    return quota.admit(tenant, id, async () => {
      try {
        await schedules.create(scheduleOptions(id, tenant, body, run, memo));
      } catch (err) {
        if (!(err instanceof ScheduleAlreadyRunning && idempotencyKey)) throw refusedSpec(err) ?? err;
        const existing = await owned(id, tenant);
        if ((existing.desc.memo as Partial<ScheduleMemo>).requestHash !== memo.requestHash) {
          throw new ApiError(409, 'idempotency_key_reused', 'this Idempotency-Key was already used for a different schedule');
        }
        return { schedule: await viewOf(existing.desc), created: false };
      }
      return { schedule: await viewOf((await owned(id, tenant)).desc), created: true };
    });
  }

  /** The view of a schedule `owned` checked is the tenant's: the store is asked under its id only. */
  async function viewOf(desc: ScheduleDescription): Promise<ScheduleView> {
    const runs = desc.info.recentActions.slice(-10).map((a) => a.action.workflow.workflowId);
    return view(desc, await deps.reports.changesOf(desc.scheduleId, runs));
  }

  async function get(id: string, tenant: string): Promise<ScheduleView> {
    return viewOf((await owned(id, tenant)).desc);
  }

  /** The tenant's schedules (from the schedule's search attribute; listing is eventually consistent). */
  async function list(tenant: string): Promise<ScheduleList> {
    const out: ScheduleList['schedules'] = [];
    for await (const s of schedules.list({ query: `${ResearchTenantKey.name} = '${tenant.replace(/'/g, '')}'` })) {
      const memo = (s.memo ?? {}) as Partial<ScheduleMemo>;
      if (memo.tenant !== tenant) continue;
      out.push(listed(s, memo));
      if (out.length >= 500) break;
    }
    return { schedules: out };
  }

  async function pause(id: string, tenant: string, note?: string): Promise<ScheduleView> {
    const { handle } = await owned(id, tenant);
    await handle.pause(note ?? 'paused through the API');
    return get(id, tenant);
  }

  async function resume(id: string, tenant: string, note?: string): Promise<ScheduleView> {
    const { handle } = await owned(id, tenant);
    await handle.unpause(note ?? 'resumed through the API');
    return get(id, tenant);
  }

  /** Starts a run now; with a run still going it is skipped, as the schedule's own starts are. */
  async function trigger(id: string, tenant: string): Promise<ScheduleView> {
    const { handle } = await owned(id, tenant);
    await handle.trigger(ScheduleOverlapPolicy.SKIP);
    return get(id, tenant);
  }

  /** Deletes the schedule; runs it started go on. */
  async function remove(id: string, tenant: string): Promise<void> {
    const { handle } = await owned(id, tenant);
    await handle.delete();
    quota.deleted(id, tenant);
  }

  return { create, get, list, pause, resume, trigger, remove };
}

export type ScheduleService = ReturnType<typeof createScheduleService>;
