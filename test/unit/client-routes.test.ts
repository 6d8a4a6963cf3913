// One client: every named method of the typed client (src/client) sends a method and path that a
// route of the API declares (the OpenAPI document is assembled from the routes' own specs, so a
// path the client makes up, or a route that moved, fails here), every method is called below, and
// the web page, the CLI and the MCP server write no API path of their own: they call the client.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/openapi';
import { createClient, type Client } from '../../src/client';
import { ROOT } from '../support/spawn';

type Sent = { method: string; path: string };

/** A client whose every request is recorded and answered 200 with an empty JSON object. */
function recordingClient(): { client: Client; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetchStub = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    sent.push({ method: (init?.method ?? 'GET').toLowerCase(), path: url.pathname });
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { client: createClient({ baseUrl: 'http://api.test', key: 'k', fetch: fetchStub }), sent };
}

/** Each method with arguments of its kind: every function of the client is in this table. */
const CALLS: Record<string, (c: Client) => Promise<unknown>> = {
  'research.start': (c) => c.research.start({ question: 'q' }),
  'research.get': (c) => c.research.get('r1'),
  'research.list': (c) => c.research.list({ limit: 1 }),
  'research.approve': (c) => c.research.approve('r1', 1),
  'research.revise': (c) => c.research.revise('r1', 1, 'more'),
  'research.answer': (c) => c.research.answer('r1', 'yes'),
  'research.steer': (c) => c.research.steer('r1', { kind: 'wrapUp' }),
  'research.cancel': (c) => c.research.cancel('r1'),
  'research.report': (c) => c.research.report('r1'),
  'research.reportJson': (c) => c.research.reportJson('r1', 2),
  'research.reportFile': (c) => c.research.reportFile('r1', 'pdf'),
  'research.rewrite': (c) => c.research.rewrite('r1', { reportLength: 'brief' }),
  'research.versions': (c) => c.research.versions('r1'),
  'research.source': (c) => c.research.source('r1', 'S0123abcd'),
  'research.artifacts': (c) => c.research.artifacts('r1'),
  'research.artifact': (c) => c.research.artifact('r1', 'a1'),
  'collections.list': (c) => c.collections.list(),
  'collections.get': (c) => c.collections.get('C1'),
  'collections.create': (c) => c.collections.create({ name: 'n' }),
  'collections.delete': (c) => c.collections.delete('C1'),
  'collections.documents': (c) => c.collections.documents('C1'),
  'collections.document': (c) => c.collections.document('C1', 'D1', { chunks: true }),
  'collections.upload': (c) => c.collections.upload('C1', new Blob(['x']), 'x.txt'),
  'collections.addUrl': (c) => c.collections.addUrl('C1', 'https://example.com/'),
  'collections.documentFile': (c) => c.collections.documentFile('C1', 'D1'),
  'collections.deleteDocument': (c) => c.collections.deleteDocument('C1', 'D1'),
  'collections.search': (c) => c.collections.search('C1', { query: 'q' }),
  'sessions.list': (c) => c.sessions.list(),
  'sessions.create': (c) => c.sessions.create('t'),
  'sessions.get': (c) => c.sessions.get('s1'),
  'schedules.list': (c) => c.schedules.list(),
  'schedules.get': (c) => c.schedules.get('schedule-1'),
  'schedules.create': (c) => c.schedules.create({ question: 'q', every: '1d' }),
  'schedules.pause': (c) => c.schedules.pause('schedule-1', 'why'),
  'schedules.resume': (c) => c.schedules.resume('schedule-1'),
  'schedules.trigger': (c) => c.schedules.trigger('schedule-1'),
  'schedules.delete': (c) => c.schedules.delete('schedule-1'),
  'keys.list': (c) => c.keys.list(),
  'keys.revoke': (c) => c.keys.revoke('k1'),
  'keys.setMemory': (c) => c.keys.setMemory('k1', false),
  'memory.list': (c) => c.memory.list(),
  'memory.edit': (c) => c.memory.edit('f1', { text: 't' }),
  'memory.delete': (c) => c.memory.delete('f1'),
  'memory.forgetAll': (c) => c.memory.forgetAll('u1'),
  'searchPreferences.get': (c) => c.searchPreferences.get(),
  'searchPreferences.put': (c) => c.searchPreferences.put({}),
  // A link an answer gave, followed as it is; checked against the routes like the others.
  download: (c) => c.download('/v1/research/r1/artifacts/a1'),
};
/** Not requests of their own: the event stream has its own test (test/api/client.test.ts), paths are strings. */
const NOT_REQUESTS = new Set(['events', 'paths.documents', 'paths.artifacts']);

/** The client's functions by dotted name. */
function functionsOf(o: object, prefix = ''): string[] {
  return Object.entries(o).flatMap(([k, v]) =>
    typeof v === 'function' ? [`${prefix}${k}`] : v && typeof v === 'object' ? functionsOf(v as object, `${prefix}${k}.`) : [],
  );
}

/** The API's routes as (method, path pattern), from the OpenAPI document the route specs make. */
function declaredRoutes(): { method: string; pattern: RegExp; path: string }[] {
  const doc = openApiDocument() as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops).map((method) => ({ method, path: p, pattern: new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`) })),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((f) => {
    const rel = path.join(dir, f);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return sourceFiles(rel);
    return /\.(ts|tsx)$/.test(f) ? [rel] : [];
  });
}

/** String and template literals of a file that start as an API path. */
function apiPathsIn(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    const head =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
        ? node.text
        : ts.isTemplateExpression(node)
          ? node.head.text
          : undefined;
    if (head !== undefined && /^\/v1(\/|$|\?)/.test(head))
      out.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${head}`);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe('one client', () => {
  it('calls every method of the client here, and each sends a method and path a route declares', async () => {
    const { client, sent } = recordingClient();
    expect(
      functionsOf(client)
        .filter((n) => !NOT_REQUESTS.has(n))
        .sort(),
    ).toEqual(Object.keys(CALLS).sort());
    const routes = declaredRoutes();
    for (const [name, call] of Object.entries(CALLS)) {
      const before = sent.length;
      await call(client);
      expect(sent.length, `${name} sent one request`).toBe(before + 1);
      const { method, path: p } = sent.at(-1)!;
      expect(
        routes.some((r) => r.method === method && r.pattern.test(p)),
        `${name}: ${method.toUpperCase()} ${p} is no route of the API`,
      ).toBe(true);
    }
  });

  it('would catch a path no route declares', () => {
    const routes = declaredRoutes();
    expect(routes.some((r) => r.method === 'get' && r.pattern.test('/v1/research/r1/plan'))).toBe(false);
    expect(routes.some((r) => r.method === 'post' && r.pattern.test('/v1/research/r1/plan/approve'))).toBe(true);
  });

  it('leaves API paths to the client: the web page, the CLI and the MCP server write none', () => {
    const files = [...sourceFiles('web/src'), ...sourceFiles('src/cli'), ...sourceFiles('src/mcp'), 'src/cli.ts'];
    expect(files.length).toBeGreaterThan(30);
    expect(files.flatMap(apiPathsIn)).toEqual([]);
    // The scan sees a path where one is written.
    expect(apiPathsIn('src/client/index.ts').length).toBeGreaterThan(5);
  });
});
