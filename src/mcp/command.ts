// `deep-research mcp`: an entry of the CLI's command table (src/cli/commands.ts).
import { defineCommand } from '../cli/command-table';
import { serveStdio } from './stdio';

export const mcpCommand = defineCommand({
  name: 'mcp',
  usage:
    '  mcp                              serve MCP on stdin/stdout for a desktop client (Claude Desktop, Cursor);\n' +
    '                                   its tools start, follow, review, steer and read runs (docs/mcp.md)',
  parse: () => undefined,
  handle: async ({ client }) => {
    await serveStdio(client);
    return 0;
  },
});
