// `deep-research mcp`: the MCP server on stdin/stdout for a desktop client (Claude Desktop, Cursor)
// that starts it as a child process. It talks to a running API with --api / --key like every
// client command, so the API's key decides the tenant. stdout carries only MCP messages.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ApiClient } from '../cli/api-client';
import { createMcpServer } from './server';

/** Serves until stdin closes. */
export async function serveStdio(client: ApiClient): Promise<void> {
  const server = createMcpServer(client);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
