// HTTP GET for untrusted URLs: SSRF-checked on every hop and connection, manual redirects (at
// most 5), connect and total timeouts, a byte cap counted after decompression, and a
// content-type allow list.
import { Agent, fetch, type Response } from 'undici';
import { BlockedError, checkUrl, guardedLookup, type GuardPolicy } from './ssrf';

export class SkippedError extends Error {
  override readonly name = 'SkippedError';
}

export interface FetchLimits extends GuardPolicy {
  maxBytes: number;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  maxRedirects: number;
  userAgent: string;
  /** Lower-case MIME types (no parameters) that may be read. */
  allowedTypes: string[];
}

export const DEFAULT_ALLOWED_TYPES = [
  'text/html',
  'application/xhtml+xml',
  'text/plain',
  'text/markdown',
  'text/x-markdown',
  'application/json',
  'application/pdf',
  'text/csv',
];

export interface FetchedPage {
  url: string;
  finalUrl: string;
  status: number;
  contentType: string;
  body: Buffer;
  redirects: string[];
}

export function createSafeFetcher(limits: FetchLimits) {
  const agent = new Agent({
    connect: { lookup: guardedLookup(limits) as never, timeout: limits.connectTimeoutMs },
    headersTimeout: limits.totalTimeoutMs,
    bodyTimeout: limits.totalTimeoutMs,
    maxRedirections: 0,
  } as ConstructorParameters<typeof Agent>[0]);

  async function readCapped(res: Response, max: number): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let total = 0;
    if (!res.body) return Buffer.alloc(0);
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        await reader.cancel();
        throw new SkippedError(`body larger than ${max} bytes (after decompression)`);
      }
      chunks.push(Buffer.from(value));
    }
    return Buffer.concat(chunks);
  }

  async function get(rawUrl: string, opts: { signal?: AbortSignal; accept?: string } = {}): Promise<FetchedPage> {
    const total = AbortSignal.timeout(limits.totalTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, total]) : total;
    const redirects: string[] = [];
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new BlockedError(`not a valid URL: ${rawUrl.slice(0, 200)}`);
    }
    for (let hop = 0; ; hop++) {
      checkUrl(limits, url);
      let res: Response;
      try {
        res = await fetch(url, {
          dispatcher: agent,
          redirect: 'manual',
          signal,
          headers: {
            'user-agent': limits.userAgent,
            accept:
              opts.accept ?? 'text/html,application/xhtml+xml,text/plain,text/markdown,application/json,application/pdf;q=0.9,*/*;q=0.1',
          },
        });
      } catch (err) {
        const cause = (err as { cause?: unknown }).cause;
        if (cause instanceof BlockedError) throw cause;
        if (total.aborted) throw new Error(`timed out after ${limits.totalTimeoutMs} ms fetching ${url.href}`);
        throw err;
      }
      if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
        await res.body?.cancel();
        if (hop >= limits.maxRedirects) throw new SkippedError(`more than ${limits.maxRedirects} redirects`);
        const next = new URL(res.headers.get('location')!, url);
        redirects.push(next.href);
        url = next;
        continue;
      }
      const contentType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (res.status >= 400) {
        await res.body?.cancel();
        const error = Object.assign(new Error(`HTTP ${res.status} from ${url.href}`), { status: res.status });
        throw error;
      }
      if (!limits.allowedTypes.includes(contentType)) {
        await res.body?.cancel();
        throw new SkippedError(`content type "${contentType || 'none'}" is not read (allowed: ${limits.allowedTypes.join(', ')})`);
      }
      const declared = Number(res.headers.get('content-length') ?? NaN);
      if (Number.isFinite(declared) && declared > limits.maxBytes && !res.headers.get('content-encoding')) {
        await res.body?.cancel();
        throw new SkippedError(`body of ${declared} bytes is larger than ${limits.maxBytes}`);
      }
      let body: Buffer;
      try {
        body = await readCapped(res, limits.maxBytes);
      } catch (err) {
        if (err instanceof SkippedError) throw err;
        if (total.aborted) throw new SkippedError(`body not complete within ${limits.totalTimeoutMs} ms`);
        throw err;
      }
      return { url: rawUrl, finalUrl: url.href, status: res.status, contentType, body, redirects };
    }
  }

  return { get, close: () => agent.close() };
}
export type SafeFetcher = ReturnType<typeof createSafeFetcher>;
