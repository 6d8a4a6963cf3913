// GET /v1/research/:id: a run's status view, from the first of its sources that has one.
//
// Where a status comes from, in the order it is asked for:
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
  const run = await tenantRun(ctx, id, tenant);
  const view = await viewOf(ctx, id, tenant, run);
  const budget = BudgetView.safeParse(run.desc.memo?.budget);
  return budget.success && Object.keys(budget.data).length ? { ...view, budget: budget.data } : view;
}

async function viewOf(
  ctx: ResearchContext,
  id: string,
  tenant: string,
  { handle, desc }: Awaited<ReturnType<typeof tenantRun>>,
): Promise<ResearchView> {
  const ended = endedStatus(desc.status.code);
  // PostgreSQL unreachable: a worker can still answer the query for a run in flight (and for an
  // ended one, by replaying it), so the read goes on without the row.
  const row = await ctx.deps.store.runs.get(id).catch(() => undefined);
  const kept = ResearchStatusView.safeParse(row?.view);
  let view: ResearchView;
  if (kept.success && (!ended || TERMINAL.has(kept.data.status))) view = { id, ...kept.data };
  else {
    try {
      view = { id, ...(await queryStatus(ctx, handle)) };
    } catch (err) {
      return ended ? closedView(id, desc, handle, ended, row) : recordedView(id, desc, row, err);
    }
  }
  return ended ? settled(view, ended) : { ...view, ...(await waitingFor(ctx, id, tenant, desc, view)) };
}

const TERMINAL = new Set<RunStatus>(['completed', 'failed', 'cancelled']);

/** The workflow's status query, answered by a worker (for a closed run, by replaying its history). */
export function queryStatus(ctx: ResearchContext, handle: WorkflowHandle): Promise<ResearchStatusView> {
  return withTimeout(handle.query(getStatusQuery), ctx.queryTimeoutMs);
}

/** A view with the status Temporal gives an ended run (see the order above). */
function settled(view: ResearchView, ended: RunStatus | undefined): ResearchView {
  return ended && ended !== 'completed' ? { ...view, status: ended } : view;
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
