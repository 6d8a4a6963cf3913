// GET /v1/research/:id: a run's status view, from the first of its sources that has one.
//
// A run known to be open (seen open on Temporal, and no sweep of closed runs since has listed it:
// open-runs.ts), whose row's view says it is going, retries nothing and is not queued, is answered
// from that view alone: no describe, no worker.
// Otherwise, Temporal describes the run, and its status comes from the first of these that has one:
// 1. The view the run's last row write kept in PostgreSQL (research_runs.final_view). Every write
//    of a run started on current code carries it, written after every change of the view, so it
//    is what the status query would answer, with no worker: a query costs a workflow task on an
//    open run, and a replay of the whole history on a closed one. Not taken when Temporal says the
//    run ended and the row does not (terminated by an operator: the row never heard).
// 2. The workflow's status query, answered by a worker (a run started on older code, whose row
//    kept a view only with its last write).
// 3. No worker answered and the run is open: the status and phase Temporal's visibility holds, the
//    plan and usage of the run's row, marked stale.
// 4. No worker answered and the run is closed: its result, or its failure.
// A run still open gets what it is waiting for as well (waiting.ts).
// Temporal's word on how the workflow ended wins over a view, unless it completed: a completed
// workflow's own status is finer (a run cancelled at its review timeout completes as `cancelled`).
import type { WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { ApiError, failureMessage } from '../../shared/errors';
import { BudgetView, PlanView, ResearchStatusView, type ResearchView } from '../../shared/messages';
import { Phase, RunStatus, type ResearchResult } from '../../shared/schemas';
import { summarize } from '../../shared/plain';
import type { RecordedRun } from '../../activities/store/runs';
import { getStatusQuery } from '../../workflows/messages';
import { withTimeout } from '../timeout';
import { endedStatus, noAnswerReason, tenantRun, type ResearchContext } from './context';
import { waitingFor } from './waiting';

export async function readStatus(ctx: ResearchContext, id: string, tenant: string): Promise<ResearchView> {
  // PostgreSQL unreachable: a worker can still answer the query for a run in flight (and for an
  // ended one, by replaying it), so the read goes on without the row.
  const row = await ctx.deps.store.runs.get(id).catch(() => undefined);
  const kept = ResearchStatusView.safeParse(row?.view);
  // A run known to be open whose row says it is still going, retries nothing and is not queued
  // (its place comes from the admission workflow): the row alone.
  const seen = ctx.openRuns.knownOpen(id, tenant);
  const going = kept.success && !TERMINAL.has(kept.data.status) && kept.data.phase !== 'queued' && !kept.data.waiting?.length;
  if (seen && going) return withBudget({ id, ...kept.data }, seen.budget);
  const run = await tenantRun(ctx, id, tenant);
  const parsed = BudgetView.safeParse(run.desc.memo?.budget);
  const budget = parsed.success && Object.keys(parsed.data).length ? parsed.data : undefined;
  ctx.openRuns.described(id, tenant, endedStatus(run.desc.status.code) === undefined, budget);
  return withBudget(await viewOf(ctx, id, tenant, run, row, kept.success ? kept.data : undefined), budget);
}

const withBudget = (view: ResearchView, budget: BudgetView | undefined): ResearchView => (budget ? { ...view, budget } : view);

async function viewOf(
  ctx: ResearchContext,
  id: string,
  tenant: string,
  { handle, desc }: Awaited<ReturnType<typeof tenantRun>>,
  row: RecordedRun | undefined,
  kept: ResearchStatusView | undefined,
): Promise<ResearchView> {
  const ended = endedStatus(desc.status.code);
  let view: ResearchView;
  if (kept && (!ended || TERMINAL.has(kept.status))) view = { id, ...kept };
  else {
    try {
      view = { id, ...(await queryStatus(ctx, handle)) };
    } catch (err) {
      return ended ? closedView(id, desc, handle, ended, row) : recordedView(id, desc, row, err);
    }
  }
  if (ended) return settled(view, ended);
  // What the workers reported retrying, in Temporal's own words (or nothing, if it has ended).
  const { waiting: _reported, ...rest } = view;
  return { ...rest, ...(await waitingFor(ctx, id, tenant, desc, view)) };
}

const TERMINAL = new Set<RunStatus>(['completed', 'failed', 'cancelled']);

/** The workflow's status query, answered by a worker (for a closed run, by replaying its history). */
export function queryStatus(ctx: ResearchContext, handle: WorkflowHandle): Promise<ResearchStatusView> {
  return withTimeout(handle.query(getStatusQuery), ctx.queryTimeoutMs);
}

/** A view with the status Temporal gives an ended run (see the order above), which waits for nothing. */
function settled(view: ResearchView, ended: RunStatus): ResearchView {
  const { waiting: _none, ...rest } = view;
  return ended !== 'completed' ? { ...rest, status: ended } : rest;
}

/** Source 3: what Temporal's visibility and the run's row in PostgreSQL last recorded. */
function recordedView(id: string, desc: WorkflowExecutionDescription, row: RecordedRun | undefined, cause: unknown): ResearchView {
  const status = RunStatus.safeParse(desc.searchAttributes?.ResearchStatus?.[0]);
  const phase = Phase.safeParse(desc.searchAttributes?.ResearchPhase?.[0]);
  if (!status.success || !phase.success) {
    throw new ApiError(503, 'status_unavailable', `no worker answered for research run ${id}, and nothing was recorded yet`, undefined, 5);
  }
  const plan = PlanView.safeParse(row?.plan);
  return {
    id,
    status: status.data,
    phase: phase.data,
    question: questionOf(desc),
    ...(plan.success ? { plan: plan.data } : {}),
    ...(row ? { usage: row.usage } : {}),
    ...(row?.error ? { error: row.error } : {}),
    stale: `no worker answered (${noAnswerReason(cause)}): this is what Temporal and PostgreSQL last recorded`,
  };
}

/** Source 4: a closed run's result, or for a failed one the failure, without usage, notes or signals. */
async function closedView(
  id: string,
  desc: WorkflowExecutionDescription,
  handle: WorkflowHandle,
  ended: RunStatus,
  row: RecordedRun | undefined,
): Promise<ResearchView> {
  const question = questionOf(desc);
  if (ended === 'completed') {
    const r = (await handle.result()) as ResearchResult;
    const answer = r.outcome === 'answered_directly' && row?.answer ? { answer: row.answer } : {};
    return { id, status: r.status, phase: 'done', question, usage: r.usage, outcome: r.outcome, ...answer };
  }
  const error =
    ended === 'failed'
      ? await handle.result().then(
          () => undefined,
          (e: unknown) => summarize(failureMessage(e)),
        )
      : undefined;
  return { id, status: ended, phase: 'done', question, ...(error ? { error } : {}) };
}

const questionOf = (desc: WorkflowExecutionDescription) => String(desc.memo?.question ?? '');

/** Checks the run is the tenant's; returns a probe that says whether it has ended (for its event stream). */
export async function endProbe(ctx: ResearchContext, id: string, tenant: string): Promise<() => Promise<boolean>> {
  const { handle } = await tenantRun(ctx, id, tenant);
  return async () => (await handle.describe()).status.name !== 'RUNNING';
}
