// POST /v1/mcp: the MCP server over Streamable HTTP, inside the API process, behind the same
// authentication as every /v1 route. Stateless: each request gets its own server and transport,
// so any API replica answers any request. The tools call this API back on the address the request
// came in on, with the request's key (or, on an open API, its tenant): the tenant is the caller's,
// checked by the same middleware as a direct call.
import type { Request, Response } from 'express';
import { Router } from 'express';
import { z } from 'zod';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { apiClient } from '../cli/api-client';
import { route, type RouteTable } from '../api/route-spec';
import { createMcpServer } from './server';

const JsonRpc = z.looseObject({
  jsonrpc: z.literal('2.0'),
  method: z.string().optional(),
  id: z.union([z.string(), z.number()]).optional(),
});
/** What the MCP SDK answers itself (a 406 for an Accept without both JSON and event streams): a JSON-RPC error. */
const JsonRpcError = z.looseObject({
  jsonrpc: z.literal('2.0'),
  error: z.looseObject({ code: z.number().int(), message: z.string() }),
  id: z.union([z.string(), z.number(), z.null()]),
});
const NO_SESSIONS = 'this MCP server is stateless: POST every message; there is no session stream to GET or session to DELETE';

export const MCP_ROUTES = {
  mcp: {
    method: 'post',
    path: '/mcp',
    summary: 'The MCP server (Streamable HTTP, stateless): tools to start, follow, review, steer and read runs; reports as resources',
    body: { content: z.union([JsonRpc, z.array(JsonRpc)]), required: true },
    responses: {
      200: {
        description: 'the JSON-RPC answer, as JSON or as a stream',
        content: { 'application/json': z.unknown(), 'text/event-stream': z.string() },
      },
      202: { description: 'a notification or response was taken' },
      406: { description: 'the Accept header must name both application/json and text/event-stream', content: JsonRpcError },
    },
    errors: [400, 401, 429],
  },
  mcpStream: {
    method: 'get',
    path: '/mcp',
    summary: 'Not served: the MCP server is stateless (405)',
    responses: { 405: { description: NO_SESSIONS, content: JsonRpcError } },
    errors: [401, 429],
  },
  mcpEnd: {
    method: 'delete',
    path: '/mcp',
    summary: 'Not served: the MCP server is stateless (405)',
    responses: { 405: { description: NO_SESSIONS, content: JsonRpcError } },
    errors: [401, 429],
  },
} satisfies RouteTable;

/** The API itself, as reached by this request: the tools' calls take the same way in. */
function selfUrl(req: Request): string {
  const host = req.socket.localAddress ?? '127.0.0.1';
  const plain = host.startsWith('::ffff:') ? host.slice(7) : host;
  return `http://${plain.includes(':') ? `[${plain}]` : plain}:${req.socket.localPort}`;
}

function keyOf(req: Request): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
}

function notServed(_req: Request, res: Response): void {
  res
    .status(405)
    .set('Allow', 'POST')
    .json({ jsonrpc: '2.0', error: { code: -32000, message: NO_SESSIONS }, id: null });
}

export function mcpRoutes(): Router {
  const r = Router();
  route(r, MCP_ROUTES.mcp, async (req, res) => {
    const client = apiClient({ api: selfUrl(req), key: keyOf(req), tenant: String(res.locals.tenant) });
    const server = createMcpServer(client);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  route(r, MCP_ROUTES.mcpStream, notServed);
  route(r, MCP_ROUTES.mcpEnd, notServed);
  return r;
}
