// A finished run's report rewritten from the same findings, under /v1: ask for a new version, list
// the versions. Each version is read with GET /v1/research/:id/report?version=N (results.ts).
import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../shared/errors';
import type { Caller } from '../auth';
import { IdempotencyHeader, IdempotencyKey, ReportVersionList, RewriteBody, RewriteStarted, RunPath } from '../contract';
import type { ResearchService } from '../research-service';
import { reply, route, type RouteTable } from '../route-spec';
import { param } from '../params';

export const VERSION_ROUTES = {
  rewrite: {
    method: 'post',
    path: '/research/:id/report',
    limit: 'submits',
    summary:
      "Rewrite the finished run's report from the same findings and sources (another length, language, audience, instructions or model): a new version, written by a workflow of its own, with no new search, crawl or step",
    params: { path: RunPath, header: IdempotencyHeader },
    body: { content: RewriteBody, required: true },
    responses: {
      202: { description: 'the new version, being written', content: RewriteStarted },
      200: { description: 'the version this Idempotency-Key asked for before', content: RewriteStarted },
    },
    errors: [400, 401, 404, 409, 429, 503],
  },
  versions: {
    method: 'get',
    path: '/research/:id/reports',
    summary: "The run's report versions: 1 is its own report, then its rewrites with their options, status and usage",
    params: { path: RunPath },
    responses: { 200: { description: 'the versions, oldest first', content: ReportVersionList } },
    errors: [400, 401, 404, 429],
  },
} satisfies RouteTable;

const tenantOf = (res: Response) => String(res.locals.tenant);
const runId = (req: Request) => param('path', 'id', RunPath.shape.id, req.params.id);
const keyOf = (req: Request) => {
  const header = req.get('idempotency-key');
  return header === undefined ? undefined : param('header', 'Idempotency-Key', IdempotencyKey, header);
};

export function versionRoutes(deps: { research: ResearchService; preflight?: () => string | undefined }): Router {
  const r = Router();
  const R = VERSION_ROUTES;

  route(r, R.rewrite, async (req, res) => {
    const body = RewriteBody.parse(req.body ?? {});
    const problem = deps.preflight?.();
    if (problem) throw new ApiError(503, 'llm_not_configured', problem);
    const started = await deps.research.rewrite(runId(req), tenantOf(res), body, keyOf(req), res.locals.caller as Caller | undefined);
    reply(res, R.rewrite, started.created ? 202 : 200, { id: started.id, version: started.version, status: started.status });
  });

  route(r, R.versions, async (req, res) => {
    reply(res, R.versions, 200, await deps.research.reportVersions(runId(req), tenantOf(res)));
  });

  return r;
}
