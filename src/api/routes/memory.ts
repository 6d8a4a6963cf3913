// What the service remembers about a user, under /v1/memory: listed with the evidence each fact
// was learned from, corrected, deleted one by one or all at once. Only the caller's tenant's facts
// are seen or touched (another tenant's fact id is a 404, like an unknown one); the user is the
// `userId` query, by default the caller's own (the key's owner). A deleted fact leaves a tombstone:
// the learning step never brings it back from the evidence it had.
import { Router, type Request, type Response } from 'express';
import type { MemoryTable } from '../../activities/store';
import { ApiError } from '../../shared/errors';
import type { Caller } from '../auth';
import { FactDeleted, FactPatch, FactPath, MemoryForgotten, MemoryFact, MemoryQuery, MemoryView } from '../contract';
import { reply, route, type RouteTable } from '../route-spec';
import { param } from '../params';

export const MEMORY_ROUTES = {
  list: {
    method: 'get',
    path: '/memory',
    summary: "What the service remembers about a user of the caller's tenant: facts with the quotes they were learned from",
    params: { query: MemoryQuery },
    responses: { 200: { description: 'the facts', content: MemoryView } },
    errors: [400, 401, 429],
  },
  forgetAll: {
    method: 'delete',
    path: '/memory',
    summary: 'Forget everything about a user: every fact is deleted and none comes back from what the user said before',
    params: { query: MemoryQuery },
    responses: { 200: { description: 'forgotten', content: MemoryForgotten } },
    errors: [400, 401, 429],
  },
  edit: {
    method: 'patch',
    path: '/memory/:factId',
    summary: "Correct a fact's text or category (its evidence stays; the old text is not learned again from earlier words)",
    params: { path: FactPath },
    body: { content: FactPatch, required: true },
    responses: { 200: { description: 'the corrected fact', content: MemoryFact } },
    errors: [400, 401, 404, 429],
  },
  remove: {
    method: 'delete',
    path: '/memory/:factId',
    summary: 'Delete a fact; the evidence it came from never teaches it again (new words of the user may)',
    params: { path: FactPath },
    responses: { 200: { description: 'deleted', content: FactDeleted } },
    errors: [400, 401, 404, 429],
  },
} satisfies RouteTable;

export type MemoryRouteDeps = { memory: Pick<MemoryTable, 'list' | 'update' | 'remove' | 'forgetAll'> };

const tenantOf = (res: Response) => String(res.locals.tenant);
const callerOf = (res: Response): Caller => (res.locals.caller as Caller | undefined) ?? { userId: 'default', memory: true };
const userOf = (req: Request, res: Response) => MemoryQuery.parse(req.query).userId ?? callerOf(res).userId;
const factId = (req: Request) => param('path', 'factId', FactPath.shape.factId, req.params.factId);
const noFact = (id: string) => new ApiError(404, 'not_found', `no fact ${id} in this tenant's memory`);

export function memoryRoutes(deps: MemoryRouteDeps): Router {
  const r = Router();
  const M = MEMORY_ROUTES;

  route(r, M.list, async (req, res) => {
    const owner = { tenant: tenantOf(res), userId: userOf(req, res) };
    reply(res, M.list, 200, { ...owner, enabled: callerOf(res).memory, facts: await deps.memory.list(owner) });
  });

  route(r, M.forgetAll, async (req, res) => {
    const userId = userOf(req, res);
    reply(res, M.forgetAll, 200, { userId, deleted: await deps.memory.forgetAll({ tenant: tenantOf(res), userId }) });
  });

  route(r, M.edit, async (req, res) => {
    const id = factId(req);
    const body = FactPatch.parse(req.body ?? {});
    const fact = await deps.memory.update(tenantOf(res), id, body);
    if (!fact) throw noFact(id);
    reply(res, M.edit, 200, fact);
  });

  route(r, M.remove, async (req, res) => {
    const id = factId(req);
    if (!(await deps.memory.remove(tenantOf(res), id))) throw noFact(id);
    reply(res, M.remove, 200, { id, deleted: true });
  });

  return r;
}
