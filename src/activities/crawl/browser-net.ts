// The network of a rendered page. Chromium makes no request of its own: every request a page
// makes is intercepted (browser.ts) and made here instead, through the crawl's SSRF guard
// (ssrf.ts): the URL is checked, the name is resolved by the guarded lookup and refused when any
// address is not public, and each redirect hop is checked the same way. Doing the request here,
// rather than checking the URL and letting Chromium continue, leaves no gap between the check and
// the connection (a name that answers differently the second time), and redirects, which
// Chromium follows without asking the interceptor again, pass the guard too.
import { Agent, fetch, type Response } from 'undici';
import { BlockedError, checkUrl, guardedLookup, type GuardPolicy } from './ssrf';

/** The page's responses passed its byte cap. */
export class ByteCapError extends Error {
  override readonly name = 'ByteCapError';
}

/** What every response of one page may add up to; shared by all of the page's requests. */
export interface ByteBudget {
  left: number;
  readonly max: number;
}

export interface PageRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

export interface Upstream {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Set instead of a body when redirects are not followed here (the top frame's navigation). */
  redirectTo?: URL;
}

export interface ForwardOptions {
  signal: AbortSignal;
  budget: ByteBudget;
  /** Follow redirects here (sub-resources) or hand them back (the top frame navigates again). */
  followRedirects: boolean;
  /** A reason to refuse a URL besides the guard's (a domain the user banned), or undefined. */
  refuse: (url: URL) => string | undefined;
}

const MAX_REDIRECTS = 5;

/** Request headers that belong to Chromium's connection, not to the request. */
const DROP_REQUEST = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'accept-encoding',
  'proxy-authorization',
  'proxy-connection',
]);
/** Response headers that describe the bytes on the wire, which Chromium gets decoded. */
const DROP_RESPONSE = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** The guarded HTTP client of one worker's browser: one connection pool, the guarded lookup. */
export function createPageNetwork(policy: GuardPolicy, limits: { connectTimeoutMs: number; timeoutMs: number }) {
  const agent = new Agent({
    connect: { lookup: guardedLookup(policy) as never, timeout: limits.connectTimeoutMs },
    headersTimeout: limits.timeoutMs,
    bodyTimeout: limits.timeoutMs,
    maxRedirections: 0,
  } as ConstructorParameters<typeof Agent>[0]);

  async function send(url: URL, req: PageRequest, signal: AbortSignal): Promise<Response> {
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !k.startsWith(':') && !DROP_REQUEST.has(k.toLowerCase())),
    );
    const hasBody = req.body !== null && req.method !== 'GET' && req.method !== 'HEAD';
    try {
      return await fetch(url, {
        dispatcher: agent,
        method: req.method,
        headers,
        redirect: 'manual',
        signal,
        ...(hasBody ? { body: req.body } : {}),
      });
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof BlockedError) throw cause;
      throw err;
    }
  }

  /** One request of the page, hop by hop through the guard, its body counted against the budget. */
  async function forward(first: PageRequest, opts: ForwardOptions): Promise<Upstream> {
    let url = parse(first.url);
    let req = first;
    for (let hop = 0; ; hop++) {
      const refused = opts.refuse(url);
      if (refused) throw new BlockedError(refused);
      checkUrl(policy, url);
      const res = await send(url, req, opts.signal);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        const next = new URL(location, url);
        if (!opts.followRedirects) return { status: res.status, headers: {}, body: Buffer.alloc(0), redirectTo: next };
        if (hop >= MAX_REDIRECTS) throw new BlockedError(`more than ${MAX_REDIRECTS} redirects from ${first.url.slice(0, 200)}`);
        // As browsers do: 303, and 301/302 after a POST, go on as a GET without the body.
        const asGet = res.status === 303 || ((res.status === 301 || res.status === 302) && req.method === 'POST');
        req = asGet ? { ...req, method: 'GET', body: null } : req;
        url = next;
        continue;
      }
      const body = await readBudgeted(res, opts.budget);
      return { status: res.status, headers: responseHeaders(res), body };
    }
  }

  return { forward, close: () => agent.close() };
}
export type PageNetwork = ReturnType<typeof createPageNetwork>;

function parse(raw: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new BlockedError(`not a valid URL: ${raw.slice(0, 200)}`);
  }
}

function responseHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((value, key) => {
    if (!DROP_RESPONSE.has(key) && key !== 'set-cookie') out[key] = value;
  });
  // Playwright takes several cookies as one header, one per line.
  const cookies = res.headers.getSetCookie();
  if (cookies.length) out['set-cookie'] = cookies.join('\n');
  return out;
}

/** The body, counted (after decompression) against what the page has left. */
async function readBudgeted(res: Response, budget: ByteBudget): Promise<Buffer> {
  if (!res.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    budget.left -= value.byteLength;
    if (budget.left < 0) {
      await reader.cancel();
      throw new ByteCapError(`the page's responses passed ${budget.max} bytes`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}
