/**
 * Properties of `migrateSource` over generated files: SDK v1 servers and clients wired in the ways
 * the codemod knows, mixed with unrelated statements, comments, blank lines and indentation, in
 * either mode. Whatever the file, the result parses, a second run changes nothing, and every
 * unrelated line is still there as it was written.
 */
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { migrateSource, type MigrateMode } from '../../lib/codemod/migrateSource.ts';
import { syntaxErrors } from '../../lib/codemod/source.ts';

const IMPORTS = [
  "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';",
  "import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';",
  "import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';",
  "import { Client } from '@modelcontextprotocol/sdk/client/index.js';",
  "import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';",
  "import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';",
  "import express from 'express';",
];

/** What the codemod rewrites (each statement list is placed as a whole). */
const PATTERNS = [
  ['const server = new McpServer({ name: "s", version: "1" });', 'await server.connect(new StdioServerTransport());'],
  [
    'const s2 = new McpServer({ name: "s2", version: "1" });',
    'const transport = new StdioServerTransport();',
    'await s2.connect(transport);',
  ],
  [
    'const client = new Client({ name: "c", version: "1" });',
    'const ct = new StdioClientTransport({ command: "node", args: ["x.js"] });',
    'await client.connect(ct);',
  ],
  [
    'const c2 = new Client({ name: "c2", version: "1" });',
    'await c2.connect(new StreamableHTTPClientTransport(new URL("http://127.0.0.1:3000/mcp")));',
  ],
  [
    'const app = express();',
    'app.post("/mcp", async (req, res) => {',
    '  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });',
    '  await makeServer().connect(transport);',
    '  await transport.handleRequest(req, res, req.body);',
    '});',
  ],
  [
    'mcp.registerTool("ask", { description: "asks" }, async () => {',
    '  const answer = await mcp.server.elicitInput({ message: "ok?", requestedSchema: { type: "object", properties: {} } });',
    '  return { content: [{ type: "text", text: answer.action }] };',
    '});',
  ],
];

const filler = fc.oneof(
  fc.nat(999).map((n) => `const value${n} = ${n} * 2;`),
  fc.nat(999).map((n) => `// a note about ${n}`),
  fc.nat(999).map((n) => `/* block ${n} */ console.log('line ${n}');`),
  fc.constant(''),
  fc.nat(999).map((n) => `function helper${n}(x: number): number {\n  return x + ${n};\n}`),
);

const file = fc
  .record({
    imports: fc.shuffledSubarray(IMPORTS, { minLength: 4 }),
    patterns: fc.subarray(PATTERNS),
    fillers: fc.array(filler, { maxLength: 8 }),
    order: fc.array(fc.nat(), { maxLength: 16 }),
    indent: fc.constantFrom('', '  ', '    ', '\t'),
    wrapInMain: fc.boolean(),
    mode: fc.constantFrom<MigrateMode>('wrap', 'native'),
  })
  .map(({ imports, patterns, fillers, order, indent, wrapInMain, mode }) => {
    // Interleave whole patterns with filler lines in a generated order.
    const blocks: string[][] = [...patterns.map((p) => [...p]), ...fillers.map((f) => f.split('\n'))];
    for (const [i, n] of order.entries()) {
      if (blocks.length < 2) break;
      const a = i % blocks.length;
      const b = n % blocks.length;
      [blocks[a], blocks[b]] = [blocks[b]!, blocks[a]!];
    }
    const pad = wrapInMain ? indent || '  ' : '';
    const body = blocks.flatMap((b) => b.map((line) => (line === '' ? '' : pad + line)));
    const declared = 'declare function makeServer(): McpServer;\ndeclare const mcp: McpServer;';
    const lines = [...imports, '', declared, ...(wrapInMain ? ['async function main() {', ...body, '}'] : body), ''];
    return { text: lines.join('\n'), fillers: fillers.filter((f) => f !== ''), mode };
  });

const props = suite('migrateSource: properties');

props('should give a result that parses, that a second run leaves as it is, with every unrelated line kept', () => {
  fc.assert(
    fc.property(file, ({ text, fillers, mode }) => {
      const fileName = '/generated/server.ts';
      const first = migrateSource(text, { fileName, mode });
      assert.is(first.error, undefined, text);
      assert.equal(syntaxErrors(fileName, first.text), [], first.text);
      const second = migrateSource(first.text, { fileName, mode });
      assert.is(second.text, first.text, 'a second run changes nothing');
      for (const f of fillers) for (const line of f.split('\n')) assert.ok(first.text.includes(line.trim()), `kept: ${line}`);
    }),
    { numRuns: 60, seed: 20260728 },
  );
});

props.run();
