// Tells a workflow what it is waiting for. When an attempt of an activity fails and Temporal will
// retry it (an outage, a rate limit), the worker signals the workflow that scheduled it with the
// outside system, the attempt and the error, so the run's status and its page in the Temporal UI
// say "waiting for the LLM: connection refused, attempt 9, since 04:10"; when a retried call ends,
// it signals again to clear it. The signals are throttled and never fail the activity.
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { CALL_WAIT_SIGNAL } from '../shared/constants';
import type { CallWait } from '../shared/messages';
import { ErrorType, failureMessage } from '../shared/errors';
import { summarize } from '../shared/plain';

/** Every failed attempt up to this one is reported, then every REPORT_EVERY-th. */
const REPORT_FIRST = 3;
const REPORT_EVERY = 5;

/** Is this failed attempt worth a signal? The first few, then one in REPORT_EVERY. */
export function reportAttempt(attempt: number): boolean {
  return attempt <= REPORT_FIRST || attempt % REPORT_EVERY === 0;
}

/** Will Temporal retry after this error? Non-retryable failures and cancellations end the call. */
export function retriedAfter(err: unknown): boolean {
  if (err instanceof CancelledFailure) return false;
  return !(err instanceof ApplicationFailure && err.nonRetryable);
}

/**
 * The worker's activity interceptor. `dependencies` names the outside system of each activity
 * type; an activity not in it is not reported.
 */
export function reportWaits(dependencies: Record<string, string>): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const { info } = ctx;
        const dependency = dependencies[info.activityType];
        try {
          const result = await next(input);
          if (dependency && info.attempt > 1) tell(ctx, { key: info.activityId });
          return result;
        } catch (err) {
          if (dependency && !retriedAfter(err)) {
            if (info.attempt > 1) tell(ctx, { key: info.activityId });
          } else if (dependency && reportAttempt(info.attempt)) {
            tell(ctx, {
              key: info.activityId,
              wait: {
                activity: info.activityType,
                dependency: waitedFor(err, dependency),
                attempt: info.attempt,
                since: info.scheduledTimestampMs,
                error: summarize(failureMessage(err), 200),
              },
            });
          }
          throw err;
        }
      },
    },
  });
}

/** An activity that searches among other work (a researcher turn, the background phase) waits for
 *  the search providers when a search is what failed, whatever it is named after. */
export function waitedFor(err: unknown, dependency: string): string {
  return err instanceof ApplicationFailure && err.type === ErrorType.SearchUnavailable ? 'the search providers' : dependency;
}

/** Fire and forget: the workflow may have ended, Temporal may be the outage. */
function tell(ctx: Context, message: CallWait): void {
  const wf = ctx.info.workflowExecution;
  if (!wf) return;
  let client;
  try {
    client = ctx.client;
  } catch {
    return; // a test environment without a client
  }
  client.workflow
    .getHandle(wf.workflowId, wf.runId)
    .signal(CALL_WAIT_SIGNAL, message)
    .catch((err: unknown) => ctx.log.debug('could not tell the workflow what it waits for', { error: failureMessage(err) }));
}
