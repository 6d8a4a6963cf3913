import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../shared/errors';
import { artifactPath } from '../../shared/report';
import {
  ApproveBody,
  ArtifactId,
  ClarificationBody,
  SteerBody,
  IdempotencyKey,
  LastEventId,
  ListQuery,
  ReportFormat,
  ReviseBody,
  RunId,
  SourceId,
  SubmitBody,
} from '../contract';
import type { ResearchService } from '../research-service';
import type { EventsTable } from '../../activities/store';
import { streamEvents, type StreamSettings } from '../events';
import { HTML_EXPORT_CSP, reportHtml } from '../export/html';
import { reportPdf } from '../export/pdf';

export interface ResearchRouteDeps {
  research: ResearchService;
  events: Pick<EventsTable, 'after'>;
  eventStream?: StreamSettings;
  /** Returns why a research run cannot start (e.g. no LLM configured), or undefined. */
  preflight?: () => string | undefined;
}

function idempotencyKey(req: Request): string | undefined {
  const header = req.get('idempotency-key');
  return header === undefined ? undefined : IdempotencyKey.parse(header);
}

/** The caller's tenant, set by the authentication middleware. */
function tenantOf(res: Response): string {
  return String(res.locals.tenant);
}

export function researchRoutes(deps: ResearchRouteDeps): Router {
  const r = Router();

  r.post('/research', async (req, res) => {
    const body = SubmitBody.parse(req.body ?? {});
    const tenant = tenantOf(res);
    const key = idempotencyKey(req);
    const problem = deps.preflight?.();
    if (problem) throw new ApiError(503, 'llm_not_configured', problem);
    const started = await deps.research.start(body, tenant, key);
    res.status(started.created ? 202 : 200).json({ id: started.id, status: started.status });
  });

  r.get('/research', async (req, res) => {
    const f = ListQuery.parse(req.query);
    const list = await deps.research.list(tenantOf(res), f);
    res.json(list);
  });

  r.get('/research/:id', async (req, res) => {
    const id = RunId.parse(req.params.id);
    res.json(await deps.research.get(id, tenantOf(res)));
  });

  r.post('/research/:id/plan/approve', async (req, res) => {
    const id = RunId.parse(req.params.id);
    const body = ApproveBody.parse(req.body ?? {});
    const answer = await deps.research.approve(id, tenantOf(res), body.planVersion, idempotencyKey(req));
    res.json({ id, ...answer });
  });

  r.post('/research/:id/plan/revise', async (req, res) => {
    const id = RunId.parse(req.params.id);
    const body = ReviseBody.parse(req.body ?? {});
    const answer = await deps.research.revise(id, tenantOf(res), body.planVersion, body.feedback, idempotencyKey(req));
    res.json({ id, ...answer });
  });

  r.post('/research/:id/clarification', async (req, res) => {
    const id = RunId.parse(req.params.id);
    const body = ClarificationBody.parse(req.body ?? {});
    const answer = await deps.research.answer(id, tenantOf(res), body.answer, idempotencyKey(req));
    res.json({ id, ...answer });
  });

  r.post('/research/:id/steer', async (req, res) => {
    const id = RunId.parse(req.params.id);
    const body = SteerBody.parse(req.body ?? {});
    const answer = await deps.research.steer(id, tenantOf(res), body, idempotencyKey(req));
    res.json({ id, ...answer });
  });

  r.post('/research/:id/cancel', async (req, res) => {
    const id = RunId.parse(req.params.id);
    await deps.research.cancel(id, tenantOf(res));
    res.status(202).json({ id, accepted: 'cancel' });
  });

  r.get('/research/:id/events', async (req, res) => {
    const id = RunId.parse(req.params.id);
    const after = LastEventId.parse(req.get('last-event-id') ?? req.query.after ?? '0');
    const ended = await deps.research.owned(id, tenantOf(res));
    await streamEvents(req, res, id, after, { ...deps.eventStream, events: deps.events, ended });
  });

  r.get('/research/:id/report', async (req, res) => {
    const id = RunId.parse(req.params.id);
    const format = ReportFormat.parse(req.query.format ?? 'markdown');
    const report = await deps.research.report(id, tenantOf(res));
    const name = `report-${id.replace(/^research-/, '').slice(0, 12)}`;
    if (format === 'json') {
      res.json({
        id,
        title: report.title,
        locale: report.locale,
        markdown: report.markdown,
        references: report.references,
        removedCitations: report.removedCitations,
        removedLinks: 'removedLinks' in report ? (report.removedLinks ?? []) : [],
        ...('grounding' in report && report.grounding ? { grounding: report.grounding } : {}),
        citationChecks: 'citationChecks' in report ? (report.citationChecks ?? []) : [],
      });
      return;
    }
    if (format === 'html' || format === 'pdf') {
      const images = await deps.research.reportImages(id, report.markdown);
      res.set('X-Content-Type-Options', 'nosniff');
      if (format === 'html') {
        res.set('Content-Security-Policy', HTML_EXPORT_CSP);
        res.set('Content-Disposition', `inline; filename="${name}.html"`);
        res.type('text/html; charset=utf-8').send(reportHtml(report, images));
      } else {
        res.set('Content-Disposition', `attachment; filename="${name}.pdf"`);
        res.type('application/pdf').send(await reportPdf(report, images));
      }
      return;
    }
    res.type('text/markdown; charset=utf-8').send(report.markdown);
  });

  r.get('/research/:id/sources/:sourceId', async (req, res) => {
    const id = RunId.parse(req.params.id);
    res.json(await deps.research.source(id, tenantOf(res), SourceId.parse(req.params.sourceId)));
  });

  r.get('/research/:id/artifacts', async (req, res) => {
    const id = RunId.parse(req.params.id);
    const list = await deps.research.artifacts(id, tenantOf(res));
    res.json({ id, artifacts: list.map((a) => ({ ...a, url: artifactPath(id, a.artifactId) })) });
  });

  r.get('/research/:id/artifacts/:artifactId', async (req, res) => {
    const id = RunId.parse(req.params.id);
    const artifactId = ArtifactId.parse(req.params.artifactId);
    const a = await deps.research.artifact(id, tenantOf(res), artifactId);
    // Files written by untrusted code: never sniffed, never scripted, SVG only as a download.
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Content-Security-Policy', "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'");
    res.set('Content-Disposition', `${a.contentType === 'image/svg+xml' ? 'attachment' : 'inline'}; filename="${a.name}"`);
    res.type(a.contentType).send(a.bytes);
  });

  return r;
}
