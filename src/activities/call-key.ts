// The identity of an outside call made by an activity: stable across the activity's attempts,
// unique in the history. Rows keyed by it (llm_calls, sandbox_runs) let a retried activity reuse
// what an earlier attempt finished instead of paying for it again.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorType } from '../shared/errors';

/**
 * When the worker is stopping (a deploy) and its grace time ran out, the call in flight is handed
 * back to Temporal as retryable, for the next worker; any other cancellation is left as it is.
 */
export function shutdownFailure(what: string): ApplicationFailure | undefined {
  if (!Context.current().cancellationDetails?.workerShutdown) return undefined;
  return ApplicationFailure.create({
    message: `the worker stopped during ${what}; the next worker retries it`,
    type: ErrorType.WorkerShutdown,
    nextRetryDelay: '1s',
  });
}

/** `<workflow run id>/<activity id>`, plus `/<suffix>` when one activity makes several calls. */
export function activityCallKey(suffix?: string): string {
  const info = Context.current().info;
  return `${info.workflowExecution?.runId ?? 'standalone'}/${info.activityId}${suffix ? `/${suffix}` : ''}`;
}
