// Per-tenant request limits of one API process: a token bucket per tenant and class, refilled
// continuously over a minute. Every answer carries RateLimit-* headers; an empty bucket answers
// 429 with Retry-After. (Several API processes each keep their own.)
//
// A request is charged once, by the route the router matched (its RouteSpec's `limit`), never by
// its raw path: Express matches `/v1/RESEARCH/` to the same route as `/v1/research`, so a class
// read off the path could be walked around by spelling it differently. Requests that match no
// route, or fail before one is reached (a body that is not JSON), are charged as reads.
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { ApiError } from '../shared/errors';

/** `submits`: requests that start runs; `uploads`: documents to store and ingest; `reads`: the rest. */
export type LimitKind = 'submits' | 'uploads' | 'reads';

interface Bucket {
  tokens: number;
  at: number;
}

interface Taken {
  ok: boolean;
  limit: number;
  remaining: number;
  resetS: number;
}

/** What `rateLimiter().charge` leaves on `res.locals` for the matched route to spend. */
type Charger = (kind: LimitKind) => ApiError | undefined;
const CHARGE = 'rateLimitCharge';

/** Requests per minute and tenant by class; uploads share the submits' rate unless given their own. */
export type RateLimits = Record<Exclude<LimitKind, 'uploads'>, number> & { uploads?: number };

export function rateLimiter(perMinute: RateLimits, now: () => number = Date.now) {
  const buckets = new Map<string, Bucket>();

  /** Takes a token; returns what the headers say. */
  function take(tenant: string, kind: LimitKind): Taken {
    const limit = kind === 'uploads' ? (perMinute.uploads ?? perMinute.submits) : perMinute[kind];
    const rate = limit / 60_000; // tokens per ms
    const key = `${kind}\u0000${tenant}`;
    const t = now();
    const b = buckets.get(key) ?? { tokens: limit, at: t };
    b.tokens = Math.min(limit, b.tokens + (t - b.at) * rate);
    b.at = t;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    buckets.set(key, b);
    // Seconds until the bucket is full again (RateLimit-Reset), or until one token is (Retry-After).
    const resetS = Math.ceil((ok ? limit - b.tokens : 1 - b.tokens) / rate / 1000);
    if (buckets.size > 10_000) for (const [k, v] of buckets) if (t - v.at > 120_000) buckets.delete(k);
    return { ok, limit, remaining: Math.floor(b.tokens), resetS };
  }

  /** Charges the response's tenant once; the error to answer with when its bucket is empty. */
  function chargeOnce(res: Response, kind: LimitKind): ApiError | undefined {
    if (res.locals.rateLimited !== undefined) return undefined;
    res.locals.rateLimited = kind;
    const r = take(String(res.locals.tenant), kind);
    res.set('RateLimit-Policy', `${r.limit};w=60`);
    res.set('RateLimit-Limit', String(r.limit));
    res.set('RateLimit-Remaining', String(r.remaining));
    res.set('RateLimit-Reset', String(r.resetS));
    if (r.ok) return undefined;
    return new ApiError(
      429,
      'rate_limited',
      `more than ${r.limit} ${kind} a minute for this tenant; try again in ${r.resetS} s`,
      { limit: kind },
      r.resetS,
    );
  }

  return {
    take,
    /** Mounted after authentication: lets the matched route charge the tenant (see limitFor). */
    charge: ((_req, res, next) => {
      res.locals[CHARGE] = ((kind) => chargeOnce(res, kind)) satisfies Charger;
      next();
    }) as RequestHandler,
    /** Mounted after the routes: a request no route took is charged as a read. */
    unmatched: ((_req, res, next) => next(chargeOnce(res, 'reads'))) as RequestHandler,
    /** The same for a request that failed before a route took it (its body was refused). */
    failed: ((err, _req, res, next) =>
      next(res.locals.tenant === undefined ? err : (chargeOnce(res, 'reads') ?? err))) as ErrorRequestHandler,
  };
}

/** The first handler of every route (route-spec.ts): charges the tenant for the route's class. */
export function limitFor(kind: LimitKind): RequestHandler {
  return (_req, res, next) => {
    const charge = res.locals[CHARGE] as Charger | undefined;
    next(charge?.(kind));
  };
}
