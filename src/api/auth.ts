// Who is calling: every /v1 request carries `Authorization: Bearer <key>`, and the key decides the
// tenant. Keys come from API_KEYS or from PostgreSQL (`deep-research keys create`); only their
// SHA-256 is compared or stored. An API that started without any key on a loopback address is
// open (the embedded dev default), and so is `dev`'s on loopback once keys exist: a request
// without a key acts for X-Tenant-Id or "default", one with a key for the key's tenant.
// The key also names the user whose memory a request reads and teaches, and says whether it may act
// for the tenant's other users too (an admin key; see Caller and memoryUserOf).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { ApiError } from '../shared/errors';
import { TENANT_PATTERN } from '../shared/schemas';
import type { ApiKeysTable } from '../activities/store';
import type { KeyOwner } from '../activities/store/keys';

const KEY_PREFIX = 'dr_';
const TenantHeader = z.string().regex(TENANT_PATTERN, 'X-Tenant-Id must be 1-64 letters, digits, ".", "_" or "-"');

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** A new key: `dr_<id>_<secret>`; the id is public (listed, revoked by), the secret is shown once. */
export function generateKey(): { id: string; key: string } {
  const id = randomBytes(4).toString('hex');
  return { id, key: `${KEY_PREFIX}${id}_${randomBytes(24).toString('base64url')}` };
}

export interface AuthDeps {
  /** API_KEYS. */
  envKeys: { key: string; tenant: string }[];
  table: Pick<ApiKeysTable, 'ownerOf'>;
  /** True when the API started without keys on a loopback address. */
  open: boolean;
}

/** Is this host only reachable from this machine? */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/**
 * Who a request acts for, besides its tenant: its own user id (a stored key's id; for a key from
 * API_KEYS a prefix of its hash, which names it without revealing it; `default` without a key),
 * whether the key lets its requests use memory, and whether it is an admin key of the tenant: a
 * key from API_KEYS (the operator's), a stored key made with `keys create --admin`, or no key on
 * an open API (whoever reaches it is on the operator's machine). Only an admin key acts on the
 * memory of the tenant's other users or on another key's memory setting.
 */
export interface Caller {
  userId: string;
  memory: boolean;
  admin: boolean;
}

/** The caller of a request the authentication middleware passed (an app built without it: the open API's). */
export function callerOf(locals: Record<string, unknown>): Caller {
  return (locals.caller as Caller | undefined) ?? { userId: 'default', memory: true, admin: true };
}

/**
 * The user whose memory a request reads, changes or teaches: the one it names, else the caller's
 * own. Naming another user of the tenant takes an admin key (403 otherwise): a key's memory is
 * its own user's.
 */
export function memoryUserOf(caller: Caller, named: string | undefined): string {
  if (named === undefined || named === caller.userId) return caller.userId;
  if (!caller.admin) {
    throw new ApiError(
      403,
      'not_your_user',
      `this key acts for user ${caller.userId} only: naming another user (${named}) takes an admin key of the tenant`,
      { userId: caller.userId },
    );
  }
  return named;
}

/** Sets `res.locals.tenant` and `res.locals.caller` (a Caller), or answers 401. */
export function authenticate(deps: AuthDeps): RequestHandler {
  const envHashes = deps.envKeys.map((k) => ({ hash: Buffer.from(hashKey(k.key), 'hex'), tenant: k.tenant }));
  const fromEnv = (hash: string): KeyOwner | undefined => {
    const h = Buffer.from(hash, 'hex');
    let tenant: string | undefined;
    for (const k of envHashes) if (timingSafeEqual(k.hash, h)) tenant = k.tenant;
    // A key of API_KEYS is the operator's: an admin key of its tenant.
    return tenant === undefined ? undefined : { tenant, id: `env-${hash.slice(0, 12)}`, memory: true, admin: true };
  };
  return (req, res, next) => {
    void (async () => {
      const header = req.get('authorization');
      const asked = req.get('x-tenant-id');
      if (header === undefined) {
        if (!deps.open) {
          res.set('WWW-Authenticate', 'Bearer');
          throw new ApiError(
            401,
            'missing_key',
            'this API needs a key: send Authorization: Bearer <key>. Make one on the server with `npx deep-research keys create --tenant default` (runs started without a key belong to tenant default), or ask its operator',
          );
        }
        res.locals.tenant = asked === undefined ? 'default' : TenantHeader.parse(asked);
        res.locals.caller = { userId: 'default', memory: true, admin: true } satisfies Caller;
        return;
      }
      const m = /^Bearer\s+(\S+)$/i.exec(header);
      if (!m) {
        res.set('WWW-Authenticate', 'Bearer');
        throw new ApiError(401, 'invalid_key', 'the Authorization header must be "Bearer <key>"');
      }
      const hash = hashKey(m[1]!);
      const owner = fromEnv(hash) ?? (await deps.table.ownerOf(hash));
      if (!owner) {
        res.set('WWW-Authenticate', 'Bearer error="invalid_token"');
        throw new ApiError(
          401,
          'invalid_key',
          'this API key is not known or was revoked: `deep-research keys list` shows the live ones, `deep-research keys create --tenant <tenant>` makes one',
        );
      }
      if (asked !== undefined && asked !== owner.tenant) {
        throw new ApiError(400, 'tenant_mismatch', 'X-Tenant-Id differs from the tenant of the API key; leave it out, the key decides');
      }
      res.locals.tenant = owner.tenant;
      res.locals.caller = {
        userId: owner.id.startsWith('env-') ? owner.id : `key-${owner.id}`,
        memory: owner.memory,
        admin: owner.admin,
      } satisfies Caller;
    })().then(() => next(), next);
  };
}
