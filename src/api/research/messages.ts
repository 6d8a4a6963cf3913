// What a person sends a run in flight: the plan review (approve, revise), the answer to a
// clarifying question, steering, and cancel. Each message goes as an update, with the request's
// Idempotency-Key as its id (a retry gets the first answer); the workflow's validator decides, and
// a refusal is a 409 with the reason and the current plan version. A run whose worker does not
// know the update yet (deployed before it) gets the signal instead, after the same checks made here.
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, type UpdateDefinition } from '@temporalio/common';
import { ApiError, ErrorType, failureMessage } from '../../shared/errors';
import { Refusal, type ResearchStatusView, type ReviewAnswer, type Steer, type SteerAnswer } from '../../shared/messages';
import {
  answerClarificationSignal,
  answerClarificationUpdate,
  approvePlanSignal,
  approvePlanUpdate,
  revisePlanSignal,
  revisePlanUpdate,
  steerUpdate,
} from '../../workflows/messages';
import type { PlanEdit } from '../../shared/updates';
import type { Caller } from '../auth';
import { withTimeout } from '../timeout';
import { noAnswerReason, noWorker, runningRun, type ResearchContext } from './context';
import { checkKnowledge } from './start';
import { queryStatus } from './status';

/** Sends the signal a run that predates the update gets, given the run's status to check first. */
type SignalFallback<Ret> = (handle: WorkflowHandle, status: ResearchStatusView) => Promise<Ret>;

/** Approves plan `planVersion`: 200 with the decision, or 409 saying why not. */
export function approve(
  ctx: ResearchContext,
  id: string,
  tenant: string,
  planVersion: number,
  idempotencyKey?: string,
): Promise<ReviewAnswer> {
  return sendUpdate(ctx, id, tenant, { def: approvePlanUpdate, arg: { planVersion }, idempotencyKey }, async (handle, s) => {
    checkReview(id, s, planVersion);
    await handle.signal(approvePlanSignal, { planVersion });
    return { planVersion, decision: 'approved' };
  });
}

/** Sends the plan back with feedback (words the run's memory learns, so only from its user or an admin key:
 *  `speaker`) and the reviewer's own edits of its steps. */
export function revise(
  ctx: ResearchContext,
  id: string,
  tenant: string,
  planVersion: number,
  change: { feedback: string; edits: PlanEdit[] },
  idempotencyKey?: string,
  speaker?: Caller,
): Promise<ReviewAnswer> {
  const arg = { planVersion, feedback: change.feedback, edits: change.edits };
  const send = { def: revisePlanUpdate, arg, idempotencyKey, speaker };
  return sendUpdate(ctx, id, tenant, send, async (handle, s) => {
    checkReview(id, s, planVersion);
    if ((s.plan?.revisionsLeft ?? 0) <= 0) {
      const message = `the plan was already revised ${s.plan?.revisions ?? 0} times (maxPlanRevisions); approve it or cancel the run`;
      throw new ApiError(409, 'revision_limit', message);
    }
    await handle.signal(revisePlanSignal, arg);
    return { planVersion, decision: 'revising', nextPlanVersion: planVersion + 1 };
  });
}

/** Answers the coordinator's clarifying question (words the run's memory learns, as revise's). */
export function answer(
  ctx: ResearchContext,
  id: string,
  tenant: string,
  text: string,
  idempotencyKey?: string,
  speaker?: Caller,
): Promise<{ accepted: true }> {
  return sendUpdate(
    ctx,
    id,
    tenant,
    { def: answerClarificationUpdate, arg: { answer: text }, idempotencyKey, speaker },
    async (handle, s) => {
      if (s.clarificationQuestion === undefined) throw new ApiError(409, 'no_question', `research run ${id} asks no question`);
      await handle.signal(answerClarificationSignal, { answer: text });
      return { accepted: true };
    },
  );
}

/** Steers the running research (guidance, wrap-up, a change to a step not yet started); guidance is
 *  words the run's memory learns, as revise's. */
export async function steer(
  ctx: ResearchContext,
  id: string,
  tenant: string,
  message: Steer,
  idempotencyKey?: string,
  speaker?: Caller,
): Promise<SteerAnswer> {
  if (message.kind === 'mustRead' && message.collections.length) await checkKnowledge(ctx, undefined, message.collections, tenant);
  const send = { def: steerUpdate, arg: message, idempotencyKey, speaker: message.kind === 'guidance' ? speaker : undefined };
  return sendUpdate(ctx, id, tenant, send, async () => {
    throw new ApiError(409, 'not_supported', `research run ${id} runs on a worker too old to be steered`);
  });
}

export async function cancel(ctx: ResearchContext, id: string, tenant: string): Promise<void> {
  const handle = await runningRun(ctx, id, tenant);
  await handle.cancel();
}

/** An update to send: its definition and argument, the request's Idempotency-Key, and who says it
 *  when it carries words the run's memory learns (see runningRun). */
interface UpdateToSend<Ret, Arg> {
  def: UpdateDefinition<Ret, [Arg]>;
  arg: Arg;
  idempotencyKey: string | undefined;
  speaker?: Caller | undefined;
}

async function sendUpdate<Ret, Arg>(
  ctx: ResearchContext,
  id: string,
  tenant: string,
  { def, arg, idempotencyKey, speaker }: UpdateToSend<Ret, Arg>,
  fallback: SignalFallback<Ret>,
): Promise<Ret> {
  const handle = await runningRun(ctx, id, tenant, speaker);
  // One id for every sending: a message sent again is the same update.
  const updateId = idempotencyKey ?? randomUUID();
  try {
    return await sendWhileAborted(() => handle.executeUpdate(def, { args: [arg], updateId }), ctx.updateTimeoutMs);
  } catch (err) {
    const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === ErrorType.MessageRefused) throw refused(cause);
    if (cause && /no registered handler for update/i.test(cause.message)) return fallback(handle, await liveStatus(ctx, id, handle));
    if (err instanceof WorkflowNotFoundError) throw new ApiError(409, 'not_running', `research run ${id} has ended`);
    if (err instanceof WorkflowUpdateFailedError) throw err;
    throw noWorker(
      `no worker took the message for research run ${id} in time (${noAnswerReason(err)}); send it again with the same Idempotency-Key`,
    );
  }
}

/** Temporal's answer when it dropped an update it had not accepted yet, because the workflow task
 *  meant to take it failed or timed out (a worker slow under load, a sticky worker gone): nothing
 *  of the update was applied, and the next workflow task can take it. */
const ABORTED = /unexpected workflow task failure/i;
/** How long to wait before sending an aborted update again. */
const RESEND_AFTER_MS = 250;

/** Sends an update (`send`), and again while Temporal aborts it as above, within `ms` in all; an
 *  answer, another error or the time running out ends it. */
export async function sendWhileAborted<T>(send: () => Promise<T>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await withTimeout(send(), Math.max(1, deadline - Date.now()));
    } catch (err) {
      if (!ABORTED.test(failureMessage(err)) || deadline - Date.now() <= RESEND_AFTER_MS) throw err;
      await new Promise((r) => setTimeout(r, RESEND_AFTER_MS));
    }
  }
}

/** The validator's refusal as a 409, with its code and the current plan version when it has one. */
function refused(cause: ApplicationFailure): ApiError {
  const refusal = Refusal.safeParse(cause.details?.[0]);
  const code = refusal.success ? refusal.data.code : 'refused';
  const currentVersion = refusal.success ? refusal.data.currentVersion : undefined;
  return new ApiError(409, code, cause.message, currentVersion !== undefined ? { currentVersion } : undefined);
}

/** The run's status from a worker, for the checks before a signal; 503 when none answers. */
async function liveStatus(ctx: ResearchContext, id: string, handle: WorkflowHandle): Promise<ResearchStatusView> {
  try {
    return await queryStatus(ctx, handle);
  } catch (err) {
    throw noWorker(`no worker answered for research run ${id}: ${noAnswerReason(err)}; try again`);
  }
}

/** The checks the validator makes, for the signal sent to a run that predates the updates. */
function checkReview(id: string, s: ResearchStatusView, planVersion: number): void {
  if (s.phase !== 'reviewing' || !s.plan) {
    throw new ApiError(409, 'not_reviewing', `research run ${id} has no plan waiting for review (phase ${s.phase})`);
  }
  if (s.plan.version !== planVersion) {
    throw new ApiError(409, 'stale_plan_version', `plan version ${planVersion} is not the one under review (version ${s.plan.version})`, {
      currentVersion: s.plan.version,
    });
  }
}
