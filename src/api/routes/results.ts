// What a run produced, under /v1: its report (Markdown, JSON, HTML, PDF, Word, slides), its sources and the files
// its coder steps wrote.
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { artifactPath } from '../../shared/report';
import { absoluteLinks } from '../../shared/report-doc';
import { ArtifactId, ArtifactList, ReportFormat, ReportJson, ReportVersion, RunPath, SourceId, SourceView } from '../contract';
import { HTML_EXPORT_CSP, reportHtml } from '../export/html';
import { reportDocx } from '../export/docx';
import { reportPdf } from '../export/pdf';
import { reportPptx } from '../export/pptx';
import { reportSummary } from '../../shared/summary';
import type { ResearchService } from '../research-service';
import { reply, route, type RouteTable } from '../route-spec';
import { param } from '../params';
import { contentDisposition, requestOrigin } from '../download';

const READ_ERRORS = [400, 401, 404, 429];
const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const PPTX_TYPE = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
const ReportQuery = z.object({ format: ReportFormat.optional(), version: ReportVersion.optional() });

/** The routes under /v1 that read what a run produced, as the OpenAPI document describes them. */
export const RESULT_ROUTES = {
  report: {
    method: 'get',
    path: '/research/:id/report',
    summary:
      'The report (a direct answer as a one-paragraph report): Markdown, JSON, self-contained HTML, PDF, Word (.docx) or a slide deck (.pptx)',
    params: { path: RunPath, query: ReportQuery },
    responses: {
      200: {
        description: 'the report',
        content: {
          'text/markdown': z.string(),
          'application/json': ReportJson,
          'text/html': z.string(),
          'application/pdf': z.string().meta({ contentEncoding: 'binary' }),
          [DOCX_TYPE]: z.string().meta({ contentEncoding: 'binary' }),
          [PPTX_TYPE]: z.string().meta({ contentEncoding: 'binary' }),
        },
      },
    },
    errors: READ_ERRORS,
  },
  source: {
    method: 'get',
    path: '/research/:id/sources/:sourceId',
    summary: 'One source the run retrieved: title, address and the evidence the run kept',
    params: { path: RunPath.extend({ sourceId: SourceId }) },
    responses: { 200: { description: 'the source', content: SourceView } },
    errors: READ_ERRORS,
  },
  artifacts: {
    method: 'get',
    path: '/research/:id/artifacts',
    summary: 'Files the coder steps wrote',
    params: { path: RunPath },
    responses: { 200: { description: 'the files', content: ArtifactList } },
    errors: READ_ERRORS,
  },
  artifact: {
    method: 'get',
    path: '/research/:id/artifacts/:artifactId',
    summary: 'One file, served nosniff with a strict CSP',
    params: { path: RunPath.extend({ artifactId: ArtifactId }) },
    responses: { 200: { description: 'the file' } },
    errors: READ_ERRORS,
  },
} satisfies RouteTable;

const tenantOf = (res: Response) => String(res.locals.tenant);
const runId = (req: Request) => param('path', 'id', RunPath.shape.id, req.params.id);

export function resultRoutes(deps: { research: ResearchService }): Router {
  const r = Router();
  const R = RESULT_ROUTES;

  route(r, R.report, async (req, res) => {
    const id = runId(req);
    const format = param('query', 'format', ReportFormat, req.query.format ?? 'markdown');
    const version = req.query.version === undefined ? undefined : param('query', 'version', ReportVersion, req.query.version);
    const report = await deps.research.report(id, tenantOf(res), version);
    const name = `report-${id.replace(/^research-/, '').slice(0, 12)}`;
    if (format === 'json') {
      const summary = reportSummary(report.doc);
      reply(res, R.report, 200, {
        id,
        title: report.title,
        locale: report.locale,
        markdown: report.markdown,
        ...(summary ? { summary } : {}),
        doc: report.doc,
        references: report.references,
        removedCitations: report.removedCitations,
        removedLinks: 'removedLinks' in report ? (report.removedLinks ?? []) : [],
        ...('grounding' in report && report.grounding ? { grounding: report.grounding } : {}),
        citationChecks: 'citationChecks' in report ? (report.citationChecks ?? []) : [],
      });
      return;
    }
    if (format === 'html' || format === 'pdf' || format === 'docx' || format === 'pptx') {
      const images = await deps.research.reportImages(id, report.markdown);
      res.set('X-Content-Type-Options', 'nosniff');
      if (format === 'html') {
        res.set('Content-Security-Policy', HTML_EXPORT_CSP);
        res.set('Content-Disposition', contentDisposition('inline', `${name}.html`));
        res.type('text/html; charset=utf-8').send(reportHtml(report, images));
      } else if (format === 'pdf') {
        res.set('Content-Disposition', contentDisposition('attachment', `${name}.pdf`));
        res.type('application/pdf').send(await reportPdf(report, images));
      } else if (format === 'docx') {
        res.set('Content-Disposition', contentDisposition('attachment', `${name}.docx`));
        res.type(DOCX_TYPE).send(await reportDocx(report, images));
      } else {
        const cover = await deps.research.reportCover(id, tenantOf(res));
        res.set('Content-Disposition', contentDisposition('attachment', `${name}.pptx`));
        res.type(PPTX_TYPE).send(await reportPptx(report, cover, images));
      }
      return;
    }
    // Read away from the API, the run's own links (charts) need its address.
    res.type('text/markdown; charset=utf-8').send(absoluteLinks(report.markdown, requestOrigin(req)));
  });

  route(r, R.source, async (req, res) => {
    const id = runId(req);
    reply(res, R.source, 200, await deps.research.source(id, tenantOf(res), param('path', 'sourceId', SourceId, req.params.sourceId)));
  });

  route(r, R.artifacts, async (req, res) => {
    const id = runId(req);
    const list = await deps.research.artifacts(id, tenantOf(res));
    reply(res, R.artifacts, 200, { id, artifacts: list.map((a) => ({ ...a, url: artifactPath(id, a.artifactId) })) });
  });

  route(r, R.artifact, async (req, res) => {
    const id = runId(req);
    const artifactId = param('path', 'artifactId', ArtifactId, req.params.artifactId);
    const a = await deps.research.artifact(id, tenantOf(res), artifactId);
    // Files written by untrusted code: never sniffed, never scripted, SVG only as a download.
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Content-Security-Policy', "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'");
    res.set('Content-Disposition', contentDisposition(a.contentType === 'image/svg+xml' ? 'attachment' : 'inline', a.name));
    res.type(a.contentType).send(a.bytes);
  });

  return r;
}
