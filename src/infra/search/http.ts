// What every search provider's HTTP call shares: a timeout joined to the activity's cancellation,
// and an error that keeps the status (the web search tells permanent refusals, 4xx other
// than 408/429, from transient faults by it) and the server's Retry-After, when it sent one.
import { leanFetch } from '../http';
import { retryAfterMs } from '../retry-after';
import type { SearchHit } from './types';

export class ProviderHttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** How long the provider asked us to wait (a 429's Retry-After), when it said. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export type ProviderRequest = RequestInit & { timeoutMs: number; signal?: AbortSignal | undefined };

/** The longest error text kept from a provider's answer (it goes into messages and logs). */
const MAX_REASON = 200;

/** The reason a provider gave in an error answer: the `error`, `message` or `detail` of its JSON
 *  (Exa, Serper, Semantic Scholar, NCBI and Tavily each use one of them), or nothing. */
export function reasonOf(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object') return undefined;
  const o = parsed as Record<string, unknown>;
  const detail = o.detail && typeof o.detail === 'object' ? (o.detail as Record<string, unknown>).error : o.detail;
  const reason = [o.error, o.message, detail].find((v) => typeof v === 'string' && v.trim());
  return typeof reason === 'string' ? reason.trim().slice(0, MAX_REASON) : undefined;
}

/** One request; a non-2xx answer throws ProviderHttpError naming the provider, its status and reason. */
export async function providerFetch(url: URL | string, init: ProviderRequest, provider: string): Promise<Response> {
  const timeout = AbortSignal.timeout(init.timeoutMs);
  const res = await leanFetch(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
  if (res.ok) return res;
  const reason = reasonOf(await res.text().catch(() => ''));
  throw new ProviderHttpError(`${provider} answered ${res.status}${reason ? `: ${reason}` : ''}`, res.status, retryAfterMs(res.headers));
}

/** One request whose answer is JSON. */
export async function getJson(url: URL | string, init: ProviderRequest, provider: string): Promise<unknown> {
  return (await providerFetch(url, init, provider)).json();
}

export const stripTags = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();

/** `YYYY-MM-DD` of a date the API wrote as an ISO time or date, or undefined when it is not one. */
export function isoDate(raw: string | null | undefined): string | undefined {
  if (!raw) return undefined;
  const m = /^(\d{4})[-/](\d{2})[-/](\d{2})/.exec(raw.trim());
  return m ? `${m[1]}-${m[2]}-${m[3]}` : undefined;
}

/** The hit with its publication date, when the API gave one. */
export function withDate(hit: SearchHit, raw: string | null | undefined): SearchHit {
  const published = isoDate(raw);
  return published ? { ...hit, published } : hit;
}
