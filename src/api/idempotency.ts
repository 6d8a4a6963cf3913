// An Idempotency-Key is bound to the request it was first used with: the route, its path
// parameters and its body. A retry of that request goes on to its handler, which answers what it
// answered the first time (a run's id, Temporal's update id); the same key on another route or with
// another body is a 409. A run's updates all share one id space in Temporal: without this, a key
// used for an approval and again for a revision answered 200 with the approval and dropped the
// revision. A first use that was refused (4xx) frees its key, so a corrected request may reuse it.
import { createHash } from 'node:crypto';
import type { Express, RequestHandler } from 'express';
import type { IdempotencyKeysTable } from '../activities/store';
import { ApiError } from '../shared/errors';
import { IdempotencyKey } from './contract';

export type IdempotencyKeys = Pick<IdempotencyKeysTable, 'claim' | 'release'>;

const LOCALS_KEY = 'idempotencyKeys';

/** Where the app's routes find the key table (absent: keys are not bound, as in tests without a database). */
export function useIdempotencyKeys(app: Express, keys: IdempotencyKeys | undefined): void {
  if (keys) app.locals[LOCALS_KEY] = keys;
}

/** The handler that binds the request's key to it, for a route that takes an Idempotency-Key. */
export function bindIdempotencyKey(route: { method: string; path: string }): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('idempotency-key');
    const keys = req.app.locals[LOCALS_KEY] as IdempotencyKeys | undefined;
    if (header === undefined || !keys) return next();
    const parsed = IdempotencyKey.safeParse(header);
    if (!parsed.success) throw new ApiError(400, 'invalid_request', `Idempotency-Key: ${parsed.error.issues[0]?.message ?? 'not valid'}`);
    const tenant = String(res.locals.tenant);
    const hash = requestHash(route, req.params, req.body);
    const claim = await keys.claim(tenant, parsed.data, hash);
    if (claim === 'other') {
      throw new ApiError(
        409,
        'idempotency_key_reused',
        'this Idempotency-Key was already used for another request (another action or another body); send this one with a new key',
      );
    }
    if (claim === 'new') {
      res.on('finish', () => {
        if (res.statusCode >= 400 && res.statusCode < 500) void keys.release(tenant, parsed.data, hash).catch(() => undefined);
      });
    }
    next();
  };
}

function requestHash(route: { method: string; path: string }, params: unknown, body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson([route.method.toUpperCase(), route.path, params, body ?? null]))
    .digest('hex');
}

/** JSON with object keys sorted: the same body sent with its fields in another order is the same request. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
