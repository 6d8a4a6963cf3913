// The CLI's view of the HTTP API: JSON requests with the key, the API's error message on failure,
// and the run's events as an async stream that reconnects with Last-Event-ID by itself.
import type { ErrorBody } from '../api/contract';
import type { ResearchView } from '../shared/messages';
import type { RunEvent } from '../shared/events';
import { readSse } from '../shared/sse';

export interface ApiClientOptions {
  api: string;
  key?: string | undefined;
  /** Sent as X-Tenant-Id: the API checks it against the key's tenant, and an open API acts for it. */
  tenant?: string | undefined;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export type { RunEvent };

export function apiClient(o: ApiClientOptions) {
  const base = o.api.replace(/\/+$/, '');
  const headers = (extra: Record<string, string> = {}) => ({
    ...(o.key ? { authorization: `Bearer ${o.key}` } : {}),
    ...(o.tenant ? { 'x-tenant-id': o.tenant } : {}),
    ...extra,
  });

  async function call<T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<T> {
    let res: Response;
    try {
      // A form (a file upload) sets its own multipart content type and boundary.
      const form = body instanceof FormData;
      res = await fetch(`${base}${path}`, {
        method,
        headers: headers(body === undefined || form ? extra : { 'content-type': 'application/json', ...extra }),
        ...(body === undefined ? {} : { body: form ? body : JSON.stringify(body) }),
      });
    } catch (err) {
      throw new ApiFailure(
        0,
        'unreachable',
        `cannot reach the API at ${base} (${(err as Error).message}); start it with \`deep-research dev\` or set --api / DEEP_RESEARCH_API`,
      );
    }
    const text = await res.text();
    if (!res.ok) {
      let e: Partial<ErrorBody['error']> = {};
      try {
        e = (JSON.parse(text) as Partial<ErrorBody>).error ?? {};
      } catch {
        // not JSON: the status says it
      }
      throw new ApiFailure(res.status, e.code ?? String(res.status), e.message ?? `${res.status} ${res.statusText}`, e.details);
    }
    const type = res.headers.get('content-type') ?? '';
    return (type.includes('json') ? JSON.parse(text) : text) as T;
  }

  /** The run's events from `after` on; reconnects after a dropped connection, ends after `done` (or once `signal` aborts). */
  async function* events(id: string, after = 0, signal?: AbortSignal): AsyncGenerator<RunEvent> {
    let last = after;
    for (let failures = 0; ;) {
      let res: Response;
      try {
        res = await fetch(`${base}/v1/research/${encodeURIComponent(id)}/events`, {
          headers: headers({ accept: 'text/event-stream', 'last-event-id': String(last) }),
          ...(signal ? { signal } : {}),
        });
      } catch (err) {
        if (signal?.aborted) return;
        if (++failures > 30) throw new ApiFailure(0, 'unreachable', `lost the API at ${base}: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 2_000));
        continue;
      }
      if (!res.ok) {
        const text = await res.text();
        let message = `${res.status} ${res.statusText}`;
        try {
          message = (JSON.parse(text) as ErrorBody).error.message;
        } catch {
          // keep the status
        }
        throw new ApiFailure(res.status, 'events', message);
      }
      failures = 0;
      try {
        for await (const e of readSse(res.body!)) {
          last = e.id;
          // The API streams the run's log as src/shared/events.ts declares it.
          yield e as RunEvent;
          if (e.type === 'done') return;
        }
      } catch {
        // the connection dropped: reconnect from the last event
      }
      if (signal?.aborted) return;
      // The server ended the stream without `done` (a run from before events): stop if it ended.
      const status = await call<Pick<ResearchView, 'status'>>('GET', `/v1/research/${encodeURIComponent(id)}`).catch(() => undefined);
      if (status && !['running', 'awaiting_review'].includes(status.status)) return;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }

  return { call, events };
}
export type ApiClient = ReturnType<typeof apiClient>;
