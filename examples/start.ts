/**
 * `npm start`: with no arguments, serves the built-in example — a legacy, push-style server
 * (fixtures/servers/exampleServer.ts: tools that confirm through elicitation, sample, read roots)
 * fronted as one dual-era endpoint at http://127.0.0.1:3000/mcp (`PORT` or `--port` to change it,
 * and any other option of `serve`: `npm start -- --port 3021`) — and, once it listens, prints how
 * to try it. With a command it is the `mcp-dual-era` command itself (`npm start -- serve …`,
 * `npm start -- explain …`), compiled when the checkout is built (examples/start.mjs).
 */
import { resolve } from 'node:path';
import { namesCommand } from './startTarget.mjs';

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);

if (namesCommand(args)) {
  process.argv.splice(2, process.argv.length, ...args);
  await import('../lib/cli/main.ts');
} else {
  const tsx = resolve(root, 'node_modules/.bin/tsx');
  const { serve } = await import('../lib/cli/serve.ts');
  process.stderr.write(
    'Serving the built-in example: a legacy (2025-11-25) server whose tools push elicitation,\nsampling and roots requests, fronted by mcp-dual-era for modern and legacy clients.\n\n',
  );
  // Options given on the command line come after the defaults, and so win over them.
  const serving = [
    '--port',
    process.env['PORT'] ?? '3000',
    '--roots',
    `file://${root}`,
    ...args,
    '--',
    tsx,
    resolve(root, 'fixtures/servers/exampleServer.ts'),
  ];
  process.exitCode = await serve(serving, { onListening: (url) => process.stderr.write(tryIt(url)) });
}

/** The lines to paste in another terminal, for the endpoint at `url`. */
function tryIt(url: string): string {
  const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`;
  const headers = `-H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\
    -H 'mcp-protocol-version: 2026-07-28'`;
  const call = `"name":"book_table","arguments":{"restaurant":"Casa Lisboa","people":2}`;
  const retry = [
    `const a = JSON.parse(process.argv[1]).result, key = Object.keys(a.inputRequests)[0];`,
    `const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } };`,
    `console.log(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "book_table", arguments: { restaurant: "Casa Lisboa", people: 2 },`,
    `  inputResponses: { [key]: { action: "accept", content: { confirm: true, time: "19:30" } } }, requestState: a.requestState, _meta: meta } }))`,
  ].join('\n    ');
  return `
Try it while it runs (in another terminal):

  # a modern (2026-07-28) client: no initialize, everything in _meta
  curl -s ${url} ${headers} -H 'mcp-method: server/discover' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{${meta}}}'

  # a tool that asks for confirmation: the answer is input_required (inputRequests and a requestState)
  ANSWER=$(curl -s ${url} ${headers} -H 'mcp-method: tools/call' -H 'mcp-name: book_table' \\
    -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{${call},${meta}}}'); echo "$ANSWER"

  # answer it: the same call again, with inputResponses keyed as its inputRequests, and the requestState
  curl -s ${url} ${headers} -H 'mcp-method: tools/call' -H 'mcp-name: book_table' \\
    -d "$(node -e '
    ${retry}' "$ANSWER")"

  # a legacy (2025-11-25) client on the same endpoint: initialize opens a session
  curl -si ${url} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'

Or point any MCP client at ${url}: the v2 SDK pinned to 2026-07-28, the v1 SDK, an inspector.
Ctrl-C stops it. More: npm start -- --help

`;
}
