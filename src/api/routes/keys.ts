// A tenant's own API keys under /v1: the ones kept in PostgreSQL (`deep-research keys create`),
// listed by id, never by secret, and revoked by id. Keys from API_KEYS are the operator's: they
// are not listed and cannot be revoked here. Only keys of the caller's tenant are seen or touched.
// A key's memory setting is its user's: a key may turn its own memory off, and only an admin key
// (src/api/auth.ts) turns another key's memory on or off or a key's memory back on.
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { ApiKeysTable } from '../../activities/store';
import { ApiError } from '../../shared/errors';
import { callerOf, type Caller } from '../auth';
import { reply, route, type RouteTable } from '../route-spec';
import { param } from '../params';

export const KeyId = z.string().regex(/^[0-9a-f]{8}$/, 'not a key id (8 hex digits, the part after "dr_")');
export const KeyPath = z.object({ keyId: KeyId.describe('the key id') });
export const OwnKey = z.object({
  id: z.string(),
  name: z.string().nullable(),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
  memory: z.boolean().describe("false: the key's requests neither use nor teach user memory"),
  admin: z.boolean().describe("an admin key: it acts on the memory of every user of the tenant and on every key's memory setting"),
  current: z.boolean().describe('the key this request was sent with'),
});
export const OwnKeys = z.object({
  tenant: z.string(),
  keys: z.array(OwnKey).describe('keys stored in PostgreSQL for this tenant, revoked ones included'),
  currentKey: z.enum(['stored', 'configured', 'none']).describe('where the key of this request comes from: stored, API_KEYS, or no key'),
  admin: z
    .boolean()
    .describe(
      "the key of this request is an admin key of the tenant (a key of API_KEYS, a stored one made with --admin, or none on an open API): it may change every key's memory setting; any other key only turns its own off",
    ),
});
export type OwnKeys = z.infer<typeof OwnKeys>;
export const KeyMemoryBody = z.object({ memory: z.boolean().describe('true: user memory on for this key; false: off') }).strict();
export type KeyMemoryBody = z.infer<typeof KeyMemoryBody>;
export const KeyMemorySet = z.object({ id: z.string(), memory: z.boolean() });
export type KeyMemorySet = z.infer<typeof KeyMemorySet>;
export const KeyRevoked = z.object({ id: z.string(), revoked: z.literal(true) });
export type KeyRevoked = z.infer<typeof KeyRevoked>;

export const KEY_ROUTES = {
  list: {
    method: 'get',
    path: '/keys/self',
    summary: "The caller's tenant's stored API keys (ids, names, dates; never the secrets), and which one this request used",
    responses: { 200: { description: 'the keys', content: OwnKeys } },
    errors: [401, 429],
  },
  memory: {
    method: 'patch',
    path: '/keys/self/:keyId',
    summary:
      "Turn user memory on or off for one of the tenant's stored keys (with it off, the key's requests neither use nor teach memory): a key may turn its own off; an admin key turns any key's on or off",
    params: { path: KeyPath },
    body: { content: KeyMemoryBody, required: true },
    responses: { 200: { description: 'the setting', content: KeyMemorySet } },
    errors: [400, 401, 403, 404, 429],
  },
  revoke: {
    method: 'delete',
    path: '/keys/self/:keyId',
    summary: "Revoke one of the tenant's stored keys; it stops working at once (also when it is the key of this request)",
    params: { path: KeyPath },
    responses: { 200: { description: 'revoked', content: KeyRevoked } },
    errors: [400, 401, 404, 429],
  },
} satisfies RouteTable;

const tenantOf = (res: Response) => String(res.locals.tenant);
/** The id part of a stored key (`dr_<id>_<secret>`) in this request's Authorization header. */
const presentedId = (req: Request) => /^Bearer\s+dr_([0-9a-f]{8})_\S+$/i.exec(req.get('authorization') ?? '')?.[1];

/**
 * Who may set a key's memory: an admin key any key's; any other key only its own, and only off
 * (memory a key was made without, or an admin turned off, stays off for it).
 */
function checkMemorySetting(caller: Caller, keyId: string, memory: boolean): void {
  if (caller.admin) return;
  if (caller.userId !== `key-${keyId}`) {
    throw new ApiError(403, 'not_your_key', `only an admin key of the tenant changes the memory setting of another key (${keyId})`);
  }
  if (memory && !caller.memory) {
    throw new ApiError(403, 'not_your_key', 'memory is off for this key: only an admin key of the tenant turns it back on');
  }
}

export function keyRoutes(deps: { keys: Pick<ApiKeysTable, 'list' | 'revoke' | 'setMemory'> }): Router {
  const r = Router();
  const K = KEY_ROUTES;

  route(r, K.list, async (req, res) => {
    const tenant = tenantOf(res);
    const rows = await deps.keys.list(tenant);
    const used = presentedId(req);
    const keys = rows.map((k) => ({
      id: k.id,
      name: k.name,
      createdAt: k.createdAt,
      revokedAt: k.revokedAt,
      memory: k.memory,
      admin: k.admin,
      current: k.id === used,
    }));
    const currentKey = keys.some((k) => k.current && !k.revokedAt) ? 'stored' : req.get('authorization') ? 'configured' : 'none';
    reply(res, K.list, 200, { tenant, keys, currentKey, admin: callerOf(res.locals).admin });
  });

  route(r, K.memory, async (req, res) => {
    const keyId = param('path', 'keyId', KeyPath.shape.keyId, req.params.keyId);
    const { memory } = KeyMemoryBody.parse(req.body ?? {});
    checkMemorySetting(callerOf(res.locals), keyId, memory);
    if (!(await deps.keys.setMemory(tenantOf(res), keyId, memory)))
      throw new ApiError(404, 'not_found', `no live key ${keyId} of this tenant`);
    reply(res, K.memory, 200, { id: keyId, memory });
  });

  route(r, K.revoke, async (req, res) => {
    const keyId = param('path', 'keyId', KeyPath.shape.keyId, req.params.keyId);
    const mine = (await deps.keys.list(tenantOf(res))).find((k) => k.id === keyId && !k.revokedAt);
    // Another tenant's key and an unknown one look the same: neither exists for this caller.
    if (!mine || !(await deps.keys.revoke(keyId))) throw new ApiError(404, 'not_found', `no live key ${keyId} of this tenant`);
    reply(res, K.revoke, 200, { id: keyId, revoked: true });
  });

  return r;
}
