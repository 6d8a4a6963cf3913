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
  auth: {
    envKeys: [
      { key: 'k-0123456789abcdef', tenant: 't' },
      // A tenant of its own for the tests of refusals, so that the reads above leave them their rate.
      { key: 'k-refusals-0123456789', tenant: 'r' },
    ],
    table: { ownerOf: async () => undefined },
    open: false,
  },
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

/** Served and rightly not in the document: the web page (and its icon), the metrics, the document itself. */
const NOT_API = ['GET /', 'GET /app.js', 'GET /app.css', 'GET /favicon.svg', 'GET /metrics', 'GET /v1/openapi.json', 'GET /docs'];

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

  it('answers a method a known path does not serve with 405 and Allow, OPTIONS with every method, an unknown path with 404', async () => {
    const key = { authorization: 'Bearer k-0123456789abcdef' };
    for (const [method, path, allow] of [
      ['TRACE', '/v1/research', 'POST, GET, HEAD, OPTIONS'],
      ['PUT', '/v1/research/research-1/cancel', 'POST, OPTIONS'],
      ['DELETE', '/v1/collections', 'POST, GET, HEAD, OPTIONS'],
      ['TRACE', '/healthz', 'GET, HEAD, OPTIONS'],
      ['POST', '/metrics', 'GET, HEAD, OPTIONS'],
      ['PATCH', '/V1/Research/', 'POST, GET, HEAD, OPTIONS'],
    ] as const) {
      const res = await request(app)[method === 'TRACE' ? 'trace' : (method.toLowerCase() as 'put')](path).set(key);
      expect({ method, path, status: res.status, allow: res.headers.allow }).toEqual({ method, path, status: 405, allow });
      if (method !== 'TRACE') expect(res.body.error.code).toBe('method_not_allowed');
    }
    await request(app).trace('/v1/nothing-here').set(key).expect(404);
    // A path served by two routers (the report: GET in one, POST in another): OPTIONS names both.
    const options = await request(app).options('/v1/research/research-1/report').expect(204);
    expect(options.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
  });

  it('names a bad path parameter, query parameter or header as such, not as the body', async () => {
    const key = { authorization: 'Bearer k-0123456789abcdef' };
    const path = await request(app).get('/v1/research/bad%20id').set(key).expect(400);
    expect(path.body.error.message).toMatch(/^path parameter id: /);
    expect(path.body.error.details).toEqual([{ path: 'id', in: 'path', message: expect.any(String) }]);
    const query = await request(app).get('/v1/research/research-1/report?format=gif').set(key).expect(400);
    expect(query.body.error.message).toMatch(/^query parameter format: /);
    const doc = await request(app).get('/v1/collections/C0123456789abcdef/documents/D0123456789abcdef?include=all').set(key).expect(400);
    expect(doc.body.error.message).toMatch(/^query parameter include: /);
    const header = await request(app).get('/v1/research/research-1/events').set(key).set('Last-Event-ID', 'x').expect(400);
    expect(header.body.error.message).toMatch(/^header parameter Last-Event-ID: /);
    for (const res of [path, query, doc, header]) expect(res.body.error.message).not.toMatch(/body/);
  });

  it('refuses a blank event id, which Number() would read as 0, "from the start"', async () => {
    const key = { authorization: 'Bearer k-refusals-0123456789' };
    const header = await request(app).get('/v1/research/research-1/events').set(key).set('Last-Event-ID', '').expect(400);
    expect(header.body.error.message).toMatch(/^header parameter Last-Event-ID: /);
    const query = await request(app).get('/v1/research/research-1/events?after=%20').set(key).expect(400);
    expect(query.body.error.message).toMatch(/^query parameter after: /);
    // The header wins when both come, but a bad query parameter is refused all the same.
    const both = await request(app).get('/v1/research/research-1/events?after=1e30').set(key).set('Last-Event-ID', '3').expect(400);
    expect(both.body.error.message).toMatch(/^query parameter after: /);
  });

  it('bounds a text field by what the client sent, as the document does, not by what is left once trimmed', async () => {
    const key = { authorization: 'Bearer k-refusals-0123456789' };
    const res = await request(app)
      .post('/v1/sessions')
      .set(key)
      .send({ title: `${'x'.repeat(290)}${' '.repeat(20)}` })
      .expect(400);
    expect(res.body.error.message).toMatch(/title is longer than 300 characters/);
  });

  it('lists 413 for every operation with a JSON body, which the body parser refuses over its limit', async () => {
    const doc = (await request(app).get('/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { requestBody?: { content: object }; responses: object }>>;
    };
    const withJson = Object.values(doc.paths)
      .flatMap((ops) => Object.values(ops))
      .filter((op) => op.requestBody && 'application/json' in op.requestBody.content);
    expect(withJson.length).toBeGreaterThan(10);
    for (const op of withJson) expect(Object.keys(op.responses)).toContain('413');
    const key = { authorization: 'Bearer k-refusals-0123456789' };
    const big = await request(app)
      .post('/v1/research/research-1/steer')
      .set(key)
      .send({ guidance: 'x'.repeat(70_000) })
      .expect(413);
    expect(big.body.error.code).toBe('payload_too_large');
  });

  it("answers the OpenAI-compatible routes' refusals in OpenAI's shape, a body that is not JSON included", async () => {
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', 'Bearer k-0123456789abcdef')
      .set('content-type', 'application/json')
      .send('{"model": ')
      .expect(400);
    expect(res.body).toEqual({
      error: { message: expect.stringMatching(/not valid JSON/), type: 'invalid_request_error', param: null, code: 'invalid_json' },
    });
    const noKey = await request(app).get('/v1/models').expect(401);
    expect(noKey.body.error).toMatchObject({ type: 'authentication_error', code: 'missing_key' });
  });
});
