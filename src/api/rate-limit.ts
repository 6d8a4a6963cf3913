// Per-tenant request limits of one API process: a token bucket per tenant and kind (new runs, and
// everything else), refilled continuously over a minute. Every answer carries RateLimit-* headers;
// an empty bucket answers 429 with Retry-After. (Several API processes each keep their own.)
import type { RequestHandler } from 'express';
import { ApiError } from '../shared/errors';

export type LimitKind = 'submits' | 'reads';

interface Bucket {
  tokens: number;
  at: number;
}

export function rateLimiter(perMinute: Record<LimitKind, number>, now: () => number = Date.now) {
  const buckets = new Map<string, Bucket>();

  /** Takes a token; returns what the headers say. */
  function take(tenant: string, kind: LimitKind): { ok: boolean; limit: number; remaining: number; resetS: number } {
    const limit = perMinute[kind];
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

  /** Middleware for a kind of request; needs `res.locals.tenant`. */
  function limit(kind: LimitKind | ((method: string, path: string) => LimitKind)): RequestHandler {
    return (req, res, next) => {
      const k = typeof kind === 'function' ? kind(req.method, req.path) : kind;
      const r = take(String(res.locals.tenant), k);
      res.set('RateLimit-Policy', `${r.limit};w=60`);
      res.set('RateLimit-Limit', String(r.limit));
      res.set('RateLimit-Remaining', String(r.remaining));
      res.set('RateLimit-Reset', String(r.resetS));
      if (r.ok) return next();
      next(
        new ApiError(
          429,
          'rate_limited',
          `more than ${r.limit} ${k} a minute for this tenant; try again in ${r.resetS} s`,
          undefined,
          r.resetS,
        ),
      );
    };
  }

  return { take, limit };
}
