import { Router } from 'express';
import { Liveness, Readiness } from '../contract';
import { reply, route, type RouteTable } from '../route-spec';
import { withTimeout } from '../timeout';

export type ReadinessCheck = () => Promise<void>;

/** The health routes at the root, served without a key. */
export const HEALTH_ROUTES = {
  liveness: {
    method: 'get',
    path: '/healthz',
    summary: 'Liveness',
    public: true,
    responses: { 200: { description: 'alive', content: Liveness } },
  },
  readiness: {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness of Temporal and PostgreSQL',
    public: true,
    responses: {
      200: { description: 'ready', content: Readiness },
      503: { description: 'not ready: each check with its error', content: Readiness },
    },
  },
} satisfies RouteTable;

export function healthRoutes(checks: Record<string, ReadinessCheck>): Router {
  const r = Router();
  route(r, HEALTH_ROUTES.liveness, (_req, res) => {
    reply(res, HEALTH_ROUTES.liveness, 200, { status: 'ok' });
  });
  route(r, HEALTH_ROUTES.readiness, async (_req, res) => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await withTimeout(check(), 3_000);
          return [name, { ok: true }] as const;
        } catch (err) {
          return [name, { ok: false, error: (err as Error).message }] as const;
        }
      }),
    );
    const ready = results.every(([, r]) => r.ok);
    reply(res, HEALTH_ROUTES.readiness, ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) });
  });
  return r;
}
