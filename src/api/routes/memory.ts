// What the service remembers about a user, under /v1/memory: listed with the evidence each fact
// was learned from, corrected, deleted one by one or all at once. A key sees and touches its own
// user's facts only; an admin key of the tenant any user's of it (`userId` names one; another
// user's fact id is a 404 for other keys, like an unknown one or another tenant's). A deleted fact
// leaves a tombstone: the learning step never brings it back from the evidence it had.
import { Router, type Request, type Response } from 'express';
import type { MemoryTable } from '../../activities/store';
import { ApiError } from '../../shared/errors';
import { callerOf, memoryUserOf } from '../auth';
import { FactDeleted, FactPatch, FactPath, MemoryForgotten, MemoryFact, MemoryQuery, MemoryView } from '../contract';
import { reply, route, type RouteTable } from '../route-spec';
import { param } from '../params';

export const MEMORY_ROUTES = {
  list: {
    method: 'get',
    path: '/memory',
    summary:
      "What the service remembers about the key's user (or, for an admin key, any user of the tenant): facts with the quotes they were learned from",
    params: { query: MemoryQuery },
    responses: { 200: { description: 'the facts', content: MemoryView } },
    errors: [400, 401, 403, 429],
  },
  forgetAll: {
    method: 'delete',
    path: '/memory',
    summary:
      "Forget everything about the key's user (or, for an admin key, any user of the tenant): no fact comes back from what was said before",
    params: { query: MemoryQuery },
    responses: { 200: { description: 'forgotten', content: MemoryForgotten } },
    errors: [400, 401, 403, 429],
  },
  edit: {
    method: 'patch',
    path: '/memory/:factId',
    summary:
      "Correct a fact of the key's user (an admin key: of any user of the tenant): its text or category (its evidence stays; the old text is not learned again from earlier words)",
    params: { path: FactPath },
    body: { content: FactPatch, required: true },
    responses: { 200: { description: 'the corrected fact', content: MemoryFact } },
    errors: [400, 401, 404, 429],
  },
  remove: {
    method: 'delete',
    path: '/memory/:factId',
    summary:
      "Delete a fact of the key's user (an admin key: of any user of the tenant); the evidence it came from never teaches it again (new words of the user may)",
    params: { path: FactPath },
    responses: { 200: { description: 'deleted', content: FactDeleted } },
    errors: [400, 401, 404, 429],
  },
} satisfies RouteTable;

export type MemoryRouteDeps = { memory: Pick<MemoryTable, 'list' | 'update' | 'remove' | 'forgetAll'> };

const tenantOf = (res: Response) => String(res.locals.tenant);
const userOf = (req: Request, res: Response) => memoryUserOf(callerOf(res.locals), MemoryQuery.parse(req.query).userId);
/** The user whose facts a fact route may touch: the caller's own, or any of the tenant's (undefined) for an admin key. */
const factOwnerOf = (res: Response) => {
  const caller = callerOf(res.locals);
  return caller.admin ? undefined : caller.userId;
};
const factId = (req: Request) => param('path', 'factId', FactPath.shape.factId, req.params.factId);
const noFact = (id: string) => new ApiError(404, 'not_found', `no fact ${id} this key may see`);

export function memoryRoutes(deps: MemoryRouteDeps): Router {
  const r = Router();
  const M = MEMORY_ROUTES;

  route(r, M.list, async (req, res) => {
    const owner = { tenant: tenantOf(res), userId: userOf(req, res) };
    reply(res, M.list, 200, { ...owner, enabled: callerOf(res.locals).memory, facts: await deps.memory.list(owner) });
  });

  route(r, M.forgetAll, async (req, res) => {
    const userId = userOf(req, res);
    reply(res, M.forgetAll, 200, { userId, deleted: await deps.memory.forgetAll({ tenant: tenantOf(res), userId }) });
  });

  route(r, M.edit, async (req, res) => {
    const id = factId(req);
    const body = FactPatch.parse(req.body ?? {});
    const fact = await deps.memory.update(tenantOf(res), id, body, factOwnerOf(res));
    if (!fact) throw noFact(id);
    reply(res, M.edit, 200, fact);
  });

  route(r, M.remove, async (req, res) => {
    const id = factId(req);
    if (!(await deps.memory.remove(tenantOf(res), id, factOwnerOf(res)))) throw noFact(id);
    reply(res, M.remove, 200, { id, deleted: true });
  });

  return r;
}
