// createApp(deps): the HTTP API as a value, so tests and the dev command build it the same way.
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import express from 'express';
import type { Logger } from '../infra/logger';
import { metrics, metricsText, METRICS_CONTENT_TYPE } from '../infra/metrics';
import { errorHandler, notFound } from './middleware/errors';
import { refuseUnstorableText } from './middleware/text';
import { useIdempotencyKeys, type IdempotencyKeys } from './idempotency';
import { healthRoutes, type ReadinessCheck } from './routes/health';
import { researchRoutes } from './routes/research';
import { resultRoutes } from './routes/results';
import { versionRoutes } from './routes/versions';
import { knowledgeRoutes } from './routes/knowledge';
import { scheduleRoutes } from './routes/schedules';
import { keyRoutes } from './routes/keys';
import { memoryRoutes, type MemoryRouteDeps } from './routes/memory';
import { searchPreferenceRoutes, type SearchPreferenceRouteDeps } from './routes/search-preferences';
import type { ScheduleService } from './schedule-service';
import type { KnowledgeService } from './knowledge-service';
import type { Retriever } from '../activities/knowledge/retrieve';
import type { ResearchService } from './research-service';
import type { ApiKeysTable, EventsTable } from '../activities/store';
import type { StreamSettings } from './events';
import { authenticate, type AuthDeps } from './auth';
import { hostGuard } from './host-guard';
import { methodHandlers } from './method-not-allowed';
import { docsPage, openApiDocument } from './openapi';
import { webRoutes } from './web';
import { rateLimiter, type RateLimits } from './rate-limit';
import { NO_QUOTAS, StreamSlots, type TenantQuotas } from './quotas';
import { mcpRoutes } from '../mcp/http';
import { CHAT_BODY_LIMIT, chatRoutes, DEFAULT_CHAT_WAIT_MS, openAiErrors } from './routes/chat-completions';

export interface AppDeps {
  research: ResearchService;
  /** Recurring research (absent: the schedule routes are not served). */
  schedules?: ScheduleService;
  /** A tenant's search preferences (absent: those routes are not served). */
  searchPreferences?: SearchPreferenceRouteDeps;
  /** Collections, documents and sessions (absent: those routes are not served). */
  knowledge?: { service: KnowledgeService; maxFileBytes: number; retrieve?: Retriever };
  /** The stored API keys a tenant lists and revokes itself (absent: /v1/keys/self is not served). */
  keys?: Pick<ApiKeysTable, 'list' | 'revoke' | 'setMemory'>;
  /** What the service remembers about users (absent: /v1/memory is not served). */
  memory?: MemoryRouteDeps['memory'];
  /** The OpenAI-compatible endpoint (served with `knowledge`, which keeps its sessions): CHAT_COMPLETION_WAIT. */
  chat?: { waitMs: number };
  /** Which request each Idempotency-Key was first used for (absent: keys are not bound to requests). */
  idempotencyKeys?: IdempotencyKeys;
  /** The run event log the events stream reads. */
  events: Pick<EventsTable, 'after'>;
  /** How event streams wait: woken by notifications, or polling (see events.ts). */
  eventStream?: StreamSettings;
  auth: AuthDeps;
  /** API_ALLOWED_HOSTS: names the API answers to besides loopback ones (src/api/host-guard.ts). */
  allowedHosts?: string[];
  /** Requests per minute and tenant. */
  rateLimits: RateLimits;
  /** What one tenant may hold and do at once (absent: no quotas). */
  quotas?: TenantQuotas;
  readiness: Record<string, ReadinessCheck>;
  log: Logger;
  preflight?: () => string | undefined;
}

const tracer = trace.getTracer('deep-research-api');

/** The chat route's path below /v1 as the router matches it: any letter case, with or without a
 *  trailing slash (Express's defaults), so its body limit goes wherever the route does. */
const CHAT_PATH = /^\/chat\/completions\/?$/i;

/**
 * Per request: metrics by route pattern (never by raw path: ids would make a series per run), and
 * a server span (a no-op unless tracing is on) that the Temporal client carries into the workflow.
 */
const observeRequests: express.RequestHandler = (req, res, next) => {
  const started = process.hrtime.bigint();
  const parent = propagation.extract(context.active(), req.headers);
  const span = tracer.startSpan(
    `${req.method} ${req.path}`,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
    parent,
  );
  res.on('finish', () => {
    const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : req.path === '/metrics' ? '/metrics' : 'other';
    metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
    metrics.httpSeconds.observe({ method: req.method, route }, Number(process.hrtime.bigint() - started) / 1e9);
    span.updateName(`${req.method} ${route}`);
    span.setAttribute('http.route', route);
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(trace.setSpan(parent, span), next);
};

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  useIdempotencyKeys(app, deps.idempotencyKeys);
  app.use(observeRequests);
  app.use(healthRoutes(deps.readiness));
  // Health checks come by any name (a load balancer's probe); everything after answers only to allowed ones.
  app.use(hostGuard({ open: deps.auth.open, allowedHosts: deps.allowedHosts ?? [] }));
  const methods = methodHandlers();
  app.use(methods.options);
  app.use(webRoutes());
  app.get('/metrics', async (_req, res) => {
    res.type(METRICS_CONTENT_TYPE).send(await metricsText());
  });
  // The API's description is public, like a login page: everything it describes needs a key.
  const doc = openApiDocument();
  const page = docsPage(doc);
  app.get('/v1/openapi.json', (_req, res) => void res.json(doc));
  app.get('/docs', (_req, res) => {
    res.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
    res.type('html').send(page);
  });
  const limiter = rateLimiter(deps.rateLimits);
  const streams = new StreamSlots(deps.quotas ?? NO_QUOTAS);
  const json = express.json({ limit: '64kb' });
  const chatJson = express.json({ limit: CHAT_BODY_LIMIT });
  app.use(
    '/v1',
    authenticate(deps.auth),
    // Each route charges its own class once the router matched it (RouteSpec.limit), whatever the path's spelling.
    limiter.charge,
    // A chat request carries the conversation so far, earlier reports included: a larger limit there.
    (req, res, next) => (CHAT_PATH.test(req.path) ? chatJson : json)(req, res, next),
    refuseUnstorableText,
    researchRoutes({
      research: deps.research,
      events: deps.events,
      streams,
      ...(deps.eventStream ? { eventStream: deps.eventStream } : {}),
      ...(deps.preflight ? { preflight: deps.preflight } : {}),
    }),
    resultRoutes({ research: deps.research }),
    versionRoutes({ research: deps.research, ...(deps.preflight ? { preflight: deps.preflight } : {}) }),
    ...(deps.schedules ? [scheduleRoutes({ schedules: deps.schedules, ...(deps.preflight ? { preflight: deps.preflight } : {}) })] : []),
    ...(deps.knowledge ? [knowledgeRoutes({ ...deps.knowledge, knowledge: deps.knowledge.service })] : []),
    ...(deps.searchPreferences ? [searchPreferenceRoutes(deps.searchPreferences)] : []),
    ...(deps.knowledge
      ? [
          chatRoutes({
            research: deps.research,
            knowledge: deps.knowledge.service,
            follow: { events: deps.events, ...deps.eventStream },
            waitMs: deps.chat?.waitMs ?? DEFAULT_CHAT_WAIT_MS,
            streams,
            ...(deps.preflight ? { preflight: deps.preflight } : {}),
          }),
        ]
      : []),
    // MCP (Streamable HTTP) with the caller's key: its tools call the routes above.
    mcpRoutes(),
    ...(deps.keys ? [keyRoutes({ keys: deps.keys })] : []),
    ...(deps.memory ? [memoryRoutes({ memory: deps.memory })] : []),
    limiter.unmatched,
  );
  app.use('/v1', limiter.failed);
  app.use(methods.notAllowed);
  app.use(notFound);
  // The OpenAI-compatible routes answer errors in OpenAI's shape, whichever step refused the request.
  app.use(['/v1/chat/completions', '/v1/models'], openAiErrors);
  app.use(errorHandler(deps.log));
  return app;
}
