// Starting, following and steering a run under /v1: submit, list, status, events, the plan review,
// clarification, steering, cancel. What the run produced is in results.ts.
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { ApiError } from '../../shared/errors';
import {
  Accepted,
  ApproveBody,
  ClarificationAnswered,
  ClarificationBody,
  IdempotencyHeader,
  IdempotencyKey,
  LastEventId,
  ListQuery,
  ResearchView,
  ReviewAnswered,
  ReviseBody,
  RunEventMessage,
  RunList,
  RunPath,
  Started,
  SteerAnswered,
  SteerBody,
  SubmitBody,
} from '../contract';
import { callerOf } from '../auth';
import type { ResearchService } from '../research-service';
import type { EventsTable } from '../../activities/store';
import { streamEvents, type StreamSettings } from '../events';
import type { StreamSlots } from '../quotas';
import { reply, route, type RouteTable } from '../route-spec';
import { param } from '../params';

const WRITE_ERRORS = [400, 401, 404, 409, 429, 503];
/** Messages with words the run's memory learns: another user's key is refused (403; research/context.ts). */
const WORDS_ERRORS = [400, 401, 403, 404, 409, 429, 503];

/** The routes under /v1 that start, follow and steer a run, as the OpenAPI document describes them. */
export const RESEARCH_ROUTES = {
  submit: {
    method: 'post',
    path: '/research',
    limit: 'submits',
    summary: 'Start a research run',
    params: { header: IdempotencyHeader },
    body: { content: SubmitBody, required: true },
    responses: {
      202: { description: 'started', content: Started },
      200: { description: 'the run this Idempotency-Key started before', content: Started },
    },
    errors: [400, 401, 403, 404, 409, 413, 429, 503],
  },
  list: {
    method: 'get',
    path: '/research',
    summary: "The tenant's runs: running first (newest first), then ended ones (most recently ended first)",
    params: { query: ListQuery },
    responses: { 200: { description: 'a page of runs', content: RunList } },
    errors: [400, 401, 429],
  },
  get: {
    method: 'get',
    path: '/research/:id',
    summary: 'Status, phase, plan, steps, usage, what the run waits for',
    params: { path: RunPath },
    responses: { 200: { description: 'the run', content: ResearchView } },
    errors: [400, 401, 404, 429, 503],
  },
  events: {
    method: 'get',
    path: '/research/:id/events',
    summary: 'The run as server-sent events, resumable with Last-Event-ID',
    params: {
      path: RunPath,
      header: z.object({ 'Last-Event-ID': LastEventId.optional() }),
      query: z.object({ after: LastEventId.optional().describe('as Last-Event-ID') }),
    },
    responses: {
      200: {
        description:
          'event types: started, plan, phase, status, step, search, crawl, tool, verdict, usage, report, done; data is JSON with `at`',
        content: { 'text/event-stream': RunEventMessage },
      },
    },
    errors: [400, 401, 404, 429],
  },
  approve: {
    method: 'post',
    path: '/research/:id/plan/approve',
    summary: 'Approve the plan under review (Workflow Update approvePlan)',
    params: { path: RunPath, header: IdempotencyHeader },
    body: { content: ApproveBody, required: true },
    responses: { 200: { description: 'approved', content: ReviewAnswered } },
    errors: WRITE_ERRORS,
  },
  revise: {
    method: 'post',
    path: '/research/:id/plan/revise',
    summary: 'Send the plan back with feedback for the planner and/or edits of its steps (Workflow Update revisePlan)',
    params: { path: RunPath, header: IdempotencyHeader },
    body: { content: ReviseBody, required: true },
    responses: { 200: { description: 'revising', content: ReviewAnswered } },
    errors: WORDS_ERRORS,
  },
  clarification: {
    method: 'post',
    path: '/research/:id/clarification',
    summary: "Answer the coordinator's clarifying question (Workflow Update answerClarification)",
    params: { path: RunPath, header: IdempotencyHeader },
    body: { content: ClarificationBody, required: true },
    responses: { 200: { description: 'taken', content: ClarificationAnswered } },
    errors: WORDS_ERRORS,
  },
  steer: {
    method: 'post',
    path: '/research/:id/steer',
    summary:
      'Steer the running research (Workflow Update steer): guidance for every later model call, wrapUp, or add/drop/edit a step not yet started',
    params: { path: RunPath, header: IdempotencyHeader },
    body: { content: SteerBody, required: true },
    responses: { 200: { description: 'taken', content: SteerAnswered } },
    errors: WORDS_ERRORS,
  },
  cancel: {
    method: 'post',
    path: '/research/:id/cancel',
    summary: 'Cancel the run and its steps',
    params: { path: RunPath },
    responses: { 202: { description: 'cancellation requested', content: Accepted } },
    errors: [400, 401, 404, 409, 429],
  },
} satisfies RouteTable;

export interface ResearchRouteDeps {
  research: ResearchService;
  events: Pick<EventsTable, 'after'>;
  eventStream?: StreamSettings;
  /** The tenant's event streams open at once (the streams quota). */
  streams?: StreamSlots;
  /** Returns why a research run cannot start (e.g. no LLM configured), or undefined. */
  preflight?: () => string | undefined;
}

function idempotencyKey(req: Request): string | undefined {
  const header = req.get('idempotency-key');
  return header === undefined ? undefined : param('header', 'Idempotency-Key', IdempotencyKey, header);
}

/** The caller's tenant, set by the authentication middleware. */
function tenantOf(res: Response): string {
  return String(res.locals.tenant);
}

const runId = (req: Request) => param('path', 'id', RunPath.shape.id, req.params.id);

export function researchRoutes(deps: ResearchRouteDeps): Router {
  const r = Router();
  const R = RESEARCH_ROUTES;

  route(r, R.submit, async (req, res) => {
    const body = SubmitBody.parse(req.body ?? {});
    const tenant = tenantOf(res);
    const key = idempotencyKey(req);
    const problem = deps.preflight?.();
    if (problem) throw new ApiError(503, 'llm_not_configured', problem);
    const started = await deps.research.start(body, tenant, key, { caller: callerOf(res.locals) });
    reply(res, R.submit, started.created ? 202 : 200, { id: started.id, status: started.status });
  });

  route(r, R.list, async (req, res) => {
    const f = ListQuery.parse(req.query);
    reply(res, R.list, 200, await deps.research.list(tenantOf(res), f));
  });

  route(r, R.get, async (req, res) => {
    reply(res, R.get, 200, await deps.research.get(runId(req), tenantOf(res)));
  });

  route(r, R.approve, async (req, res) => {
    const id = runId(req);
    const body = ApproveBody.parse(req.body ?? {});
    const answer = await deps.research.approve(id, tenantOf(res), body.planVersion, idempotencyKey(req));
    reply(res, R.approve, 200, { id, ...answer });
  });

  route(r, R.revise, async (req, res) => {
    const id = runId(req);
    const body = ReviseBody.parse(req.body ?? {});
    const answer = await deps.research.revise(
      id,
      tenantOf(res),
      body.planVersion,
      { feedback: body.feedback, edits: body.edits },
      idempotencyKey(req),
      callerOf(res.locals),
    );
    reply(res, R.revise, 200, { id, ...answer });
  });

  route(r, R.clarification, async (req, res) => {
    const id = runId(req);
    const body = ClarificationBody.parse(req.body ?? {});
    const answer = await deps.research.answer(id, tenantOf(res), body.answer, idempotencyKey(req), callerOf(res.locals));
    reply(res, R.clarification, 200, { id, ...answer });
  });

  route(r, R.steer, async (req, res) => {
    const id = runId(req);
    const body = SteerBody.parse(req.body ?? {});
    const answer = await deps.research.steer(id, tenantOf(res), body, idempotencyKey(req), callerOf(res.locals));
    reply(res, R.steer, 200, { id, ...answer });
  });

  route(r, R.cancel, async (req, res) => {
    const id = runId(req);
    await deps.research.cancel(id, tenantOf(res));
    reply(res, R.cancel, 202, { id, accepted: 'cancel' });
  });

  route(r, R.events, async (req, res) => {
    const id = runId(req);
    const header = req.get('last-event-id');
    // Both are checked when both come; the header, which a reconnecting EventSource sends, wins.
    const query = req.query.after === undefined ? undefined : param('query', 'after', LastEventId, req.query.after);
    const after = header !== undefined ? param('header', 'Last-Event-ID', LastEventId, header) : (query ?? 0);
    const ended = await deps.research.owned(id, tenantOf(res));
    // The slot is the stream's until the client goes away or the stream ends, whichever is first.
    const release = deps.streams?.take(tenantOf(res));
    res.once('close', () => release?.());
    try {
      await streamEvents(req, res, id, after, { ...deps.eventStream, events: deps.events, ended });
    } finally {
      release?.();
    }
  });

  return r;
}
