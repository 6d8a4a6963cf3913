import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../shared/errors';
import { IdempotencyKey, ScheduleBody, ScheduleId, ScheduleNote } from '../contract';
import type { ScheduleService } from '../schedule-service';

export interface ScheduleRouteDeps {
  schedules: ScheduleService;
  /** Returns why a research run cannot start (e.g. no LLM configured), or undefined. */
  preflight?: () => string | undefined;
}

const tenantOf = (res: Response) => String(res.locals.tenant);
const idOf = (req: Request) => ScheduleId.parse(req.params.id);
const noteOf = (req: Request) => ScheduleNote.parse(req.body ?? {}).note;

export function scheduleRoutes(deps: ScheduleRouteDeps): Router {
  const r = Router();

  r.post('/schedules', async (req, res) => {
    const body = ScheduleBody.parse(req.body ?? {});
    const header = req.get('idempotency-key');
    const problem = deps.preflight?.();
    if (problem) throw new ApiError(503, 'llm_not_configured', problem);
    const made = await deps.schedules.create(body, tenantOf(res), header === undefined ? undefined : IdempotencyKey.parse(header));
    res.status(made.created ? 201 : 200).json(made.schedule);
  });

  r.get('/schedules', async (_req, res) => {
    res.json(await deps.schedules.list(tenantOf(res)));
  });

  r.get('/schedules/:id', async (req, res) => {
    res.json(await deps.schedules.get(idOf(req), tenantOf(res)));
  });

  r.post('/schedules/:id/pause', async (req, res) => {
    res.json(await deps.schedules.pause(idOf(req), tenantOf(res), noteOf(req)));
  });

  r.post('/schedules/:id/resume', async (req, res) => {
    res.json(await deps.schedules.resume(idOf(req), tenantOf(res), noteOf(req)));
  });

  r.post('/schedules/:id/trigger', async (req, res) => {
    res.status(202).json(await deps.schedules.trigger(idOf(req), tenantOf(res)));
  });

  r.delete('/schedules/:id', async (req, res) => {
    const id = idOf(req);
    await deps.schedules.remove(id, tenantOf(res));
    res.status(200).json({ id, accepted: 'delete' });
  });

  return r;
}
