import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../shared/errors';
import {
  Accepted,
  IdempotencyHeader,
  IdempotencyKey,
  ScheduleBody,
  ScheduleList,
  ScheduleNote,
  SchedulePath,
  ScheduleView,
} from '../contract';
import { reply, route, type RouteTable } from '../route-spec';
import { param } from '../params';
import type { ScheduleService } from '../schedule-service';
import { callerOf } from '../auth';

const ERRORS = [400, 401, 404, 429];

/** The schedule routes under /v1, as the OpenAPI document describes them. */
export const SCHEDULE_ROUTES = {
  create: {
    method: 'post',
    path: '/schedules',
    limit: 'submits',
    summary:
      'Research that repeats (a Temporal Schedule): cron or every; a start is skipped while the previous run goes on; ' +
      'each report after the first starts with "What changed since <date>". Runs accept their plan unless options.autoAcceptPlan is false.',
    params: { header: IdempotencyHeader },
    body: { content: ScheduleBody, required: true },
    responses: {
      201: { description: 'created', content: ScheduleView },
      200: { description: 'the Idempotency-Key matched an existing schedule', content: ScheduleView },
    },
    errors: [400, 401, 403, 404, 409, 429, 503],
  },
  list: {
    method: 'get',
    path: '/schedules',
    summary: "The tenant's schedules",
    responses: { 200: { description: 'the schedules', content: ScheduleList } },
    errors: [401, 429],
  },
  get: {
    method: 'get',
    path: '/schedules/:id',
    summary: 'One schedule: its state, next start times and recent runs',
    params: { path: SchedulePath },
    responses: { 200: { description: 'the schedule', content: ScheduleView } },
    errors: ERRORS,
  },
  pause: {
    method: 'post',
    path: '/schedules/:id/pause',
    summary: 'Pause the schedule (with an optional note)',
    params: { path: SchedulePath },
    body: { content: ScheduleNote, required: false },
    responses: { 200: { description: 'paused', content: ScheduleView } },
    errors: ERRORS,
  },
  resume: {
    method: 'post',
    path: '/schedules/:id/resume',
    limit: 'submits',
    summary: 'Resume a paused schedule',
    params: { path: SchedulePath },
    body: { content: ScheduleNote, required: false },
    responses: { 200: { description: 'resumed', content: ScheduleView } },
    errors: ERRORS,
  },
  trigger: {
    method: 'post',
    path: '/schedules/:id/trigger',
    limit: 'submits',
    summary: 'Start a run now (skipped if one is still running), also while paused',
    params: { path: SchedulePath },
    responses: { 202: { description: 'triggered', content: ScheduleView } },
    errors: ERRORS,
  },
  delete: {
    method: 'delete',
    path: '/schedules/:id',
    summary: 'Delete the schedule (runs it started go on)',
    params: { path: SchedulePath },
    responses: { 200: { description: 'deleted', content: Accepted } },
    errors: ERRORS,
  },
} satisfies RouteTable;

export interface ScheduleRouteDeps {
  schedules: ScheduleService;
  /** Returns why a research run cannot start (e.g. no LLM configured), or undefined. */
  preflight?: () => string | undefined;
}

const tenantOf = (res: Response) => String(res.locals.tenant);
const idOf = (req: Request) => param('path', 'id', SchedulePath.shape.id, req.params.id);
const noteOf = (req: Request) => ScheduleNote.parse(req.body ?? {}).note;

export function scheduleRoutes(deps: ScheduleRouteDeps): Router {
  const r = Router();
  const S = SCHEDULE_ROUTES;

  route(r, S.create, async (req, res) => {
    const body = ScheduleBody.parse(req.body ?? {});
    const header = req.get('idempotency-key');
    const problem = deps.preflight?.();
    if (problem) throw new ApiError(503, 'llm_not_configured', problem);
    const made = await deps.schedules.create(
      body,
      tenantOf(res),
      header === undefined ? undefined : param('header', 'Idempotency-Key', IdempotencyKey, header),
      callerOf(res.locals),
    );
    reply(res, S.create, made.created ? 201 : 200, made.schedule);
  });

  route(r, S.list, async (_req, res) => {
    reply(res, S.list, 200, await deps.schedules.list(tenantOf(res)));
  });

  route(r, S.get, async (req, res) => {
    reply(res, S.get, 200, await deps.schedules.get(idOf(req), tenantOf(res)));
  });

  route(r, S.pause, async (req, res) => {
    reply(res, S.pause, 200, await deps.schedules.pause(idOf(req), tenantOf(res), noteOf(req)));
  });

  route(r, S.resume, async (req, res) => {
    reply(res, S.resume, 200, await deps.schedules.resume(idOf(req), tenantOf(res), noteOf(req)));
  });

  route(r, S.trigger, async (req, res) => {
    reply(res, S.trigger, 202, await deps.schedules.trigger(idOf(req), tenantOf(res)));
  });

  route(r, S.delete, async (req, res) => {
    const id = idOf(req);
    await deps.schedules.remove(id, tenantOf(res));
    reply(res, S.delete, 200, { id, accepted: 'delete' });
  });

  return r;
}
