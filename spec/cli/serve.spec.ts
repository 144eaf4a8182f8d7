/**
 * `mcp-dual-era serve`, run as the real command in front of the built-in example server: startup
 * report, a modern call through an MRTR round, a legacy session on the same endpoint, graceful
 * shutdown; and the errors a user meets first (port taken, command not found, bad options).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serve } from '../../lib/cli/serve.ts';
import { EVERYTHING } from '../helpers/everything.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = resolve(ROOT, 'node_modules/.bin/tsx');
const CLI = resolve(ROOT, 'lib/cli/main.ts');
const EXAMPLE = resolve(ROOT, 'fixtures/servers/exampleServer.ts');
const LEGACY_STDIO = resolve(ROOT, 'fixtures/servers/legacyStdio.ts');
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

function start(args: string[]): { child: ChildProcess; stderr: () => string; listening: Promise<string> } {
  // Node itself with tsx's loader, not the tsx command: SIGTERM reaches the command directly (the
  // tsx command relays it, and kills a child that has not said it got it within 30 ms).
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  const listening = new Promise<string>((resolveUrl, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /serving .* at (http:\/\/\S+)/.exec(err);
      if (m) resolveUrl(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  return { child, stderr: () => err, listening };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const exited = (child: ChildProcess) =>
  new Promise<number | null>((r) => (child.exitCode !== null ? r(child.exitCode) : child.once('exit', (code) => r(code))));

/** Runs `run` with stdout and stderr captured. */
async function captured(run: () => Promise<number>): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const write = { stdout: process.stdout.write, stderr: process.stderr.write };
  process.stdout.write = ((chunk: string) => ((out.stdout += chunk), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => ((out.stderr += chunk), true)) as typeof process.stderr.write;
  try {
    return { code: await run(), ...out };
  } finally {
    process.stdout.write = write.stdout;
    process.stderr.write = write.stderr;
  }
}

const s = suite('mcp-dual-era serve (the command)');

s('should front the example server for modern and legacy clients, then shut down on SIGTERM', async () => {
  const { child, stderr, listening } = start(['--port', '0', '--roots', 'file:///work/trip', '--', TSX, EXAMPLE]);
  try {
    const url = await listening;
    assert.match(stderr(), 'upstream trip-desk 1.0.0 speaks 2025-11-25 (legacy era)');
    const modern = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'book_table' };
    const args = { restaurant: 'Casa Lisboa', people: 2 };
    const first: any = await (
      await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'book_table', arguments: args, _meta: META } }, modern)
    ).json();
    assert.is(first.result.resultType, 'input_required');
    const [key] = Object.keys(first.result.inputRequests);
    const retry = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'book_table',
        arguments: args,
        inputResponses: { [key!]: { action: 'accept', content: { confirm: true, time: '19:30' } } },
        requestState: first.result.requestState,
        _meta: META,
      },
    };
    const done: any = await (await post(url, retry, modern)).json();
    assert.equal(done.result.content, [{ type: 'text', text: 'Booked a table for 2 at Casa Lisboa at 19:30.' }]);
    const init = await post(url, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
    });
    assert.is(init.status, 200);
    assert.ok(init.headers.get('mcp-session-id'), 'a legacy session on the same endpoint');
    await init.body?.cancel();
    child.kill('SIGTERM');
    assert.is(await exited(child), 0);
    assert.match(stderr(), 'shutting down');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

s('should say what is wrong, with exit codes scripts can rely on', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    const taken = spawnSync(TSX, [CLI, 'serve', '--quiet', '--port', String(port), '--', TSX, EXAMPLE], { cwd: ROOT, encoding: 'utf8' });
    assert.is(taken.status, 1);
    assert.match(taken.stderr, `port ${port} is in use: choose another with --port`);
  } finally {
    blocker.close();
  }
  const missing = spawnSync(TSX, [CLI, 'serve', '--quiet', '--', 'no-such-command-mde'], { cwd: ROOT, encoding: 'utf8' });
  assert.is(missing.status, 1);
  assert.match(missing.stderr, 'the upstream server (no-such-command-mde) failed');
  const cases: Array<[string[], string]> = [
    [['--upstream', 'not a url'], '--upstream is not a URL'],
    [['--mrtr', 'sometimes', '--', 'x'], '--mrtr is suspend or replay'],
    [['--port', 'eighty', '--', 'x'], '--port must be a port number'],
    [['--modern', '--port', 'abc', '--', 'x'], '--port must be a port number from 0 to 65535, not abc'],
    [['--modern', '--port', '70000', '--', 'x'], '--port must be a port number from 0 to 65535, not 70000'],
    [['--no-such-option'], "Unknown option '--no-such-option'"],
    [[], 'name the upstream server'],
    [['--state-key-env', 'MDE_NO_SUCH_VAR', '--', 'x'], 'MDE_NO_SUCH_VAR (--state-key-env) is not set'],
    [['--limit', 'sessions=many', '--', 'x'], '--limit sessions must be a whole number of at least 1, not many'],
    [['--limit', 'no-such-limit=3', '--', 'x'], '--limit: no limit named no-such-limit'],
    [['--limit', 'reserve=-1', '--', 'x'], '--limit reserve must be a whole number of at least 0'],
    [['--modern', '--limit', 'parked-per-caller=3', '--', 'x'], '--limit parked-per-caller does not apply to serve --modern'],
    [['--limit', 'headers-timeout-ms=90000', '--', 'x'], 'headers-timeout-ms must not be above http-request-timeout-ms'],
    [
      ['--share-sessions', '--pass-authorization', '--upstream', 'http://127.0.0.1:9/mcp'],
      '--share-sessions does not go with --pass-authorization',
    ],
    [['--share-sessions', '--modern', '--', 'x'], '--share-sessions fronts a legacy server'],
    [['--tasks-without-extension', 'sometimes', '--', 'x'], '--tasks-without-extension is run or refuse, not sometimes'],
    [['--tasks-without-extension', 'refuse', '--modern', '--', 'x'], '--tasks-without-extension fronts a legacy server'],
  ];
  // Usage errors are found before anything starts: checked in process (the exit code is serve's result).
  for (const [args, message] of cases) {
    const r = await captured(() => serve(args));
    assert.is(r.code, 2, args.join(' '));
    assert.match(r.stderr, message);
  }
  const help = await captured(() => serve(['--help']));
  assert.is(help.code, 0);
  assert.match(help.stdout, '--state-key-file');
  assert.match(help.stdout, /parked-per-caller\s+16\s+calls one caller may have waiting for input/);
  assert.match(help.stdout, '--clean-env');
  assert.match(help.stdout, '--share-sessions');
  assert.match(help.stdout, /--tasks-without-extension <m>\s+a modern client without the tasks extension/);
});

s("should keep our own configuration out of the upstream's environment", async () => {
  const key = Buffer.alloc(32, 7).toString('base64');
  const getEnv = async (args: string[]): Promise<Record<string, string>> => {
    const child = spawn(TSX, [CLI, 'serve', '--port', '0', ...args, '--', process.execPath, EVERYTHING, 'stdio'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, MDE_SPEC_STATE_KEY: key, MDE_SPEC_PLAIN: 'passed on' },
    });
    let err = '';
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        child.stderr!.on('data', (c: Buffer) => {
          err += c.toString();
          const m = /serving .* at (http:\/\/\S+)/.exec(err);
          if (m) resolveUrl(m[1]!);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get-env' };
      const answer: any = await (
        await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get-env', arguments: {}, _meta: META } }, headers)
      ).json();
      return JSON.parse(answer.result.content[0].text) as Record<string, string>;
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  };
  const inherited = await getEnv(['--state-key-env', 'MDE_SPEC_STATE_KEY', '--env', 'MDE_SPEC_ADDED=yes']);
  assert.not.ok('MDE_SPEC_STATE_KEY' in inherited, 'the requestState key is withheld');
  assert.not.ok(Object.values(inherited).includes(key), 'under no name');
  assert.is(inherited['MDE_SPEC_PLAIN'], 'passed on', 'the rest of ours is inherited');
  assert.is(inherited['MDE_SPEC_ADDED'], 'yes');
  const clean = await getEnv(['--clean-env', '--env', 'MDE_SPEC_ADDED=yes']);
  assert.not.ok('MDE_SPEC_PLAIN' in clean, 'a clean environment starts from a basic one');
  assert.not.ok('MDE_SPEC_STATE_KEY' in clean);
  assert.is(clean['MDE_SPEC_ADDED'], 'yes', '--env adds to it');
  assert.ok(clean['PATH'], 'PATH is kept, so commands are found');
  // Over stdio the server is started before serve has read the rest of itself: withheld there too.
  const stdio = spawn(
    TSX,
    [CLI, 'serve', '--stdio', '--quiet', '--state-key-env', 'MDE_SPEC_STATE_KEY', '--', process.execPath, EVERYTHING, 'stdio'],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, MDE_SPEC_STATE_KEY: key } },
  );
  try {
    const line = new Promise<string>((resolveLine) => {
      let out = '';
      stdio.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) resolveLine(out.slice(0, out.indexOf('\n')));
      });
    });
    stdio.stdin!.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get-env', arguments: {}, _meta: META } })}\n`,
    );
    const env = JSON.parse(JSON.parse(await line).result.content[0].text) as Record<string, string>;
    assert.not.ok('MDE_SPEC_STATE_KEY' in env, 'withheld from the process started ahead');
  } finally {
    stdio.stdin!.end();
    await exited(stdio);
  }
});

s('should say a taken port before starting the upstream, and exit 1 (with --modern too)', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  const flag = resolve(tmpdir(), `mde-started-${process.pid}-${Date.now()}`);
  // An upstream that leaves a mark when it starts.
  const upstream = [process.execPath, '-e', 'require("fs").writeFileSync(process.env.MDE_FLAG, "started"); setInterval(() => {}, 1000)'];
  try {
    for (const mode of [[], ['--modern']]) {
      const r = spawnSync(TSX, [CLI, 'serve', ...mode, '--quiet', '--port', String(port), '--env', `MDE_FLAG=${flag}`, '--', ...upstream], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.is(r.status, 1, `${mode.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, `port ${port} is in use: choose another with --port`);
      assert.not.match(r.stderr, 'EADDRINUSE');
      assert.not.ok(existsSync(flag), `${mode.join(' ') || 'serve'}: the upstream was started before the port was tried`);
    }
  } finally {
    blocker.close();
    rmSync(flag, { force: true });
  }
});

s('should serve a client on stdio that falls back from modern to initialize, without a late answer to what it gave up on', async () => {
  const child = spawn(TSX, [CLI, 'serve', '--stdio', '--quiet', '--', TSX, EXAMPLE], { cwd: ROOT, stdio: ['pipe', 'pipe', 'ignore'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  try {
    // A modern-first client that gave up on its discover (here: at once) and starts again with initialize.
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'server/discover', params: { _meta: META } })}\n`);
    child.stdin!.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'host', version: '1' } } })}\n`,
    );
    const deadline = Date.now() + 20_000;
    while (!out.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
    while (out.trim().split('\n').length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(
      lines.map((l) => l.id),
      [1, 2],
      JSON.stringify(lines),
    );
    assert.is(lines[0].result.protocolVersion, '2025-11-25');
    assert.is(lines[0].result.serverInfo.name, 'trip-desk');
    assert.ok(lines[1].result.tools.some((t: { name: string }) => t.name === 'book_table'));
    child.stdin!.end();
    assert.is(await exited(child), 0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

s('should answer with the failure of a server that never starts, say it once and exit 1 (--stdio, either era)', () => {
  const failing = [process.execPath, '-e', 'console.error("Error: no config file"); process.exit(2)'];
  const initialize = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'host', version: '1' } },
  };
  const discover = { jsonrpc: '2.0', id: 0, method: 'server/discover', params: { _meta: META } };
  for (const first of [discover, initialize]) {
    const r = spawnSync(TSX, [CLI, 'serve', '--stdio', '--quiet', '--', ...failing], {
      cwd: ROOT,
      encoding: 'utf8',
      input: `${JSON.stringify(first)}\n`,
      timeout: 30_000,
    });
    assert.is(r.status, 1, `${first.method}: ${r.stderr}`);
    const answers = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.is(answers.length, 1, r.stdout);
    assert.is(answers[0].id, 0);
    assert.match(answers[0].error.message, 'it exited with code 2 before it answered initialize: Error: no config file');
    assert.equal(answers[0].error.data.stderr, ['Error: no config file']);
    const said = r.stderr.split('\n').filter((l) => l.includes('failed'));
    assert.equal(
      said,
      [
        `mcp-dual-era serve: the upstream server (${failing.join(' ')}) failed: it exited with code 2 before it answered initialize: Error: no config file`,
      ],
      r.stderr,
    );
  }
});

s('should show every message in both eras with --verbose, keeping stdout for the protocol (--stdio)', async () => {
  const child = spawn(TSX, [CLI, 'serve', '--stdio', '--verbose', '--', TSX, EXAMPLE], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  try {
    const request = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: META } };
    child.stdin!.write(`${JSON.stringify(request)}\n`);
    const deadline = Date.now() + 20_000;
    while (!out.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.is(lines.length, 1, 'only the answer on stdout');
    assert.is(lines[0].id, 7);
    assert.is(lines[0].result.resultType, 'complete');
    const trace = err.split('\n');
    assert.ok(
      trace.some((l) => l.includes('client → us') && l.includes('"tools/list"') && l.includes('2026-07-28')),
      err,
    );
    assert.ok(
      trace.some((l) => l.includes('us → server') && l.includes('"initialize"')),
      'the legacy handshake the wrap made',
    );
    assert.ok(
      trace.some((l) => l.includes('server → us') && l.includes('"tools"')),
      err,
    );
    assert.ok(
      trace.some((l) => l.includes('us → client') && l.includes('"resultType":"complete"')),
      err,
    );
    child.stdin!.end();
    assert.is(await exited(child), 0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

s(
  'should answer a legacy initialize with the failure of a modern upstream that exited at start (--modern), not keep it waiting',
  async () => {
    const serve = start([
      '--modern',
      '--port',
      '0',
      '--',
      process.execPath,
      '-e',
      "process.stderr.write('no config file\\n'); process.exit(3)",
    ]);
    const url = await serve.listening;
    try {
      await new Promise((r) => setTimeout(r, 300));
      const controller = new AbortController();
      const bound = setTimeout(() => controller.abort(), 20_000);
      const answer = await fetch(url, {
        method: 'POST',
        signal: controller.signal,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
        }),
      }).then(
        (r) => r.text(),
        (e: unknown) => `no answer: ${String(e)}`,
      );
      clearTimeout(bound);
      assert.match(answer, '"code":-32603');
      assert.match(answer, 'the upstream server is unavailable: it exited with code 3 before it answered initialize');
      assert.match(answer, 'no config file');
    } finally {
      serve.child.kill('SIGINT');
      await exited(serve.child);
    }
  },
);

s('should say once, in one line, that an upstream which exits before it answers initialize could not start, and exit 1', async () => {
  const missing = spawnSync(TSX, [CLI, 'serve', '--quiet', '--port', '0', '--', 'node', '/mde-missing.js'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.is(missing.status, 1);
  const lines = missing.stderr.trim().split('\n');
  assert.is(lines.length, 1, missing.stderr);
  assert.match(
    lines[0]!,
    "the upstream server (node /mde-missing.js) failed: it exited with code 1 before it answered initialize: Error: Cannot find module '/mde-missing.js'",
  );
  // Started once, not restarted (--spares 0: no warm spare is started beside it).
  const dir = mkdtempSync(join(tmpdir(), 'mde-starts-'));
  const starts = join(dir, 'starts');
  try {
    const script = `require('node:fs').appendFileSync(${JSON.stringify(starts)}, 'started\\n'); process.stderr.write('fatal: no configuration\\n'); process.exit(3)`;
    const once = spawnSync(TSX, [CLI, 'serve', '--quiet', '--spares', '0', '--port', '0', '--', process.execPath, '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.is(once.status, 1);
    assert.match(once.stderr, 'exited with code 3 before it answered initialize: fatal: no configuration');
    assert.is(readFileSync(starts, 'utf8'), 'started\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

s('should start one server for a client whose first calls come all at once on stdio, and serve the calls after them on it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dual-era-burst-'));
  const started = join(dir, 'started');
  // Each start of the server says so in a file, then becomes the v1 SDK server itself.
  const upstream = `echo $$ >> '${started}'; exec '${process.execPath}' --import tsx '${LEGACY_STDIO}'`;
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--stdio', '--quiet', '--', 'sh', '-c', upstream], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const answers = new Map<number, { result?: { content?: Array<{ text?: string }>; resultType?: string } }>();
  let partial = '';
  child.stdout!.on('data', (c: Buffer) => {
    const lines = (partial + c.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) if (line.trim()) answers.set(JSON.parse(line).id, JSON.parse(line));
  });
  const burst = (from: number, count: number) =>
    child.stdin!.write(
      Array.from(
        { length: count },
        (_, i) =>
          `${JSON.stringify({ jsonrpc: '2.0', id: from + i, method: 'tools/call', params: { name: 'echo', arguments: { text: `call ${from + i}` }, _meta: META } })}\n`,
      ).join(''),
    );
  const answered = async (count: number) => {
    const deadline = Date.now() + 30_000;
    while (answers.size < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };
  try {
    // A host that calls several tools at once as soon as it starts: one chunk of 16 calls.
    burst(0, 16);
    await answered(16);
    burst(16, 48);
    await answered(64);
    for (let id = 0; id < 64; id++) {
      const answer = answers.get(id);
      assert.is(answer?.result?.content?.[0]?.text, `call ${id}`, `call ${id}: ${JSON.stringify(answer)}`);
      assert.is(answer?.result?.resultType, 'complete');
    }
    const servers = readFileSync(started, 'utf8').trim().split('\n');
    // The first call decides for the others whether the tool pushes (it does not): they wait for
    // it rather than each starting a server (seven did on a 2-core machine, and every later call
    // was spread over all of them). One more may start only if that first call outlasts the
    // patience of the others (100 ms) on a busy machine.
    assert.ok(servers.length <= 2, `${servers.length} servers started`);
    child.stdin!.end();
    assert.is(await exited(child), 0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

s.run();
