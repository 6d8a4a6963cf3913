// Failures as the workflows treat them. A TemporalFailure (an activity or child that failed, an
// ApplicationFailure) is an outcome the run handles: a failed step, a failed run. Anything else is
// a bug in the workflow code: it is rethrown, which fails the workflow task, so the run waits for
// a fixed deploy instead of ending.
import { ActivityFailure, TemporalFailure, TimeoutFailure } from '@temporalio/workflow';
import { failureMessage } from '../shared/errors';
import { DEFAULT_MAX_OUTAGE } from '../shared/constants';
import { durationToMs } from '../shared/plain';

/** Rethrows what the workflow does not know how to handle (bugs); returns otherwise. */
export function rethrowUnknown(err: unknown): void {
  if (!(err instanceof TemporalFailure)) throw err;
}

/**
 * The failure in words. A call that could not reach its service within maxOutage says which call
 * it was, since when, and its last error.
 */
export function describeFailure(err: unknown, maxOutage: string = DEFAULT_MAX_OUTAGE): string {
  for (let cur = err as { cause?: unknown } | undefined; cur; cur = cur.cause as typeof cur) {
    // Retries stopped by the schedule-to-close timeout: during a backoff (retry state TIMEOUT,
    // cause the last attempt's error) or during an attempt (cause a TimeoutFailure).
    const outOfTime =
      cur instanceof ActivityFailure &&
      (cur.retryState === 'TIMEOUT' || (cur.cause instanceof TimeoutFailure && cur.cause.timeoutType === 'SCHEDULE_TO_CLOSE'));
    if (outOfTime) {
      const since = new Date(Date.now() - durationToMs(maxOutage)).toISOString().slice(0, 16).replace('T', ' ');
      return `${(cur as ActivityFailure).activityType} could not be completed within maxOutage (${maxOutage}, since about ${since} UTC): ${failureMessage(cur.cause)}`;
    }
  }
  return failureMessage(err);
}
