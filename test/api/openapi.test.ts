// The OpenAPI document: public, valid OpenAPI 3.1, generated from the schemas the routes use, and
// naming every route the API serves and nothing else (so the document and the routes cannot drift apart).
import { Validator } from '@seriousme/openapi-schema-validator';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app';
import type { ResearchService } from '../../src/api/research-service';
import type { KnowledgeService } from '../../src/api/knowledge-service';
import type { Retriever } from '../../src/activities/knowledge/retrieve';
import type { ScheduleService } from '../../src/api/schedule-service';
import { createLogger } from '../../src/infra/logger';
import type { ApiKeysTable, MemoryTable, SearchPreferencesTable } from '../../src/activities/store';

const app = createApp({
  research: {} as ResearchService,
  schedules: {} as ScheduleService,
  knowledge: {
    service: {} as KnowledgeService,
    maxFileBytes: 1_000,
    retrieve: (async () => ({ chunks: [], vectors: 'off' })) as Retriever,
  },
  searchPreferences: { preferences: {} as SearchPreferencesTable, configuredProviders: ['searxng'] },
  keys: {} as ApiKeysTable,
  memory: {} as MemoryTable,
  events: { after: async () => [] },
  auth: { envKeys: [{ key: 'k-0123456789abcdef', tenant: 't' }], table: { ownerOf: async () => undefined }, open: false },
  rateLimits: { submits: 10, reads: 10 },
  readiness: {},
  log: createLogger('error'),
});

interface RouterLayer {
  rawPath?: string;
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
}

/** Every route the Express app answers, as OpenAPI writes them ("GET /v1/research/{id}"). */
function servedRoutes(): string[] {
  const out: string[] = [];
  const walk = (stack: RouterLayer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const m of Object.keys(layer.route.methods))
          out.push(`${m.toUpperCase()} ${prefix}${layer.route.path.replace(/:(\w+)/g, '{$1}')}`);
      } else if (layer.handle?.stack) walk(layer.handle.stack, `${prefix}${layer.rawPath === '/' ? '' : (layer.rawPath ?? '')}`);
    }
  };
  walk((app as unknown as { router: { stack: RouterLayer[] } }).router.stack, '');
  return out;
}

/** Served and rightly not in the document: the web page, the metrics, the document itself. */
const NOT_API = ['GET /', 'GET /app.js', 'GET /app.css', 'GET /metrics', 'GET /v1/openapi.json', 'GET /docs'];

describe('OpenAPI', () => {
  it('serves a valid OpenAPI 3.1 document without a key', async () => {
    const res = await request(app).get('/v1/openapi.json').expect(200);
    expect(res.body.openapi).toBe('3.1.0');
    const result = await new Validator().validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes every route the API serves and serves every route it describes, with the request schemas the routes validate with', async () => {
    const doc = (await request(app).get('/v1/openapi.json')).body as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    const documented = Object.entries(doc.paths).flatMap(([p, ms]) => Object.keys(ms).map((m) => `${m.toUpperCase()} ${p}`));
    const served = servedRoutes();
    // The walk reaches every router, at its mount point.
    const samples = [
      'POST /v1/research',
      'DELETE /v1/schedules/{id}',
      'POST /v1/collections/{id}/documents',
      'GET /v1/sessions/{id}',
      'GET /readyz',
    ];
    expect(served).toEqual(expect.arrayContaining(samples));
    expect(new Set(served).size).toBe(served.length);
    expect(served.filter((r) => !NOT_API.includes(r)).sort()).toEqual([...documented].sort());
    expect(served).toEqual(expect.arrayContaining(NOT_API));
    const submit = doc.paths['/v1/research']!.post!.requestBody as {
      content: { 'application/json': { schema: { properties: Record<string, unknown>; required: string[] } } };
    };
    expect(submit.content['application/json'].schema.required).toEqual(['question']);
    expect(Object.keys(submit.content['application/json'].schema.properties)).toEqual(['question', 'options', 'sessionId', 'userId']);
  });

  it('lists every report format, Word and slides included, with its media type', async () => {
    const doc = (await request(app).get('/v1/openapi.json')).body as {
      paths: Record<
        string,
        { get: { parameters: { name: string; schema: { enum?: string[] } }[]; responses: Record<string, { content: object }> } }
      >;
    };
    const report = doc.paths['/v1/research/{id}/report']!.get;
    expect(report.parameters.find((p) => p.name === 'format')!.schema.enum).toEqual([
      'markdown',
      'md',
      'json',
      'html',
      'pdf',
      'docx',
      'pptx',
    ]);
    expect(Object.keys(report.responses['200']!.content)).toEqual([
      'text/markdown',
      'application/json',
      'text/html',
      'application/pdf',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    ]);
  });

  it('renders a readable page at /docs with a strict CSP and no script', async () => {
    const res = await request(app).get('/docs').expect(200);
    expect(res.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(res.text).toMatch(/<h2><span class="m">POST<\/span> <code>\/v1\/research\/\{id\}\/plan\/approve<\/code><\/h2>/);
    expect(res.text).not.toMatch(/<script/i);
  });
});
