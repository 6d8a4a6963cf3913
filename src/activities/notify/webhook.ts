// Webhook deliveries: one signed POST per attempt. The body is the event as JSON; the headers carry
// the event, a delivery id that is the same on every attempt (receivers drop repeats by it) and a
// signature, `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with WEBHOOK_SECRET>`, so a
// receiver can check who sent it and refuse old replays. The URL goes through the crawler's SSRF
// guard on every connection. 2xx is delivered; 408, 429, 5xx and network faults are retried (with
// the receiver's Retry-After); any other answer, or a URL the guard refuses, fails for good.
import { createHmac } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Agent, fetch } from 'undici';
import { ErrorType } from '../../shared/errors';
import type { WebhookEvent } from '../../shared/schemas';
import { BlockedError, checkUrl, guardedLookup, WEB_PORTS, type GuardPolicy } from '../crawl/ssrf';
import { retryAfterMs } from '../../infra/retry-after';

export interface WebhookDelivery {
  researchId: string;
  url: string;
  event: WebhookEvent;
  /** Stable across attempts: `<run id>/<event>[/<n>]`. */
  deliveryId: string;
  data: Record<string, unknown>;
}

export interface WebhookSettings {
  secret: string | undefined;
  allowHosts: string[];
  timeoutMs: number;
  userAgent: string;
}

/** The signature header's value for `body` sent at `t` (unix seconds). */
export function webhookSignature(secret: string, t: number, body: string): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

export function createWebhookActivities(settings: WebhookSettings) {
  const policy: GuardPolicy = { allowHosts: settings.allowHosts, allowedPorts: WEB_PORTS };
  const agent = new Agent({
    connect: { lookup: guardedLookup(policy) as never, timeout: settings.timeoutMs },
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
  } as ConstructorParameters<typeof Agent>[0]);

  async function deliverWebhook(d: WebhookDelivery): Promise<{ status: number; attempt: number }> {
    const { attempt, scheduledTimestampMs } = Context.current().info;
    if (!settings.secret) {
      throw ApplicationFailure.nonRetryable(
        'this worker has no WEBHOOK_SECRET: the delivery cannot be signed',
        ErrorType.WebhookNotConfigured,
      );
    }
    const url = new URL(d.url);
    try {
      checkUrl(policy, url);
    } catch (err) {
      if (err instanceof BlockedError)
        throw ApplicationFailure.nonRetryable(`webhook URL refused: ${err.message}`, ErrorType.WebhookRejected);
      throw err;
    }
    const body = JSON.stringify({
      id: d.deliveryId,
      event: d.event,
      researchId: d.researchId,
      // When the run asked for it (the same on every attempt), not when this attempt ran.
      createdAt: new Date(scheduledTimestampMs).toISOString(),
      data: d.data,
    });
    const t = Math.floor(Date.now() / 1000);
    let res;
    try {
      res = await fetch(url, {
        method: 'POST',
        dispatcher: agent,
        redirect: 'manual',
        signal: AbortSignal.any([Context.current().cancellationSignal, AbortSignal.timeout(settings.timeoutMs)]),
        headers: {
          'content-type': 'application/json',
          'user-agent': settings.userAgent,
          'deep-research-event': d.event,
          'deep-research-delivery': d.deliveryId,
          'deep-research-signature': webhookSignature(settings.secret, t, body),
        },
        body,
      });
      await res.body?.cancel();
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof BlockedError)
        throw ApplicationFailure.nonRetryable(`webhook URL refused: ${cause.message}`, ErrorType.WebhookRejected);
      // Connection refused, reset, timed out: the receiver may be back on the next attempt.
      throw new Error(
        `webhook ${d.event} to ${url.host} failed (attempt ${attempt}): ${(cause as Error)?.message ?? (err as Error).message}`,
      );
    }
    if (res.status >= 200 && res.status < 300) return { status: res.status, attempt };
    const message = `webhook ${d.event} to ${url.host} answered ${res.status} (attempt ${attempt})`;
    if (res.status === 408 || res.status === 429 || res.status >= 500) {
      const wait = retryAfterMs(res.headers);
      throw ApplicationFailure.create({ message, type: 'WebhookUnavailable', ...(wait !== undefined ? { nextRetryDelay: wait } : {}) });
    }
    // A redirect is not followed: the receiver moved, and the run's URL should say where.
    throw ApplicationFailure.nonRetryable(message, ErrorType.WebhookRejected);
  }

  return { deliverWebhook };
}
