// What an activity attempt that pays for something (an LLM call, a sandbox run) needs: the call's
// identity, stable across attempts and unique in the history (rows keyed by it let a retry reuse
// what an earlier attempt finished); keeping a finished result while the database is away; and
// handing the work back when the worker stops.
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorType, failureMessage } from '../shared/errors';
import { beating } from './beat';

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

/** The part of an activity a call is made in, when one activity does the work of several. */
const callScope = new AsyncLocalStorage<string>();

/**
 * Runs `fn` as the part `scope` of the activity: the calls it makes (model calls, fallback notes)
 * are keyed `<activity>/<scope>/…`, so parts that each would be an activity of their own (a
 * search, a page read) keep their calls apart, and a retried attempt finds each part's answers.
 * `scope` must name the same part on every attempt (a stage's name, a hash of its URL).
 */
export function withinCall<T>(scope: string, fn: () => Promise<T>): Promise<T> {
  const outer = callScope.getStore();
  return callScope.run(outer ? `${outer}/${scope}` : scope, fn);
}

/**
 * A part's failure, in an activity that does the work of several: a permanent one (non-retryable,
 * as it would have failed the part's own activity) is a result with its message, which the
 * workflow notes; a transient one (an outage of a provider, the model, the database) fails the
 * attempt, to be retried as the part's own activity would have been, unless `givenUp` says the
 * time for retrying it is over. A cancellation is never a result.
 */
export async function settlePart<T>(work: Promise<T>, givenUp: () => boolean = () => false): Promise<{ value: T } | { error: string }> {
  try {
    return { value: await work };
  } catch (err) {
    if (Context.current().cancellationSignal.aborted) throw err;
    if ((err instanceof ApplicationFailure && err.nonRetryable) || givenUp()) return { error: failureMessage(err) };
    throw err;
  }
}

/**
 * Every part's result once all have ended, or the first failure among them: an attempt that fails
 * leaves no part still running (a page read still paying for its extraction after the attempt
 * ended would race the retry's own).
 */
export async function allPartsOrThrow<T>(work: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** The activity's id, with the part of it the caller runs in (withinCall), if any. */
export function scopedActivityId(): string {
  const scope = callScope.getStore();
  return `${Context.current().info.activityId}${scope ? `/${scope}` : ''}`;
}

/** `<workflow run id>/<activity id>`, plus `/<scope>` inside withinCall, plus `/<suffix>` when one
 *  activity makes several calls. */
export function activityCallKey(suffix?: string): string {
  const info = Context.current().info;
  return `${info.workflowExecution?.runId ?? 'standalone'}/${scopedActivityId()}${suffix ? `/${suffix}` : ''}`;
}

/** How long a finished result waits for PostgreSQL to take it (inside an LLM activity's 5 minutes). */
const KEEP_PATIENCE_MS = 4 * 60_000;
const KEEPING = { keeping: 'a finished result until the database takes it' };

/**
 * Writes that hold a finished, paid-for result (an LLM answer, a sandbox run) are retried inside
 * the activity, heartbeating, while the database is away: failing the activity here would lose the
 * result and pay for it again on the next attempt. The beat goes on while a write is in flight
 * too: a database behind a silent network neither answers nor fails until query_timeout (a minute),
 * and an attempt silent for its heartbeat timeout (15 s) is given to another attempt, which,
 * finding no answer stored and the claim lapsed, would pay for the call again.
 */
export async function keep(write: () => Promise<void>): Promise<void> {
  const ctx = Context.current();
  const since = Date.now();
  return beating(async () => {
    for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
      try {
        return await write();
      } catch (err) {
        if (Date.now() - since > KEEP_PATIENCE_MS) throw err;
        await ctx.sleep(delay);
      }
    }
  }, KEEPING);
}
