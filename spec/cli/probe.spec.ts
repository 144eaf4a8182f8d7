/**
 * `mcp-dual-era probe` as a user runs it, against real servers of each kind: server-everything
 * (legacy, stdio and Streamable HTTP), the v2 SDK server dual-era and modern-only (stdio and HTTP).
 * The report says the era, versions, server info, capabilities, counts, cost, and who can use the
 * server; a refused probe (401) is exit 1 with the header sent; usage errors are exit 2.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EVERYTHING, ROOT, startEverythingHttp } from '../helpers/everything.ts';
import { MODERN_STDIO, startModernHttp } from '../helpers/modernFixture.ts';

const CLI = resolve(ROOT, 'lib/cli/main.ts');

function cli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string; report: any }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'probe', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => {
      let report: any;
      try {
        report = JSON.parse(stdout);
      } catch {
        report = undefined;
      }
      done({ code, stdout, stderr, report });
    });
  });
}

const p = suite('mcp-dual-era probe');

p('should report server-everything over stdio as legacy, with what a modern-only client needs', async () => {
  const { code, report } = await cli(['--json', '--steps', '--', process.execPath, EVERYTHING, 'stdio']);
  assert.is(code, 0);
  assert.is(report.kind, 'legacy');
  assert.is(report.transport, 'stdio');
  assert.equal(report.versions, { modern: [], legacy: '2025-11-25' });
  assert.is(report.serverInfo.name, 'mcp-servers/everything');
  assert.ok(report.capabilities.tools && report.capabilities.prompts && report.capabilities.resources);
  assert.ok(report.counts.tools >= 10 && report.counts.prompts >= 1 && report.counts.resources >= 1, JSON.stringify(report.counts));
  assert.is(report.timing.roundTrips, 1);
  assert.equal(
    report.steps.map((s: any) => s.step),
    ['probe', 'fallback'],
  );
  assert.is(report.clients['modern-only'].direct, false);
  assert.match(report.clients['modern-only'].through, 'mcp-dual-era serve -- ');
  assert.is(report.clients.legacy.direct, true);
});

p('should report the v2 server with legacy clients allowed as dual-era', async () => {
  const { code, report } = await cli([
    '--json',
    '--timeout',
    '10000',
    '--',
    process.execPath,
    '--import',
    'tsx',
    resolve(ROOT, 'fixtures/servers/dualEraStdio.ts'),
  ]);
  assert.is(code, 0);
  assert.is(report.kind, 'dual-era');
  assert.equal(report.versions, { modern: ['2026-07-28'], legacy: '2025-11-25' });
  assert.ok(report.clients['modern-only'].direct && report.clients['dual-era'].direct && report.clients.legacy.direct);
});

p('should report the v2 server refusing legacy clients as modern-only, over stdio and HTTP', async () => {
  const stdio = await cli(['--json', '--timeout', '10000', '--', MODERN_STDIO.command, ...MODERN_STDIO.args]);
  assert.is(stdio.code, 0);
  assert.is(stdio.report.kind, 'modern-only');
  assert.equal(stdio.report.serverInfo, { name: 'modern-fixture', version: '2.4.0' });
  assert.ok(stdio.report.counts.tools > 0);
  assert.is(stdio.report.clients.legacy.direct, false);
  assert.match(stdio.report.clients.legacy.through, 'serve --modern');
  const modern = await startModernHttp();
  try {
    const http = await cli(['--json', modern.url]);
    assert.is(http.code, 0);
    assert.is(http.report.kind, 'modern-only');
    assert.is(http.report.transport, 'streamable-http');
    assert.equal(http.report.counts, stdio.report.counts);
    assert.match(http.report.clients.legacy.through, `--upstream ${modern.url}`);
  } finally {
    await modern.close();
  }
});

p('should report server-everything over Streamable HTTP as legacy, and print a readable report', async () => {
  const everything = await startEverythingHttp();
  try {
    const { code, stdout } = await cli([everything.url.href]);
    assert.is(code, 0);
    assert.match(stdout, /era\s+legacy/);
    assert.match(stdout, /transport\s+streamable-http/);
    assert.match(stdout, /server\s+mcp-servers\/everything/);
    assert.match(stdout, /modern-only client\s+through mcp-dual-era serve --upstream/);
    assert.match(stdout, /legacy client\s+directly/);
    assert.not.match(stdout, '\u001b[', 'no colour when piped');
    assert.match(stdout, /probe\s+1 round trip,/);
    const json = await cli(['--json', '--url', everything.url.href]);
    assert.is(json.code, 0);
    assert.is(json.report.timing.roundTrips, 1, 'counted as over stdio: the server/discover requests');
  } finally {
    await everything.close();
  }
});

p('should list every option it accepts in --help, --url included', () => {
  const help = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'probe', '--help'], { cwd: ROOT, encoding: 'utf8' });
  assert.is(help.status, 0);
  for (const option of ['--url <url>', '--json', '--steps', '--header', '--timeout', '--cwd', '--env']) assert.match(help.stdout, option);
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
    const { code, report, stderr } = await cli(['--json', `http://127.0.0.1:${port}/mcp`, '--header', 'Authorization: Bearer t0ken']);
    assert.is(code, 1);
    assert.match(report.error, 'HTTP 401');
    assert.match(stderr, 'HTTP 401');
    assert.equal(seen, ['Bearer t0ken']);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

p('should exit 2 with a clear message on bad usage', () => {
  const cases: Array<[string[], string]> = [
    [[], 'name the server'],
    [['not a url'], 'not a URL'],
    [['ftp://example.com/mcp'], 'must be an http or https URL'],
    [['--timeout', 'soon', 'http://127.0.0.1/mcp'], '--timeout must be a whole number'],
  ];
  for (const [args, message] of cases) {
    const child = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'probe', ...args], { cwd: ROOT, encoding: 'utf8' });
    assert.is(child.status, 2, args.join(' '));
    assert.match(child.stderr, message);
  }
});

p.run();
