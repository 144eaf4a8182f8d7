/**
 * `npm start`: with no arguments, serves the built-in example — a legacy, push-style server
 * (fixtures/servers/exampleServer.ts: tools that confirm through elicitation, sample, read roots)
 * fronted as one dual-era endpoint at http://127.0.0.1:3000/mcp — and prints how to try it.
 * With arguments it is the `mcp-dual-era` command itself (`npm start -- serve …`, `-- explain …`).
 */
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const tsx = resolve(root, 'node_modules/.bin/tsx');
const args = process.argv.slice(2);

const port = process.env['PORT'] ?? '3000';
const url = `http://127.0.0.1:${port}/mcp`;
const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`;

if (args.length === 0) {
  process.stderr.write(`Serving the built-in example: a legacy (2025-11-25) server whose tools push elicitation,
sampling and roots requests, fronted by mcp-dual-era for modern and legacy clients at ${url}

Try it while it runs (in another terminal):

  # a modern (2026-07-28) client: no initialize, everything in _meta
  curl -s ${url} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\
    -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: server/discover' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{${meta}}}'

  # a tool that asks for confirmation: the answer is input_required, then retry with inputResponses
  curl -s ${url} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\
    -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: book_table' \\
    -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"book_table","arguments":{"restaurant":"Casa Lisboa","people":2},${meta}}}'

  # a legacy (2025-11-25) client on the same endpoint: initialize opens a session
  curl -si ${url} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'

Or point any MCP client at ${url}: the v2 SDK pinned to 2026-07-28, the v1 SDK, an inspector.
Ctrl-C stops it. More: npm start -- --help

`);
}

const command = args.length > 0 ? args : ['serve', '--port', port, '--roots', `file://${root}`, '--', tsx, resolve(root, 'fixtures/servers/exampleServer.ts')];
process.argv.splice(2, process.argv.length, ...command);
await import('../lib/cli/main.ts');
