/**
 * `mcp-dual-era serve --log-format json`, run as the real command: every line it writes on stderr
 * through a session (startup, `--verbose` messages, the upstream's own stderr, failures, shutdown)
 * is one JSON object; the lines about a traced request carry its trace id; `--metrics` answers
 * `GET /metrics` beside the endpoint.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { builtCli } from '../helpers/built.ts';
import { servingUrl } from '../helpers/servingUrl.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = resolve(ROOT, 'node_modules/.bin/tsx');
const CLI = resolve(ROOT, 'lib/cli/main.ts');
const EXAMPLE = resolve(ROOT, 'fixtures/servers/exampleServer.ts');
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER = `00-${TRACE_ID}-00f067aa0ba902b7-01`;
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
  traceparent: CALLER,
};
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'book_table',
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Line = Record<string, any>;

/** Every stderr line as JSON (a line that is not fails the spec). */
function lines(text: string): Line[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as Line;
      } catch {
        assert.unreachable(`a line that is not JSON: ${l}`);
        return {};
      }
    });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((r) => (child.exitCode !== null ? r(child.exitCode) : child.once('exit', (code) => r(code))));

const s = suite('mcp-dual-era serve --log-format json');

s("should write every event of a session as one JSON object a line, with the trace id on a traced request's lines", async () => {
  // (Node itself with tsx's loader: the tsx command would relay SIGTERM, and kill a busy child.)
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CLI, 'serve', '--log-format', 'json', '--verbose', '--metrics', '--port', '0', '--', TSX, EXAMPLE],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  const listening = new Promise<string>((resolveUrl, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /"msg":"mcp-dual-era: serving .* at (http:\/\/[^ "]+)/.exec(err);
      if (m) resolveUrl(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  try {
    const url = await listening;
    const args = { restaurant: 'Casa Lisboa', people: 2 };
    const first = (await (
      await fetch(url, {
        method: 'POST',
        headers: HEADERS,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'first',
          method: 'tools/call',
          params: { name: 'book_table', arguments: args, _meta: META },
        }),
      })
    ).json()) as Line;
    assert.is(first['result'].resultType, 'input_required');
    const key = Object.keys(first['result'].inputRequests)[0]!;
    const retry = {
      jsonrpc: '2.0',
      id: 'retry',
      method: 'tools/call',
      params: {
        name: 'book_table',
        arguments: args,
        inputResponses: { [key]: { action: 'accept', content: { confirm: true, time: '19:30' } } },
        requestState: first['result'].requestState,
        _meta: META,
      },
    };
    const done = (await (await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify(retry) })).json()) as Line;
    assert.match(JSON.stringify(done['result'].content), 'Booked a table for 2');
    const metrics = await (await fetch(new URL('/metrics', url))).text();
    assert.match(metrics, /mcp_dual_era_requests_total\{method="tools\/call",outcome="input_required",error_type=""\} 1/);
    assert.match(metrics, /mcp_dual_era_requests_total\{method="tools\/call",outcome="complete",error_type=""\} 1/);
    assert.not.match(
      metrics,
      /mcp_dual_era_requests_total\{method="server\/discover"/,
      'the command’s own start-up question is not a client’s request',
    );
    child.kill('SIGTERM');
    assert.is(await exited(child), 0);

    const all = lines(err);
    const pid = all[0]?.['pid'];
    assert.is(pid, child.pid);
    for (const line of all) {
      assert.type(line['level'], 'string');
      assert.ok(!Number.isNaN(Date.parse(line['time'])), `an ISO time: ${line['time']}`);
      assert.is(line['pid'], pid);
      assert.type(line['msg'], 'string');
    }
    const said = all.filter((l) => l['level'] === 'info').map((l) => l['msg'] as string);
    assert.ok(
      said.some((m) => m.startsWith('mcp-dual-era: upstream trip-desk 1.0.0 speaks 2025-11-25')),
      said.join('\n'),
    );
    assert.ok(
      said.some((m) => m.startsWith('mcp-dual-era: metrics at http://')),
      said.join('\n'),
    );
    assert.ok(said.includes('mcp-dual-era: shutting down'));
    // The access log: a line per request served, with what an operator reads (not the credentials).
    const access = all.filter((l) => l['msg'] === 'request');
    assert.equal(
      access.map((l) => [l['method'], l['name'], l['era'], l['outcome'], l['trace_id']]),
      [
        ['tools/call', 'book_table', 'modern', 'input_required', TRACE_ID],
        ['tools/call', 'book_table', 'modern', 'complete', TRACE_ID],
      ],
      JSON.stringify(access),
    );
    for (const l of access) {
      assert.type(l['duration_ms'], 'number');
      assert.match(l['principal'], /^[0-9a-f]{12}$/);
    }
    // --verbose: each message as a debug line with who sent it to whom and the message itself.
    const messages = all.filter((l) => l['level'] === 'debug');
    for (const l of messages) assert.is(l['msg'], `${l['from']} → ${l['to']}`);
    const about = (from: string, to: string, test: (m: Line) => boolean) =>
      messages.filter((l) => l['from'] === from && l['to'] === to && test(l['message']));
    const traced = [
      ...about('client', 'us', (m) => m['id'] === 'first' || m['id'] === 'retry'),
      ...about('us', 'client', (m) => m['id'] === 'first' || m['id'] === 'retry'),
      ...about('us', 'server', (m) => m['method'] === 'tools/call'),
      ...about('server', 'us', (m) => m['result']?.['content'] !== undefined),
    ];
    // (The server's elicitation/create names no request and carries no trace context of its own.)
    assert.is(traced.length, 6, JSON.stringify(traced.map((l) => [l['from'], l['to'], l['message']['id'] ?? l['message']['method']])));
    for (const l of traced) assert.is(l['trace_id'], TRACE_ID, JSON.stringify(l));
    // The handshake the wrap made on its own belongs to no trace.
    const handshake = about('us', 'server', (m) => m['method'] === 'initialize');
    assert.ok(handshake.length >= 1);
    for (const l of handshake) assert.is(l['trace_id'], undefined);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

s('should give the trace id of a traceparent sent as an HTTP header to the lines about its request', async () => {
  const child = spawn(process.execPath, [builtCli(), 'serve', '--log-format', 'json', '--verbose', '--port', '0', '--', TSX, EXAMPLE], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const serving = servingUrl(child);
  try {
    const url = await serving.url;
    const headerTrace = 'a3ce929d0e0e47364bf92f3577b34da6';
    const { traceparent: _, ...untraced } = META;
    const answer = await fetch(url, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-method': 'tools/list', traceparent: `00-${headerTrace}-00f067aa0ba902b7-01` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'listed', method: 'tools/list', params: { _meta: untraced } }),
    });
    assert.is(answer.status, 200);
    await answer.text();
    child.kill('SIGTERM');
    await exited(child);
    const all = lines(serving.log());
    const about = all.filter((l) => l['message']?.['id'] === 'listed');
    assert.equal(
      about.map((l) => [l['from'], l['to'], l['trace_id']]),
      [
        ['client', 'us', headerTrace],
        ['us', 'client', headerTrace],
      ],
      JSON.stringify(about),
    );
    assert.equal(
      all.filter((l) => l['msg'] === 'request').map((l) => [l['method'], l['trace_id']]),
      [['tools/list', headerTrace]],
    );
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

s("should write the upstream's own stderr and its failure as JSON lines too", () => {
  const script = "process.stderr.write('fatal: no configuration\\nsee the docs\\n'); process.exit(3)";
  const r = spawnSync(TSX, [CLI, 'serve', '--log-format', 'json', '--spares', '0', '--port', '0', '--', process.execPath, '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.is(r.status, 1);
  const all = lines(r.stderr);
  assert.equal(
    all.filter((l) => l['source'] === 'server').map((l) => l['msg']),
    ['fatal: no configuration', 'see the docs'],
  );
  const failed = all.filter((l) => l['level'] === 'error');
  assert.is(failed.length, 1, r.stderr);
  assert.match(failed[0]!['msg'], 'exited with code 3 before it answered initialize: fatal: no configuration');
});

s('should refuse a log format it does not know, and --metrics where there is no HTTP endpoint', () => {
  const bad = spawnSync(TSX, [CLI, 'serve', '--log-format', 'xml', '--', 'node', 'x.js'], { cwd: ROOT, encoding: 'utf8' });
  assert.is(bad.status, 2);
  assert.match(bad.stderr, '--log-format is human or json, not xml');
  const stdio = spawnSync(TSX, [CLI, 'serve', '--stdio', '--metrics', '--', 'node', 'x.js'], { cwd: ROOT, encoding: 'utf8' });
  assert.is(stdio.status, 2);
  assert.match(stdio.stderr, '--metrics serves GET /metrics on the HTTP endpoint');
});

s.run();
