// The OpenAPI 3.1 document of the HTTP API, assembled route by route from the declarations beside
// the handlers (src/api/route-spec.ts; their zod schemas live in src/api/contract.ts and
// src/shared), and a readable page of it at /docs (no script, no outside asset).
import { z } from 'zod';
import { ErrorBody } from './contract';
import type { Content, RouteSpec, RouteTable } from './route-spec';
import { CHAT_ROUTES } from './routes/chat-completions';
import { HEALTH_ROUTES } from './routes/health';
import { KEY_ROUTES } from './routes/keys';
import { KNOWLEDGE_ROUTES } from './routes/knowledge';
import { MEMORY_ROUTES } from './routes/memory';
import { RESEARCH_ROUTES } from './routes/research';
import { RESULT_ROUTES } from './routes/results';
import { VERSION_ROUTES } from './routes/versions';
import { SCHEDULE_ROUTES } from './routes/schedules';
import { SEARCH_PREFERENCE_ROUTES } from './routes/search-preferences';
import { MCP_ROUTES } from '../mcp/http';

type Schema = Record<string, unknown>;

/** Every route module's declarations with where app.ts mounts its router. */
export const MOUNTED_ROUTES: { prefix: string; routes: RouteTable }[] = [
  { prefix: '/v1', routes: RESEARCH_ROUTES },
  { prefix: '/v1', routes: RESULT_ROUTES },
  { prefix: '/v1', routes: VERSION_ROUTES },
  { prefix: '/v1', routes: SCHEDULE_ROUTES },
  { prefix: '/v1', routes: KNOWLEDGE_ROUTES },
  { prefix: '/v1', routes: SEARCH_PREFERENCE_ROUTES },
  { prefix: '/v1', routes: KEY_ROUTES },
  { prefix: '/v1', routes: MEMORY_ROUTES },
  { prefix: '/v1', routes: MCP_ROUTES },
  { prefix: '/v1', routes: CHAT_ROUTES },
  { prefix: '', routes: HEALTH_ROUTES },
];

const ERROR_TEXT: Record<number, string> = {
  400: 'invalid input; the message names the field',
  401: 'no key, or a key that is unknown or revoked',
  403: "over one of the tenant's quotas (details.quota names it), or another user's memory or key setting, which only an admin key of the tenant acts on",
  404: 'not found for this tenant: the run, or what the request names (a collection, a session, a schedule)',
  409: 'refused: the reason, and details.currentVersion for a review',
  413: 'body too large',
  429: "over the tenant's rate limit or a quota of what it does at once (details say which); see Retry-After and RateLimit-*",
  503: 'no worker answered or no LLM configured; see Retry-After',
};

/** JSON Schema of a zod schema: `input` for what a client sends, `output` for what it gets. */
function json(s: z.ZodType, io: 'input' | 'output'): Schema {
  const out = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Schema;
  delete out.$schema;
  return out;
}

function content(c: Content, io: 'input' | 'output'): Schema {
  const byType = c instanceof z.ZodType ? { 'application/json': c } : c;
  return Object.fromEntries(Object.entries(byType).map(([type, s]) => [type, { schema: json(s, io) }]));
}

/** `/research/:id` below `/v1` as OpenAPI writes it: `/v1/research/{id}`. */
export function openApiPath(prefix: string, path: string): string {
  return `${prefix}${path.replace(/:(\w+)/g, '{$1}')}`;
}

/** One parameter per property of `params`; a property's description moves up to the parameter. */
function parametersIn(where: 'path' | 'query' | 'header', params: z.ZodObject): Schema[] {
  const s = json(params, 'input');
  const required = new Set((s.required as string[] | undefined) ?? []);
  return Object.entries((s.properties ?? {}) as Record<string, Schema>).map(([name, { description, ...schema }]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema,
    ...(description === undefined ? {} : { description }),
  }));
}

/** The parameters of a route; a path parameter the path names and the declaration does not (or the reverse) is a bug. */
function parameters(spec: RouteSpec): Schema[] {
  const named = [...spec.path.matchAll(/:(\w+)/g)].map((m) => m[1]).sort();
  const declared = Object.keys(spec.params?.path?.shape ?? {}).sort();
  if (named.join() !== declared.join()) throw new Error(`${spec.path}: path parameters ${named} but declared ${declared}`);
  const { path, query, header } = spec.params ?? {};
  return [
    ...(path ? parametersIn('path', path) : []),
    ...(query ? parametersIn('query', query) : []),
    ...(header ? parametersIn('header', header) : []),
  ];
}

function takesJson(c: Content): boolean {
  return c instanceof z.ZodType || 'application/json' in c;
}

function responses(spec: RouteSpec): Schema {
  const declared = Object.entries(spec.responses).map(([status, a]) => [
    status,
    { description: a.description, ...(a.content ? { content: content(a.content, 'output') } : {}) },
  ]);
  // Every JSON body goes through the body parser, which answers 413 over its limit (src/api/app.ts).
  const tooLarge = spec.body && takesJson(spec.body.content) && !(413 in spec.responses) ? [413] : [];
  const errors = [...new Set([...(spec.errors ?? []), ...tooLarge])]
    .sort((a, b) => a - b)
    .map((status) => [String(status), { description: ERROR_TEXT[status] ?? 'error', content: content(ErrorBody, 'output') }]);
  return Object.fromEntries([...declared, ...errors]);
}

function operation(spec: RouteSpec): Schema {
  const params = parameters(spec);
  return {
    summary: spec.summary,
    ...(spec.public ? { security: [] } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(spec.body ? { requestBody: { required: spec.body.required, content: content(spec.body.content, 'input') } } : {}),
    responses: responses(spec),
  };
}

function paths(): Record<string, Record<string, Schema>> {
  const out: Record<string, Record<string, Schema>> = {};
  for (const { prefix, routes } of MOUNTED_ROUTES) {
    for (const spec of Object.values(routes)) {
      const methods = (out[openApiPath(prefix, spec.path)] ??= {});
      if (methods[spec.method]) throw new Error(`${spec.method.toUpperCase()} ${prefix}${spec.path} is declared twice`);
      methods[spec.method] = operation(spec);
    }
  }
  return out;
}

export function openApiDocument(): Schema {
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
    paths: paths(),
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
