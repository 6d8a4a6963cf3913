// What a run in flight is waiting for, beside its own work: outside calls it or its running steps
// are retrying (an outage, a rate limit), and, while queued, its place in its tenant's admission
// queue (src/workflows/admission.ts). Neither is in the workflow's status view: Temporal keeps the
// pending activities, and the admission workflow keeps the queue.
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { ResearchView, WaitingCall } from '../../shared/messages';
import { summarize } from '../../shared/plain';
import { admissionId, admissionQueueQuery } from '../../workflows/messages';
import { withTimeout } from '../timeout';
import { iso, type ResearchContext } from './context';

export async function waitingFor(
  ctx: ResearchContext,
  id: string,
  tenant: string,
  desc: WorkflowExecutionDescription,
  view: ResearchView,
): Promise<Pick<ResearchView, 'waiting' | 'queue'>> {
  const [waiting, queue] = await Promise.all([
    retryingCalls(ctx, id, desc, view),
    view.phase === 'queued' ? queuePlace(ctx, id, tenant) : undefined,
  ]);
  return { ...(waiting.length ? { waiting } : {}), ...(queue ? { queue } : {}) };
}

/**
 * The calls of the run and of its running steps' child workflows that are being retried. A view
 * that lists what the workers reported retrying names the steps to describe; in a view that lists
 * nothing (an older run's, or a run with nothing reported) each running step is described.
 */
async function retryingCalls(ctx: ResearchContext, id: string, desc: WorkflowExecutionDescription, view: ResearchView) {
  const reported = view.waiting && new Set(view.waiting.map((w) => w.step));
  const running = (view.plan?.steps ?? []).filter((s) => s.status === 'running' && (!reported || reported.has(s.id))).map((s) => s.id);
  const children = await Promise.all(
    running.map((step) =>
      ctx.deps.client.workflow
        .getHandle(`${id}/step/${step}`)
        .describe()
        .then((d) => retried(d, step))
        .catch(() => []),
    ),
  );
  return [...retried(desc), ...children.flat()];
}

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

/** A queued run's place in its tenant's admission queue; nothing when no worker answers. */
async function queuePlace(ctx: ResearchContext, id: string, tenant: string): Promise<ResearchView['queue']> {
  const admission = ctx.deps.client.workflow.getHandle(admissionId(ctx.deps.taskQueue, tenant));
  const q = await withTimeout(admission.query(admissionQueueQuery), ctx.queryTimeoutMs).catch(() => undefined);
  const at = q?.waiting.indexOf(id) ?? -1;
  return q && at >= 0 ? { position: at + 1, waiting: q.waiting.length, running: q.running.length, maxRuns: q.maxRuns } : undefined;
}
