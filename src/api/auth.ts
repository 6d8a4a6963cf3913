// Who is calling: every /v1 request carries `Authorization: Bearer <key>`, and the key decides the
// tenant. Keys come from API_KEYS or from PostgreSQL (`deep-research keys create`); only their
// SHA-256 is compared or stored. An API that started without any key on a loopback address is
// open (the embedded dev default): a request without a key acts for X-Tenant-Id or "default".
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { ApiError } from '../shared/errors';
import { TENANT_PATTERN } from '../shared/schemas';
import type { ApiKeysTable } from '../activities/store';

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
  table: Pick<ApiKeysTable, 'tenantOf'>;
  /** True when the API started without keys on a loopback address. */
  open: boolean;
}

/** Is this host only reachable from this machine? */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** Sets `res.locals.tenant`, or answers 401. */
export function authenticate(deps: AuthDeps): RequestHandler {
  const envHashes = deps.envKeys.map((k) => ({ hash: Buffer.from(hashKey(k.key), 'hex'), tenant: k.tenant }));
  const fromEnv = (hash: string): string | undefined => {
    const h = Buffer.from(hash, 'hex');
    let tenant: string | undefined;
    for (const k of envHashes) if (timingSafeEqual(k.hash, h)) tenant = k.tenant;
    return tenant;
  };
  return (req, res, next) => {
    void (async () => {
      const header = req.get('authorization');
      const asked = req.get('x-tenant-id');
      if (header === undefined) {
        if (!deps.open) {
          res.set('WWW-Authenticate', 'Bearer');
          throw new ApiError(401, 'missing_key', 'this API needs a key: send Authorization: Bearer <key>');
        }
        res.locals.tenant = asked === undefined ? 'default' : TenantHeader.parse(asked);
        return;
      }
      const m = /^Bearer\s+(\S+)$/i.exec(header);
      if (!m) {
        res.set('WWW-Authenticate', 'Bearer');
        throw new ApiError(401, 'invalid_key', 'the Authorization header must be "Bearer <key>"');
      }
      const hash = hashKey(m[1]!);
      const tenant = fromEnv(hash) ?? (await deps.table.tenantOf(hash));
      if (!tenant) {
        res.set('WWW-Authenticate', 'Bearer error="invalid_token"');
        throw new ApiError(401, 'invalid_key', 'this API key is not known or was revoked');
      }
      if (asked !== undefined && asked !== tenant) {
        throw new ApiError(400, 'tenant_mismatch', 'X-Tenant-Id differs from the tenant of the API key; leave it out, the key decides');
      }
      res.locals.tenant = tenant;
    })().then(() => next(), next);
  };
}
