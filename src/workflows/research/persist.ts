// Writes of the run's row in PostgreSQL (status, phase, plan, usage) and how a run ends: with a
// result, cancelled (its row still says so), or failed with the reason.
import { ApplicationFailure, CancellationScope, isCancellation, workflowInfo } from '@temporalio/workflow';
import { ErrorType } from '../../shared/errors';
import { describeFailure, rethrowUnknown } from '../failures';
import { summarize } from '../../shared/plain';
import type { ResearchResult, RunStatus, Usage } from '../../shared/schemas';
import { resolveTimeRange } from '../../shared/time-range';
import { notify, notifyReport } from './notify';
import type { RunState } from './run-state';

type RunExtra = { outcome?: string; answer?: string; error?: string };

/**
 * Writes the run's row with its status view as of this write (what the `getStatus` query would
 * answer: the API answers from it without a worker); a terminal write answers with the usage the
 * request log holds.
 */
export function recordRun(run: RunState, status: RunStatus, extra: RunExtra = {}): Promise<{ usage: Usage } | undefined> {
  const plan = run.board.view();
  const seq = run.row.nextSeq();
  return run.calls.localStore.recordRun.executeWithOptions({ summary: `store: run ${status}, phase ${run.phase}` }, [
    {
      id: run.id,
      tenant: run.tenant,
      question: run.userQuestion,
      status,
      phase: run.phase,
      locale: run.locale,
      usage: run.usage,
      plan,
      planVersion: plan?.version,
      seq,
      view: run.view(),
      ...searchSettings(run),
      ...(run.options.models ? { models: run.options.models } : {}),
      ...extra,
    },
  ]);
}

/**
 * The run's search settings, which the search and crawl activities read with its row: the time
 * range resolved against the workflow's start time (the same dates in every write, replay and
 * retry), and the providers the run chose.
 */
function searchSettings(run: RunState) {
  const { timeRange, searchProviders } = run.options;
  if (!timeRange && !searchProviders) return {};
  return {
    search: {
      ...(timeRange ? resolveTimeRange(timeRange, workflowInfo().startTime) : {}),
      ...(searchProviders ? { providers: searchProviders } : {}),
    },
  };
}

/**
 * Keeps the run's row, and with it the run's event log, up with its state: after each change the
 * state publishes, one write that takes every change made while the last one was in flight.
 */
export function startRowSync(run: RunState): void {
  run.row.start(() => recordRun(run, run.status));
}

function stopRowSync(run: RunState): Promise<void> {
  return run.row.stop();
}

/**
 * The run's last write; the usage it answers with (every paid request of the run) is the run's.
 * Its status view stays in the row for the API to answer from once the run has ended (a query
 * would have a worker replay the whole history).
 */
async function recordLast(run: RunState, status: RunStatus, extra: RunExtra): Promise<void> {
  const recorded = await recordRun(run, status, extra);
  if (recorded) run.settleUsage(recorded.usage);
}

/** Ends the run with a result: phase done, the row written, the result returned. */
export async function finish(
  run: RunState,
  outcome: ResearchResult['outcome'],
  summary: string,
  row: RunExtra,
  status: 'completed' | 'cancelled' = 'completed',
): Promise<ResearchResult> {
  await stopRowSync(run);
  run.recordEnd({ outcome, answer: outcome === 'answered_directly' ? row.answer : undefined });
  run.moveTo('done', status);
  await recordLast(run, status, row);
  if (status === 'completed')
    await notifyReport(run, { outcome, title: row.answer ?? '', summary: summarize(summary, 500), usage: run.usage });
  return run.result(outcome, summary, status);
}

/**
 * Ends the run on an error. A cancellation is recorded (even though this scope is being cancelled)
 * and rethrown; a failure is recorded and thrown as a non-retryable failure saying why; a bug
 * (not a TemporalFailure) is rethrown as it is, failing the workflow task until a fix is deployed.
 */
export async function endOnError(run: RunState, err: unknown): Promise<never> {
  if (isCancellation(err)) {
    await CancellationScope.nonCancellable(async () => {
      await stopRowSync(run);
      run.recordEnd({ error: 'cancelled' });
      run.moveTo('done', 'cancelled');
      await recordLast(run, 'cancelled', { error: 'cancelled by request' });
    });
    throw err;
  }
  rethrowUnknown(err);
  await stopRowSync(run);
  const error = summarize(describeFailure(err, run.options.maxOutage));
  run.recordEnd({ error });
  run.moveTo('done', 'failed');
  await recordLast(run, 'failed', { error });
  await notify(run, 'run_failed', { error });
  if (err instanceof ApplicationFailure) throw err;
  throw ApplicationFailure.nonRetryable(error, ErrorType.ResearchFailed);
}
