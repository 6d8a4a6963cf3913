// The OpenAPI 3.1 document of the HTTP API, generated from the zod schemas the routes validate
// with (src/api/contract.ts), and a readable page of it at /docs (no script, no outside asset).
import { z } from 'zod';
import {
  Accepted,
  ApproveBody,
  ArtifactList,
  ClarificationAnswered,
  ClarificationBody,
  SteerAnswered,
  SteerBody,
  ErrorBody,
  ListQuery,
  ReportJson,
  ResearchView,
  ReviewAnswered,
  ReviseBody,
  RunList,
  ScheduleBody,
  ScheduleList,
  ScheduleNote,
  ScheduleView,
  SourceView,
  Started,
  SubmitBody,
} from './contract';
import {
  AddDocumentUrlBody,
  CollectionView,
  CreateCollectionBody,
  CreateSessionBody,
  DocumentView,
  SessionView,
} from '../shared/knowledge';

type Schema = Record<string, unknown>;
const json = (s: z.ZodType, io: 'input' | 'output' = 'output'): Schema => {
  const out = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Schema;
  delete out.$schema;
  return out;
};
const content = (s: z.ZodType, io: 'input' | 'output' = 'output') => ({ 'application/json': { schema: json(s, io) } });
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), { description: ERROR_TEXT[c] ?? 'error', content: content(ErrorBody) }]));
const ERROR_TEXT: Record<number, string> = {
  400: 'invalid input; the message names the field',
  401: 'no key, or a key that is unknown or revoked',
  404: 'no such run for this tenant',
  409: 'refused: the reason, and details.currentVersion for a review',
  413: 'body too large',
  429: 'over the tenant limit; see Retry-After and RateLimit-*',
  503: 'no worker answered or no LLM configured; see Retry-After',
};
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'the run id' };
const scheduleParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'the schedule id' };
const colParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'the collection id' };
const docParam = { name: 'docId', in: 'path', required: true, schema: { type: 'string' }, description: 'the document id' };
const keyHeader = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', maxLength: 200 },
  description: 'a retry with the same key gets the first answer',
};

export function openApiDocument(): Schema {
  const listParams = Object.entries((json(ListQuery, 'input').properties ?? {}) as Record<string, Schema>).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    schema,
  }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'deep-research',
      version: '1',
      description:
        'Deep research as a durable Temporal workflow: submit a question, review the plan, follow the run, read the cited report. ' +
        'Every /v1 route needs `Authorization: Bearer <key>`; the key decides the tenant.',
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths: {
      '/v1/research': {
        post: {
          summary: 'Start a research run',
          parameters: [keyHeader],
          requestBody: { required: true, content: content(SubmitBody, 'input') },
          responses: {
            '202': { description: 'started', content: content(Started) },
            '200': { description: 'the run this Idempotency-Key started before', content: content(Started) },
            ...errors(400, 401, 409, 413, 429, 503),
          },
        },
        get: {
          summary: "The tenant's runs: running first (newest first), then ended ones (most recently ended first)",
          parameters: listParams,
          responses: { '200': { description: 'a page of runs', content: content(RunList) }, ...errors(400, 401, 429) },
        },
      },
      '/v1/research/{id}': {
        get: {
          summary: 'Status, phase, plan, steps, usage, what the run waits for',
          parameters: [idParam],
          responses: { '200': { description: 'the run', content: content(ResearchView) }, ...errors(401, 404, 429, 503) },
        },
      },
      '/v1/research/{id}/events': {
        get: {
          summary: 'The run as server-sent events, resumable with Last-Event-ID',
          parameters: [
            idParam,
            { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'integer', minimum: 0 } },
            { name: 'after', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: 'as Last-Event-ID' },
          ],
          responses: {
            '200': {
              description:
                'event types: started, plan, phase, status, step, search, crawl, tool, verdict, usage, report, done; data is JSON with `at`',
              content: { 'text/event-stream': { schema: { type: 'string' } } },
            },
            ...errors(400, 401, 404, 429),
          },
        },
      },
      '/v1/research/{id}/plan/approve': {
        post: {
          summary: 'Approve the plan under review (Workflow Update approvePlan)',
          parameters: [idParam, keyHeader],
          requestBody: { required: true, content: content(ApproveBody, 'input') },
          responses: { '200': { description: 'approved', content: content(ReviewAnswered) }, ...errors(400, 401, 404, 409, 429, 503) },
        },
      },
      '/v1/research/{id}/plan/revise': {
        post: {
          summary: 'Send the plan back with feedback (Workflow Update revisePlan)',
          parameters: [idParam, keyHeader],
          requestBody: { required: true, content: content(ReviseBody, 'input') },
          responses: { '200': { description: 'revising', content: content(ReviewAnswered) }, ...errors(400, 401, 404, 409, 429, 503) },
        },
      },
      '/v1/research/{id}/clarification': {
        post: {
          summary: "Answer the coordinator's clarifying question (Workflow Update answerClarification)",
          parameters: [idParam, keyHeader],
          requestBody: { required: true, content: content(ClarificationBody, 'input') },
          responses: { '200': { description: 'taken', content: content(ClarificationAnswered) }, ...errors(400, 401, 404, 409, 429, 503) },
        },
      },
      '/v1/research/{id}/steer': {
        post: {
          summary:
            'Steer the running research (Workflow Update steer): guidance for every later model call, wrapUp, or add/drop/edit a step not yet started',
          parameters: [idParam, keyHeader],
          requestBody: { required: true, content: content(SteerBody, 'input') },
          responses: { '200': { description: 'taken', content: content(SteerAnswered) }, ...errors(400, 401, 404, 409, 429, 503) },
        },
      },
      '/v1/research/{id}/cancel': {
        post: {
          summary: 'Cancel the run and its steps',
          parameters: [idParam],
          responses: { '202': { description: 'cancellation requested', content: content(Accepted) }, ...errors(401, 404, 409, 429) },
        },
      },
      '/v1/research/{id}/report': {
        get: {
          summary: 'The report (a direct answer as a one-paragraph report): Markdown, JSON, self-contained HTML or PDF',
          parameters: [
            idParam,
            { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['md', 'markdown', 'json', 'html', 'pdf'] } },
          ],
          responses: {
            '200': {
              description: 'the report',
              content: {
                'text/markdown': { schema: { type: 'string' } },
                ...content(ReportJson),
                'text/html': { schema: { type: 'string' } },
                'application/pdf': { schema: { type: 'string', contentEncoding: 'binary' } },
              },
            },
            ...errors(400, 401, 404, 429),
          },
        },
      },
      '/v1/research/{id}/sources/{sourceId}': {
        get: {
          summary: 'One source the run retrieved: title, address and the evidence the run kept',
          parameters: [idParam, { name: 'sourceId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'the source', content: content(SourceView) }, ...errors(400, 401, 404, 429) },
        },
      },
      '/v1/research/{id}/artifacts': {
        get: {
          summary: 'Files the coder steps wrote',
          parameters: [idParam],
          responses: { '200': { description: 'the files', content: content(ArtifactList) }, ...errors(401, 404, 429) },
        },
      },
      '/v1/research/{id}/artifacts/{artifactId}': {
        get: {
          summary: 'One file, served nosniff with a strict CSP',
          parameters: [idParam, { name: 'artifactId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'the file' }, ...errors(401, 404, 429) },
        },
      },
      '/v1/schedules': {
        post: {
          summary:
            'Research that repeats (a Temporal Schedule): cron or every; a start is skipped while the previous run goes on; ' +
            'each report after the first starts with "What changed since <date>". Runs accept their plan unless options.autoAcceptPlan is false.',
          parameters: [keyHeader],
          requestBody: { required: true, content: content(ScheduleBody, 'input') },
          responses: {
            '201': { description: 'created', content: content(ScheduleView) },
            '200': { description: 'the Idempotency-Key matched an existing schedule', content: content(ScheduleView) },
            ...errors(400, 401, 404, 409, 429, 503),
          },
        },
        get: {
          summary: "The tenant's schedules",
          responses: { '200': { description: 'the schedules', content: content(ScheduleList) }, ...errors(401, 429) },
        },
      },
      '/v1/schedules/{id}': {
        get: {
          summary: 'One schedule: its state, next start times and recent runs',
          parameters: [scheduleParam],
          responses: { '200': { description: 'the schedule', content: content(ScheduleView) }, ...errors(400, 401, 404, 429) },
        },
        delete: {
          summary: 'Delete the schedule (runs it started go on)',
          parameters: [scheduleParam],
          responses: { '200': { description: 'deleted', content: content(Accepted) }, ...errors(400, 401, 404, 429) },
        },
      },
      '/v1/schedules/{id}/pause': {
        post: {
          summary: 'Pause the schedule (with an optional note)',
          parameters: [scheduleParam],
          requestBody: { required: false, content: content(ScheduleNote, 'input') },
          responses: { '200': { description: 'paused', content: content(ScheduleView) }, ...errors(400, 401, 404, 429) },
        },
      },
      '/v1/schedules/{id}/resume': {
        post: {
          summary: 'Resume a paused schedule',
          parameters: [scheduleParam],
          requestBody: { required: false, content: content(ScheduleNote, 'input') },
          responses: { '200': { description: 'resumed', content: content(ScheduleView) }, ...errors(400, 401, 404, 429) },
        },
      },
      '/v1/schedules/{id}/trigger': {
        post: {
          summary: 'Start a run now (skipped if one is still running), also while paused',
          parameters: [scheduleParam],
          responses: { '202': { description: 'triggered', content: content(ScheduleView) }, ...errors(400, 401, 404, 429) },
        },
      },
      '/v1/collections': {
        post: {
          summary: 'Create a collection for documents (language: a code such as en, de, or simple)',
          requestBody: { required: true, content: content(CreateCollectionBody, 'input') },
          responses: { '201': { description: 'created', content: content(CollectionView) }, ...errors(400, 401, 409, 429) },
        },
        get: {
          summary: "The tenant's collections",
          responses: {
            '200': { description: 'the collections', content: content(z.object({ collections: z.array(CollectionView) })) },
            ...errors(401, 429),
          },
        },
      },
      '/v1/collections/{id}': {
        get: {
          summary: 'One collection',
          parameters: [colParam],
          responses: { '200': { description: 'the collection', content: content(CollectionView) }, ...errors(400, 401, 404, 429) },
        },
        delete: {
          summary: 'Delete the collection, its documents and their chunks (ingestions in flight are cancelled)',
          parameters: [colParam],
          responses: { '200': { description: 'deleted' }, ...errors(400, 401, 404, 429) },
        },
      },
      '/v1/collections/{id}/documents': {
        post: {
          summary:
            'Add a document: multipart/form-data with the field `file` (and optional `name`), or JSON { url }. Ingested by a workflow.',
          parameters: [colParam],
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  properties: { file: { type: 'string', contentEncoding: 'binary' }, name: { type: 'string' } },
                  required: ['file'],
                },
              },
              ...content(AddDocumentUrlBody, 'input'),
            },
          },
          responses: {
            '202': { description: 'stored and queued for ingestion', content: content(DocumentView) },
            '200': { description: 'the same file or URL is already in the collection (duplicate: true)', content: content(DocumentView) },
            '413': { description: 'over KB_MAX_FILE_BYTES or KB_MAX_DOCUMENTS', content: content(ErrorBody) },
            '415': { description: 'a format the knowledge base does not read', content: content(ErrorBody) },
            ...errors(400, 401, 404, 429, 503),
          },
        },
        get: {
          summary: "The collection's documents with their ingestion progress",
          parameters: [colParam],
          responses: {
            '200': { description: 'the documents', content: content(z.object({ documents: z.array(DocumentView) })) },
            ...errors(400, 401, 404, 429),
          },
        },
      },
      '/v1/collections/{id}/documents/{docId}': {
        get: {
          summary: 'One document: status, chunks, embedded, pages, error; ?include=chunks adds its passages',
          parameters: [colParam, docParam, { name: 'include', in: 'query', required: false, schema: { type: 'string', enum: ['chunks'] } }],
          responses: { '200': { description: 'the document', content: content(DocumentView) }, ...errors(400, 401, 404, 429) },
        },
        delete: {
          summary: 'Stop its ingestion and delete it with its chunks',
          parameters: [colParam, docParam],
          responses: { '200': { description: 'deleted' }, ...errors(400, 401, 404, 429) },
        },
      },
      '/v1/collections/{id}/documents/{docId}/file': {
        get: {
          summary: 'The original file, as a download',
          parameters: [colParam, docParam],
          responses: { '200': { description: 'the file' }, ...errors(400, 401, 404, 429) },
        },
      },
      '/v1/sessions': {
        post: {
          summary: 'A session: runs started with its sessionId see its earlier questions and reports',
          requestBody: { required: false, content: content(CreateSessionBody, 'input') },
          responses: { '201': { description: 'created', content: content(SessionView) }, ...errors(400, 401, 429) },
        },
      },
      '/v1/sessions/{id}': {
        get: {
          summary: 'The session and its runs in order',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'the session id' }],
          responses: { '200': { description: 'the session', content: content(SessionView) }, ...errors(400, 401, 404, 429) },
        },
      },
      '/healthz': { get: { summary: 'Liveness', security: [], responses: { '200': { description: 'alive' } } } },
      '/readyz': { get: { summary: 'Readiness of Temporal and PostgreSQL', security: [], responses: { '200': { description: 'ready' } } } },
    },
  };
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** /docs: every operation with its parameters, body and answers, from the same document. */
export function docsPage(doc: Schema): string {
  const paths = doc.paths as Record<string, Record<string, Schema>>;
  const ops = Object.entries(paths).flatMap(([p, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const params = ((op.parameters as Schema[] | undefined) ?? [])
        .map(
          (x) =>
            `<li><code>${esc(String(x.name))}</code> (${esc(String(x.in))})${x.description ? ` — ${esc(String(x.description))}` : ''}</li>`,
        )
        .join('');
      const body = (op.requestBody as { content: Record<string, { schema: unknown }> } | undefined)?.content['application/json']?.schema;
      const answers = Object.entries(op.responses as Record<string, Schema>)
        .map(([code, r]) => {
          const schema = (r.content as Record<string, { schema: unknown }> | undefined)?.['application/json']?.schema;
          return `<li><strong>${esc(code)}</strong> ${esc(String(r.description))}${
            schema && !code.startsWith('4') && !code.startsWith('5') ? `<pre>${esc(JSON.stringify(schema, null, 2))}</pre>` : ''
          }</li>`;
        })
        .join('');
      return `<section><h2><span class="m">${method.toUpperCase()}</span> <code>${esc(p)}</code></h2><p>${esc(String(op.summary ?? ''))}</p>${
        params ? `<h3>Parameters</h3><ul>${params}</ul>` : ''
      }${body ? `<h3>Body</h3><pre>${esc(JSON.stringify(body, null, 2))}</pre>` : ''}<h3>Answers</h3><ul>${answers}</ul></section>`;
    }),
  );
  const info = doc.info as { title: string; description: string };
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} API</title><style>
body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
section{border-top:1px solid #ccc;padding:.5rem 0}h2{font-size:1.1rem}.m{background:#1d4ed8;color:#fff;padding:.1rem .4rem;border-radius:.25rem;font-size:.9rem}
pre{background:#f4f4f5;padding:.5rem;overflow:auto;font-size:.8rem;max-height:20rem}code{font-size:.95em}
</style></head><body><h1>${esc(info.title)} API</h1><p>${esc(info.description)}</p><p>Machine-readable: <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1).</p>
${ops.join('\n')}</body></html>`;
}
