// A fetch for the JSON APIs the worker calls most (the model endpoint, SearXNG): one undici
// request on a keep-alive pool, the answer read whole and handed back as a WHATWG Response.
// Node's built-in fetch takes every request and answer through web streams and its own fetch
// controller; under `bench:load` that was about a sixth of the worker's main-thread time. Through
// the OpenAI client, a chat completion costs this process about 0.6 of the CPU it costs with the
// built-in fetch (`npm run bench:http`).
//
// It behaves as fetch does where its callers can tell: redirects are followed, an aborted signal
// rejects with the signal's reason, a network failure rejects with TypeError('fetch failed') and
// the cause. What it does not take (a Request object, a streamed or form body, a redirect mode
// other than follow) goes to the built-in fetch unchanged. Answers are buffered, except a stream
// of server-sent events (a streamed chat completion), whose body is handed on as it arrives.
import { Readable } from 'node:stream';
import { Agent, interceptors, request } from 'undici';

const pool = new Agent({ keepAliveTimeout: 30_000 }).compose(interceptors.redirect({ maxRedirections: 20 }));

/** Statuses whose Response can have no body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** A body sent as it is: none, text or bytes. */
function isPlain(body: unknown): body is string | Uint8Array | ArrayBuffer | null | undefined {
  return body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer;
}

function failure(err: unknown, signal: AbortSignal | null | undefined): unknown {
  if (signal?.aborted) return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
  return new TypeError('fetch failed', { cause: err });
}

export async function leanFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const { body } = init;
  if (input instanceof Request || !isPlain(body) || (init.redirect && init.redirect !== 'follow')) return fetch(input, init);
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw failure(undefined, signal);
  const headers: Record<string, string> = {};
  for (const [k, v] of new Headers(init.headers)) headers[k] = v;
  if (typeof body === 'string' && !('content-type' in headers)) headers['content-type'] = 'text/plain;charset=UTF-8';
  try {
    const res = await request(typeof input === 'string' ? input : input.href, {
      method: (init.method ?? 'GET').toUpperCase() as 'GET',
      headers,
      body: body instanceof ArrayBuffer ? new Uint8Array(body) : (body ?? null),
      dispatcher: pool,
      ...(signal ? { signal } : {}),
    });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (Array.isArray(v)) for (const one of v) out.append(k, one);
      else if (v !== undefined) out.append(k, v);
    }
    const streamed = res.statusCode < 300 && /^text\/event-stream/i.test(out.get('content-type') ?? '');
    const bytes = streamed ? (Readable.toWeb(res.body) as ReadableStream<Uint8Array>) : await res.body.arrayBuffer();
    return new Response(NULL_BODY.has(res.statusCode) ? null : bytes, {
      status: res.statusCode,
      statusText: res.statusText ?? '',
      headers: out,
    });
  } catch (err) {
    throw failure(err, signal);
  }
}
