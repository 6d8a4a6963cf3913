// The client's one way to make a request: the key as a bearer token, JSON in and out, the API's
// error body as a typed ClientError. fetch only, so that Node 20+ and browsers run it alike.
import type { ErrorBody } from '../api/contract';

export interface ClientOptions {
  /** The API's address, e.g. http://localhost:8080; '' in a page served by the API itself. */
  baseUrl: string;
  /** The API key, or a function that reads it at each request (a page's key store). */
  key?: string | undefined | (() => string | null | undefined);
  /** Sent as X-Tenant-Id: the API checks it against the key's tenant, and an open API acts for it. */
  tenant?: string | undefined;
  /** Another fetch (a test's, a proxy's); the global one otherwise. */
  fetch?: typeof fetch;
  /** Appended to the message when the API cannot be reached (the CLI names --api here). */
  unreachableHint?: string;
}

/** An answer other than 2xx, or no answer at all (status 0, code `unreachable`). */
export class ClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

export interface Http {
  base: string;
  headers(extra?: Record<string, string>): Record<string, string>;
  fetch: typeof fetch;
  /** The body as JSON when the answer says JSON, as text otherwise. */
  call<T>(method: string, path: string, body?: unknown, extra?: Record<string, string>): Promise<T>;
  /** The answer's body as bytes (an export, a chart, a document's file). */
  blob(path: string): Promise<Blob>;
  unreachable(err: unknown): ClientError;
}

/** The ClientError for an answer that is not 2xx: the API's error body, or the status when a proxy answered. */
export async function failure(res: Response): Promise<ClientError> {
  const text = await res.text().catch(() => '');
  let e: Partial<ErrorBody['error']> = {};
  try {
    e = (JSON.parse(text) as Partial<ErrorBody>).error ?? {};
  } catch {
    // not JSON: the status says it
  }
  return new ClientError(res.status, e.code ?? String(res.status), e.message ?? `${res.status} ${res.statusText}`.trim(), e.details);
}

/** A segment `.` or `..` (also spelled `%2e`): fetch's URL parser resolves it away, so the request would reach another route. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * Refuses a path with an empty, `.` or `..` segment before it is sent: an id given as `..` (a
 * tool's argument, a command's) would otherwise climb out of the route it was meant for, and
 * encoding cannot stop that (`%2e` counts as a dot too). 400 `invalid_id`, as the API would say.
 */
export function checkPath(path: string): void {
  const segments = path.split(/[?#]/, 1)[0]!.split('/').slice(1);
  const bad = segments.find((s) => s === '' || DOT_SEGMENT.test(s));
  if (bad !== undefined) {
    throw new ClientError(400, 'invalid_id', `an id may not be empty, "." or "..": ${JSON.stringify(path)} would reach another route`);
  }
}

export function http(o: ClientOptions): Http {
  const base = o.baseUrl.replace(/\/+$/, '');
  // Read at each call: the page's user may sign in with another key.
  const key = () => (typeof o.key === 'function' ? o.key() : o.key);
  const doFetch: typeof fetch = (input, init) => (o.fetch ?? globalThis.fetch)(input, init);
  const headers = (extra: Record<string, string> = {}) => {
    const k = key();
    return { ...(k ? { authorization: `Bearer ${k}` } : {}), ...(o.tenant ? { 'x-tenant-id': o.tenant } : {}), ...extra };
  };
  const unreachable = (err: unknown) =>
    new ClientError(
      0,
      'unreachable',
      `cannot reach the API at ${base || 'this origin'} (${(err as Error).message})${o.unreachableHint ?? ''}`,
    );

  async function send(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Response> {
    // A form (a file upload) sets its own multipart content type and boundary.
    const form = typeof FormData !== 'undefined' && body instanceof FormData;
    checkPath(path);
    let res: Response;
    try {
      res = await doFetch(`${base}${path}`, {
        method,
        headers: headers(body === undefined || form ? extra : { 'content-type': 'application/json', ...extra }),
        ...(body === undefined ? {} : { body: form ? body : JSON.stringify(body) }),
      });
    } catch (err) {
      throw unreachable(err);
    }
    if (!res.ok) throw await failure(res);
    return res;
  }

  return {
    base,
    headers,
    fetch: doFetch,
    unreachable,
    async call<T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<T> {
      const res = await send(method, path, body, extra);
      const text = await res.text();
      return ((res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text) as T;
    },
    async blob(path: string): Promise<Blob> {
      return (await send('GET', path)).blob();
    },
  };
}
