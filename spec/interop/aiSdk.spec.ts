/**
 * The AI SDK's own MCP client (`@ai-sdk/mcp` 2.0.99, not built on the SDK) through mcp-dual-era in
 * front of server-everything (legacy only): through `connect` and `serve --stdio` (the client spawns
 * the command) and `serve` over HTTP. It is modern first: over stdio it sends `server/discover`
 * and falls back to `initialize` on the same pipe after one second without an answer. Through us it
 * negotiates 2026-07-28 and works: tools, an elicitation round (MRTR, which it answers), prompts,
 * resources. A server that boots slower than the client waits makes it fall back: it is then
 * served as a legacy client on the same pipe, with no late answer to what it gave up on. The
 * command runs compiled (`dist/`), as an installed copy does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createMCPClient, ElicitationRequestSchema, type MCPClient } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { builtCli } from '../helpers/built.ts';
import { EVERYTHING, MARKER, markedProcesses, markedProcessesGone, reapMarked, ROOT, textOf } from '../helpers/everything.ts';

const SLOW = resolve(ROOT, 'fixtures/servers/slowStart.mjs');

interface Connected {
  readonly client: MCPClient;
  readonly errors: unknown[];
  readonly elicitations: unknown[];
  readonly marker: string;
  close(): Promise<void>;
}

/** The AI SDK client with an elicitation handler that accepts with a name. */
async function connectAi(
  transport: ConstructorParameters<typeof StdioMCPTransport>[0] | { type: 'http'; url: string },
  marker: string,
  extraClose: () => Promise<void> = async () => {},
): Promise<Connected> {
  const errors: unknown[] = [];
  const elicitations: unknown[] = [];
  const client = await createMCPClient({
    transport: 'type' in transport ? transport : new StdioMCPTransport(transport),
    clientName: 'ai-sdk-spec',
    capabilities: { elicitation: {} },
    onUncaughtError: (e) => errors.push(e),
  });
  client.onElicitationRequest(ElicitationRequestSchema, async (request) => {
    elicitations.push(request);
    return { action: 'accept', content: { name: 'Ada Lovelace' } };
  });
  let closing: Promise<void> | undefined;
  return {
    client,
    errors,
    elicitations,
    marker,
    close() {
      closing ??= client.close().then(extraClose);
      return closing;
    },
  };
}

/** The client spawns `mcp-dual-era <args…>` (compiled), marked so its processes can be found. */
function viaCommand(args: readonly string[], env: Record<string, string> = {}): () => Promise<Connected> {
  return async () => {
    const marker = randomUUID();
    const transport = {
      command: process.execPath,
      args: [builtCli(), ...args],
      cwd: ROOT,
      env: { ...(process.env as Record<string, string>), [MARKER]: marker, ...env },
      stderr: 'ignore' as const,
    };
    return connectAi(transport, marker);
  };
}

/** `serve` over HTTP on a free port, the client pointed at the endpoint it says it serves. */
async function viaHttp(): Promise<Connected> {
  const marker = randomUUID();
  const child: ChildProcess = spawn(process.execPath, [builtCli(), 'serve', '--port', '0', '--', process.execPath, EVERYTHING, 'stdio'], {
    cwd: ROOT,
    env: { ...process.env, [MARKER]: marker },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let text = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      text += chunk;
      const match = /serving .* at (http:\/\/\S+)/.exec(text);
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', () => reject(new Error(`serve exited before serving: ${text}`)));
  });
  const exited = new Promise((r) => child.once('exit', r));
  return connectAi({ type: 'http', url }, marker, async () => {
    child.kill('SIGTERM');
    await exited;
  });
}

const ways: Array<[string, () => Promise<Connected>]> = [
  ['connect -- server-everything', viaCommand(['connect', '--quiet', '--', process.execPath, EVERYTHING, 'stdio'])],
  ['serve --stdio -- server-everything', viaCommand(['serve', '--stdio', '--quiet', '--', process.execPath, EVERYTHING, 'stdio'])],
  ['serve (HTTP) -- server-everything', viaHttp],
];

for (const [name, open] of ways) {
  const s = suite(`the AI SDK (@ai-sdk/mcp 2.0.99) through mcp-dual-era ${name}`);
  let c: Connected;
  s.before(async () => {
    c = await open();
  });
  s.after(async () => {
    await c?.close().catch(() => {});
    if (c) reapMarked(c.marker);
  });

  s('should negotiate 2026-07-28 and see the server as it is', () => {
    assert.is(c.client.initializeResult.protocolVersion, '2026-07-28');
    assert.is(c.client.serverInfo.name, 'mcp-servers/everything');
    assert.ok(c.client.initializeResult.capabilities.tools, 'tools capability');
  });

  s('should list and call tools', async () => {
    const tools = await c.client.listTools();
    const names = tools.tools.map((t) => t.name);
    for (const tool of ['echo', 'get-sum', 'trigger-elicitation-request'])
      assert.ok(names.includes(tool), `${tool} in ${names.join(', ')}`);
    const echoed = await c.client.callTool({ name: 'echo', arguments: { message: 'through the eras' } });
    assert.match(textOf(echoed), 'Echo: through the eras');
    const sum = await c.client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    assert.match(textOf(sum), '5');
  });

  s('should answer the server pushed elicitation as an input_required round', async () => {
    const before = c.elicitations.length;
    const result = await c.client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    assert.is(c.elicitations.length, before + 1);
    assert.match(JSON.stringify(c.elicitations[before]), 'requestedSchema');
    assert.match(textOf(result), 'Ada Lovelace');
  });

  s('should get prompts and read resources', async () => {
    const prompts = await c.client.experimental_listPrompts();
    assert.ok(prompts.prompts.some((p) => p.name === 'simple-prompt'));
    const prompt = await c.client.experimental_getPrompt({ name: 'simple-prompt' });
    assert.ok(prompt.messages.length > 0);
    const resources = await c.client.listResources();
    const first = resources.resources[0]!;
    const read = await c.client.readResource({ uri: first.uri });
    assert.ok(read.contents.length > 0);
  });

  s('should have raised nothing on the client side and leave no process behind', async () => {
    assert.equal(c.errors.map(String), []);
    await c.close();
    assert.ok(await markedProcessesGone(c.marker, 5000), `still running: ${JSON.stringify(markedProcesses(c.marker))}`);
  });

  s.run();
}

// A server that boots in 1.5 s: the client's discovery gives up after 1 s and it sends
// `initialize` on the same pipe.
const slow: Array<[string, string[]]> = [
  ['connect', ['connect', '--quiet', '--']],
  ['serve --stdio', ['serve', '--stdio', '--quiet', '--']],
];
for (const [name, args] of slow) {
  const f = suite(`the AI SDK through mcp-dual-era ${name}, in front of a server slower to start than it waits`);
  let c: Connected;
  f.before(async () => {
    c = await viaCommand([...args, process.execPath, SLOW, EVERYTHING, 'stdio'], { SLOW_START_MS: '1500' })();
  });
  f.after(async () => {
    await c?.close().catch(() => {});
    if (c) reapMarked(c.marker);
  });

  f('should serve the client that fell back to initialize on the same pipe, as a legacy client', async () => {
    assert.is(c.client.initializeResult.protocolVersion, '2025-11-25');
    assert.is(c.client.serverInfo.name, 'mcp-servers/everything');
    const echoed = await c.client.callTool({ name: 'echo', arguments: { message: 'after the fallback' } });
    assert.match(textOf(echoed), 'Echo: after the fallback');
  });

  f('should not answer the server/discover the client gave up on', async () => {
    // A late answer reaches the client as a response to an unknown id, which it reports. (It reports
    // every notification of the server as "Unsupported message type": those are the server's own.)
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(
      c.errors.map(String).filter((e) => !e.includes('Unsupported message type')),
      [],
    );
  });

  f('should leave no process behind', async () => {
    await c.close();
    assert.ok(await markedProcessesGone(c.marker, 5000), `still running: ${JSON.stringify(markedProcesses(c.marker))}`);
  });

  f.run();
}
