// One webhook delivery as a workflow of its own (id `<run id>/webhook/<event>`): a run starts it
// and does not wait, with parent close policy ABANDON, so a report that is ready ends the run while
// a receiver that is down is retried for up to WEBHOOK_RETRY_FOR, visibly in the Temporal UI.
import { activitiesFor } from './proxies';
import type { WebhookDelivery } from '../activities/notify/webhook';
import type { RetrySettings } from '../shared/schemas';

export async function webhookWorkflow(input: WebhookDelivery & { retry?: RetrySettings }): Promise<{ status: number; attempt: number }> {
  const { retry, ...delivery } = input;
  const { notify } = activitiesFor({ retry });
  return notify.deliverWebhook.executeWithOptions({ summary: `webhook ${delivery.event}` }, [delivery]);
}
