/**
 * `mcp-dual-era probe` as a user runs it: JSON lines for each step and the verdict, exit 0; a
 * refused probe (401) is an error line and exit 1.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EVERYTHING, ROOT } from '../helpers/everything.ts';

function cli(args: readonly string[]): Promise<{ code: number | null; lines: any[] }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'lib/cli/main.ts'), 'probe', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('close', (code) => done({ code, lines: out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) }));
  });
}

const p = suite('mcp-dual-era probe');

p('should print the steps and a legacy verdict for server-everything over stdio', async () => {
  const { code, lines } = await cli(['--', process.execPath, EVERYTHING, 'stdio']);
  assert.is(code, 0);
  assert.equal(lines.map((l) => l.event), ['probe', 'fallback', 'verdict']);
  assert.equal(lines[2], { event: 'verdict', era: 'legacy', roundTrips: 1 });
});

p('should print a modern verdict for the v2 dual-era server', async () => {
  const { code, lines } = await cli(['--timeout', '10000', '--', process.execPath, '--import', 'tsx', resolve(ROOT, 'fixtures/servers/dualEraStdio.ts')]);
  assert.is(code, 0);
  assert.equal(lines.at(-1), { event: 'verdict', era: 'modern', version: '2026-07-28', roundTrips: 1 });
});

p('should exit 1 on a 401, sending the header it was given', async () => {
  const seen: Array<string | undefined> = [];
  const server = createServer((req, res) => {
    seen.push(req.headers['authorization']);
    res.writeHead(401).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    const { code, lines } = await cli(['--url', `http://127.0.0.1:${port}/mcp`, '--header', 'Authorization: Bearer t0ken']);
    assert.is(code, 1);
    assert.is(lines.at(-1).event, 'error');
    assert.match(lines.at(-1).message, 'HTTP 401');
    assert.equal(seen, ['Bearer t0ken']);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

p.run();
