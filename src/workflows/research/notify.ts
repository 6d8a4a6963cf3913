// The run's webhook: when its plan needs a review, its report is ready or it failed, a delivery
// workflow is started (webhook.ts) and left to run; the run goes on at once. Runs without a
// webhook in their options start nothing (so runs recorded before this replay unchanged).
import { isCancellation, ParentClosePolicy, startChild } from '@temporalio/workflow';
import { failureMessage } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import type { WebhookEvent } from '../../shared/schemas';
import { webhookWorkflow } from '../webhook';
import type { RunState } from './run-state';

export async function notify(run: RunState, event: WebhookEvent, data: Record<string, unknown>, nth?: number): Promise<void> {
  const hook = run.options.webhook;
  if (!hook || (hook.events && !hook.events.includes(event))) return;
  const deliveryId = `${run.id}/webhook/${event}${nth ? `-${nth}` : ''}`;
  try {
    await startChild(webhookWorkflow, {
      workflowId: deliveryId,
      args: [{ researchId: run.id, url: hook.url, event, deliveryId, data, ...(run.retry ? { retry: run.retry } : {}) }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `Webhook ${event} for ${run.id}`,
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    run.note(`The ${event} webhook could not be started: ${summarize(failureMessage(err), 200)}`);
  }
}
