// createApp(deps): the HTTP API as a value, so tests and the dev command build it the same way.
import express from 'express';
import type { Logger } from '../infra/logger';
import { errorHandler, notFound } from './middleware/errors';
import { healthRoutes, type ReadinessCheck } from './routes/health';
import { researchRoutes } from './routes/research';
import type { ResearchService } from './research-service';
import type { EventsTable } from '../activities/store';
import { authenticate, type AuthDeps } from './auth';
import { docsPage, openApiDocument } from './openapi';
import { rateLimiter, type LimitKind } from './rate-limit';

export interface AppDeps {
  research: ResearchService;
  /** The run event log the events stream reads. */
  events: Pick<EventsTable, 'after'>;
  auth: AuthDeps;
  /** Requests per minute and tenant. */
  rateLimits: Record<LimitKind, number>;
  readiness: Record<string, ReadinessCheck>;
  log: Logger;
  preflight?: () => string | undefined;
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(healthRoutes(deps.readiness));
  // The API's description is public, like a login page: everything it describes needs a key.
  const doc = openApiDocument();
  const page = docsPage(doc);
  app.get('/v1/openapi.json', (_req, res) => void res.json(doc));
  app.get('/docs', (_req, res) => {
    res.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
    res.type('html').send(page);
  });
  const limiter = rateLimiter(deps.rateLimits);
  app.use(
    '/v1',
    authenticate(deps.auth),
    limiter.limit((method, path) => (method === 'POST' && path === '/research' ? 'submits' : 'reads')),
    express.json({ limit: '64kb' }),
    researchRoutes({ research: deps.research, events: deps.events, ...(deps.preflight ? { preflight: deps.preflight } : {}) }),
  );
  app.use(notFound);
  app.use(errorHandler(deps.log));
  return app;
}
