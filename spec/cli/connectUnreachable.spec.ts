/**
 * `connect` whose server cannot be reached (a URL nothing answers at, a command that cannot start),
 * for a host of either era: the host's first request is answered with the error, the reason is said
 * once on stderr, and the command exits 1 (the upstream failed), not 0 in silence.
 */
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { builtCli } from '../helpers/built.ts';
import { ROOT } from '../helpers/everything.ts';

const FIRST = {
  legacy: {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'host', version: '1' } },
  },
  modern: {
    jsonrpc: '2.0',
    id: 1,
    method: 'server/discover',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'host', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  },
};

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

function run(args: readonly string[], first: object): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [builtCli(), 'connect', ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    // The host keeps its end open, as a host does while it waits.
    child.stdin!.write(`${JSON.stringify(first)}\n`);
    const hung = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (code) => {
      clearTimeout(hung);
      done({ code, out, err });
    });
  });
}

const s = suite('connect to a server that cannot be reached');

s('should answer the host, say why once, and exit 1, for a host of either era', async () => {
  const port = await closedPort();
  const servers: Array<[string, string[]]> = [
    ['an unreachable URL', [`http://127.0.0.1:${port}/mcp`]],
    ['a command that cannot start', ['--', '/nonexistent/mcp-server']],
  ];
  for (const [what, args] of servers) {
    for (const era of ['legacy', 'modern'] as const) {
      const { code, out, err } = await run(args, FIRST[era]);
      const context = `${era} host, ${what}: exit ${code}\n${err}${out}`;
      assert.is(code, 1, context);
      const answer = JSON.parse(out.trim().split('\n')[0]!) as { id: number; error?: { message: string } };
      assert.is(answer.id, 1, context);
      assert.ok(answer.error, context);
      const said = err.split('\n').filter((l) => /cannot be reached|cannot reach/.test(l));
      assert.is(said.length, 1, `said once: ${context}`);
      assert.not.match(err, 'speaks the legacy era', context);
    }
  }
});

s.run();
