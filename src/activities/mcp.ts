// MCP tools: servers listed in a JSON file (MCP_CONFIG), over stdio or streamable HTTP, assigned
// per role, discovered when a step starts and called as activities. Each call opens its own
// session, so a retried activity needs no state from an earlier attempt.
import { readFileSync } from 'node:fs';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';
import { LLM_ROLES } from '../shared/constants';
import { ErrorType } from '../shared/errors';
import { summarize } from '../shared/plain';

const ServerBase = z.object({
  roles: z.array(z.enum(LLM_ROLES)).default(['researcher']),
  timeoutMs: z.number().int().positive().default(30_000),
});
const StdioServer = ServerBase.extend({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
}).strict();
const HttpServer = ServerBase.extend({ url: z.url(), headers: z.record(z.string(), z.string()).default({}) }).strict();
export const McpConfig = z.object({
  servers: z.record(
    z.string().regex(/^[a-zA-Z0-9_-]{1,24}$/, 'server names are 1-24 letters, digits, "_" or "-"'),
    z.union([StdioServer, HttpServer]),
  ),
});
export type McpConfig = z.infer<typeof McpConfig>;

export interface McpToolSpec {
  server: string;
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export function loadMcpConfig(path: string | undefined): McpConfig {
  if (!path) return { servers: {} };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`MCP_CONFIG=${path} cannot be read as JSON: ${(err as Error).message}`);
  }
  const parsed = McpConfig.safeParse(raw);
  if (!parsed.success)
    throw new Error(`MCP_CONFIG=${path} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** The OpenAI function name of an MCP tool: mcp__<server>__<tool>, within 64 characters. */
export function mcpFunctionName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, 64);
}

async function withClient<T>(
  name: string,
  server: McpConfig['servers'][string],
  envPath: string,
  fn: (c: Client) => Promise<T>,
): Promise<T> {
  // The MCP SDK is loaded with the first server asked (most workers have none).
  const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const client = new Client({ name: 'deep-research', version: '0.1.0' });
  const transport =
    'command' in server
      ? new StdioClientTransport({
          command: server.command,
          args: server.args,
          env: { PATH: envPath, ...server.env },
          stderr: 'ignore',
          ...(server.cwd ? { cwd: server.cwd } : {}),
        })
      : new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } });
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(`MCP server ${name} did not start or answer: ${(err as Error).message}`);
  }
  try {
    return await fn(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The tools of the MCP servers a role may use, and the servers that could not be asked. */
export interface McpDiscovery {
  tools: McpToolSpec[];
  errors: string[];
}

export function createMcpActivities(deps: {
  config: McpConfig;
  envPath: string;
  writeToolResult: (input: {
    researchId: string;
    convKey: string;
    seq: number;
    toolCallId: string;
    text: string;
  }) => Promise<{ chars: number }>;
}) {
  async function discoverMcpTools(input: { role: string }): Promise<McpDiscovery> {
    const tools: McpToolSpec[] = [];
    const errors: string[] = [];
    for (const [name, server] of Object.entries(deps.config.servers)) {
      if (!(server.roles as string[]).includes(input.role)) continue;
      // Run as a local activity (no heartbeats there) or as a regular one.
      if (!Context.current().info.isLocal) Context.current().heartbeat({ server: name });
      try {
        const listed = await withClient(name, server, deps.envPath, (c) => c.listTools(undefined, { timeout: server.timeoutMs }));
        for (const t of listed.tools) {
          tools.push({
            server: name,
            tool: t.name,
            description: summarize(t.description ?? t.name, 300),
            inputSchema: t.inputSchema as Record<string, unknown>,
          });
        }
      } catch (err) {
        errors.push(`${name}: ${(err as Error).message}`);
      }
    }
    return { tools, errors };
  }

  async function callMcpTool(input: {
    researchId: string;
    convKey: string;
    seq: number;
    toolCallId: string;
    server: string;
    tool: string;
    args: Record<string, unknown>;
  }): Promise<{ isError: boolean; chars: number }> {
    const server = deps.config.servers[input.server];
    if (!server) throw ApplicationFailure.nonRetryable(`no MCP server named ${input.server} is configured`, ErrorType.McpNotConfigured);
    const result = await withClient(input.server, server, deps.envPath, (c) =>
      c.callTool({ name: input.tool, arguments: input.args }, undefined, {
        timeout: server.timeoutMs,
        signal: Context.current().cancellationSignal,
      }),
    );
    const parts = (result.content as { type: string; text?: string }[] | undefined) ?? [];
    const text = parts.map((p) => (p.type === 'text' ? (p.text ?? '') : `[${p.type} content]`)).join('\n') || '(no output)';
    const isError = result.isError === true;
    const written = await deps.writeToolResult({
      researchId: input.researchId,
      convKey: input.convKey,
      seq: input.seq,
      toolCallId: input.toolCallId,
      text: isError ? `Tool error: ${text}` : text,
    });
    return { isError, chars: written.chars };
  }

  return { discoverMcpTools, callMcpTool };
}
