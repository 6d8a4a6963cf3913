// A tiny MCP server on stdio for the tests: one tool that looks up installed capacity.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const CAPACITY_GW: Record<string, number> = { germany: 82, spain: 31, china: 609 };

const server = new McpServer({ name: 'energy-facts', version: '1.0.0' });
server.registerTool(
  'lookup_capacity',
  { description: 'Installed solar capacity of a country, in GW', inputSchema: { country: z.string() } },
  async ({ country }) => {
    const gw = CAPACITY_GW[country.toLowerCase()];
    if (gw === undefined) return { content: [{ type: 'text', text: `No data for ${country}.` }], isError: true };
    return { content: [{ type: 'text', text: `${country}: ${gw} GW of solar installed (fixture data, 2023).` }] };
  },
);
await server.connect(new StdioServerTransport());
