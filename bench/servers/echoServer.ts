/**
 * The legacy stdio server every wrap-bench contender fronts: a v1-SDK (`@modelcontextprotocol/sdk`
 * 1.x) `McpServer` with one `echo` tool that returns its `text` argument as a text block. It speaks
 * newline-delimited JSON-RPC on stdin/stdout, like any legacy stdio server.
 *
 * The bench runs it as plain JavaScript (transpiled once per run into bench/results/.build/ by
 * `bench/shared/build.ts`), so no contender pays for a TypeScript loader in the server process.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'bench-echo', version: '1.0.0' }, { capabilities: { tools: {} } });

server.registerTool('echo', { description: 'Returns its text', inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: 'text', text }],
}));

await server.connect(new StdioServerTransport());
