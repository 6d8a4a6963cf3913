// The run's webhook: when its plan needs a review, its report is ready or it failed, a delivery
// workflow is started (webhook.ts) and left to run; the run goes on at once. Runs without a
// webhook in their options start nothing.
// A schedule's run with `notify: on_change` calls report_ready only when its comparison with the
// schedule's previous report found a new source or a changed claim or figure, and says which.
import { isCancellation, ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { RunChanges } from '../../shared/changes';
import { failureMessage } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import type { WebhookEvent } from '../../shared/schemas';
import { webhookWorkflow } from '../webhook';
import type { RunState } from './run-state';

/** A change an alert is about: a new source, or a claim or figure that changed. Sources no longer
 *  found are not (a search that ranks differently drops some); neither is a claim the model named
 *  that the stored texts do not bear out (those never reach `changedClaimCount`). */
function foundChange(c: RunChanges | undefined): boolean {
  return c !== undefined && c.newSourceCount + c.changedClaimCount > 0;
}

/** report_ready, unless the run alerts on a change only and its report found none (a first report,
 *  nothing new, or a comparison whose model gave no answer and found no new source either). */
export async function notifyReport(run: RunState, data: Record<string, unknown>): Promise<void> {
  if (run.notifyWhen === 'on_change' && run.options.webhook) {
    if (!foundChange(run.changes)) return;
    return notify(run, 'report_ready', { ...data, changes: run.changes });
  }
  return notify(run, 'report_ready', data);
}

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
