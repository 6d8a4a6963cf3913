import { Router } from 'express';
import { withTimeout } from '../timeout';

export type ReadinessCheck = () => Promise<void>;

export function healthRoutes(checks: Record<string, ReadinessCheck>): Router {
  const r = Router();
  r.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  r.get('/readyz', async (_req, res) => {
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
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) });
  });
  return r;
}
