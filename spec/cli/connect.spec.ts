/**
 * `mcp-dual-era connect` as a host runs it: a modern-only v2 client (pinned to 2026-07-28), which
 * fails alone against server-everything, spawns the command in front of it and everything works;
 * `--verbose` shows both eras on stderr while stdout stays protocol only; a server that cannot be
 * started answers the host's request with an error and exits 1; usage errors exit 2. (The v1 client
 * through `connect` to a modern-only server is in spec/interop/legacyClient.spec.ts.)
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EVERYTHING, MARKER, markedProcesses, markedProcessesGone, reapMarked, ROOT } from '../helpers/everything.ts';
import {
  assertBasics,
  assertCancellation,
  assertInputRounds,
  assertLogLevels,
  assertProgress,
  assertSubscription,
  connectPinned,
  type Connected,
} from '../helpers/modernClient.ts';
import { connectCommand } from '../helpers/modernFixture.ts';
import type { ModernClientTransport } from '../../lib/wrap/modernClient/wrapModernClient.ts';

const CLI = resolve(ROOT, 'lib/cli/main.ts');

const e = suite('mcp-dual-era connect: a pinned modern client to server-everything (legacy, stdio)');
const marker = randomUUID();
let connected: Connected | undefined;
let stderr = '';

e.before(async () => {
  const { command, args, cwd } = connectCommand(['--roots', 'file:///work/project', '--', process.execPath, EVERYTHING, 'stdio']);
  const transport = new StdioClientTransport({
    command,
    args: args.filter((a) => a !== '--quiet'),
    cwd,
    env: { ...process.env, [MARKER]: marker } as Record<string, string>,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  connected = await connectPinned(transport as unknown as ModernClientTransport);
});

e.after(async () => {
  await connected?.client.close();
  reapMarked(marker);
});

e('should list and call tools, get prompts and read resources', async () => {
  await assertBasics(connected!);
});

e('should have said what it bridged, on stderr, once the first request told the host era', () => {
  assert.match(stderr, 'the server speaks the legacy era: messages are translated');
  assert.match(stderr, 'modern host ⇄ server at');
});

e('should turn the server pushes into input_required rounds, roots from --roots', async () => {
  await assertInputRounds(connected!);
});

e('should deliver progress, and logs only at or above the requested level', async () => {
  await assertProgress(connected!);
  await assertLogLevels(connected!);
});

e('should deliver resource updates on a subscriptions/listen stream', async () => {
  await assertSubscription(connected!);
});

e('should cancel a call', async () => {
  await assertCancellation(connected!);
});

e('should leave no server process behind once the host has closed', async () => {
  await connected!.client.close();
  assert.ok(await markedProcessesGone(marker, 5000), `still running: ${JSON.stringify(markedProcesses(marker))}`);
});

e.run();

/** Runs `connect` with these lines on stdin; resolves when it exits. */
function run(
  args: readonly string[],
  lines: readonly unknown[],
  options: { keepOpenMs?: number } = {},
): Promise<{ code: number | null; out: any[]; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'connect', ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    for (const line of lines) child.stdin.write(`${JSON.stringify(line)}\n`);
    setTimeout(() => child.stdin.end(), options.keepOpenMs ?? 0);
    child.on('close', (code) =>
      done({
        code,
        out: out
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
        err,
      }),
    );
  });
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'host', version: '1' } },
};
const DISCOVER = {
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
};

const c = suite('mcp-dual-era connect: verbose, failures and usage');

c('should show both eras with --verbose on stderr, and put only protocol messages on stdout', async () => {
  const { code, out, err } = await run(['--verbose', '--', process.execPath, EVERYTHING, 'stdio'], [DISCOVER], { keepOpenMs: 4000 });
  assert.is(code, 0);
  assert.is(out.length, 1, 'one answer, nothing else on stdout');
  assert.is(out[0].id, 1);
  assert.equal(out[0].result.supportedVersions, ['2026-07-28']);
  assert.is(out[0].result._meta['io.modelcontextprotocol/serverInfo'].name, 'mcp-servers/everything');
  const lines = err.split('\n');
  assert.ok(
    lines.some((l) => l.includes('client → us') && l.includes('"server/discover"')),
    err,
  );
  assert.ok(
    lines.some((l) => l.includes('us → server') && l.includes('"initialize"')),
    'the legacy side of the same exchange',
  );
  assert.ok(
    lines.some((l) => l.includes('server → us') && l.includes('"protocolVersion":"2025-11-25"')),
    err,
  );
  assert.ok(
    lines.some((l) => l.includes('us → client') && l.includes('"supportedVersions"')),
    err,
  );
});

c(
  'should serve a modern host that falls back to initialize on the same pipe as a legacy host, with no late answer to its discover',
  async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'connect', '--', process.execPath, EVERYTHING, 'stdio'], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    // Answers only: the server's own notifications are relayed too.
    const answers = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((m) => 'result' in m || 'error' in m);
    const until = async (n: number) => {
      const deadline = Date.now() + 20_000;
      while (answers().length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    };
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    const closed = new Promise<number | null>((r) => child.once('close', r));
    try {
      // The host gave up on its server/discover (here: at once) and starts again with initialize.
      send({ ...DISCOVER, id: 0 });
      send(INITIALIZE);
      await until(1);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      await until(2);
      await new Promise((r) => setTimeout(r, 500));
      const out = answers();
      assert.equal(
        out.map((m) => m.id),
        [1, 2],
        JSON.stringify(out).slice(0, 500),
      );
      assert.is(out[0].result.protocolVersion, '2025-11-25');
      assert.is(out[0].result.serverInfo.name, 'mcp-servers/everything');
      assert.ok(out[1].result.tools.some((t: { name: string }) => t.name === 'echo'));
      assert.match(err, 'the host fell back to initialize');
      child.stdin.end();
      assert.is(await closed, 0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  },
);

c('should answer the host with an error and exit 1 when the server cannot be started', async () => {
  const { code, out, err } = await run(['--', 'no-such-mcp-server-command'], [INITIALIZE], { keepOpenMs: 3000 });
  assert.is(code, 1);
  assert.is(out.length, 1);
  assert.is(out[0].id, 1);
  assert.is(out[0].error.code, -32603);
  assert.match(out[0].error.message, 'no-such-mcp-server-command');
  assert.match(err, 'cannot reach no-such-mcp-server-command');
});

c('should answer a host of either era with the failure of a server that never starts', async () => {
  const failing = ['--', process.execPath, '-e', 'console.error("Error: no config file"); process.exit(2)'];
  for (const first of [
    { ...DISCOVER, id: 0 },
    { ...INITIALIZE, id: 0 },
  ]) {
    const { out } = await run(failing, [first], { keepOpenMs: 3000 });
    const answers = out.filter((m) => m.id === 0);
    assert.is(answers.length, 1, `${first.method}: ${JSON.stringify(out)}`);
    assert.is(answers[0].error.code, -32603);
    assert.match(answers[0].error.message, 'it exited with code 2 before it answered initialize: Error: no config file');
    assert.equal(answers[0].error.data.stderr, ['Error: no config file']);
  }
});

c('should answer a line that is not JSON with a parse error', async () => {
  const child = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'connect', '--quiet', 'http://127.0.0.1:9/mcp'], {
    cwd: ROOT,
    input: 'not json\n',
    encoding: 'utf8',
  });
  assert.is(child.status, 0);
  assert.equal(JSON.parse(child.stdout.trim()), { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the line is not JSON' } });
});

c('should exit 2 with a clear message on bad usage', () => {
  const cases: Array<[string[], string]> = [
    [[], 'name the server'],
    [['ftp://example.com/mcp'], 'must be an http or https URL'],
    [['not a url'], 'not a URL'],
    [['--header', 'nocolon', 'http://127.0.0.1/mcp'], "--header must look like 'Name: value'"],
    [['--host-era', 'future', 'http://127.0.0.1/mcp'], '--host-era is legacy, modern or auto'],
  ];
  for (const [args, message] of cases) {
    const child = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'connect', ...args], { cwd: ROOT, input: '', encoding: 'utf8' });
    assert.is(child.status, 2, args.join(' '));
    assert.match(child.stderr, message);
    assert.is(child.stdout, '');
  }
  const help = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'connect', '--help'], { cwd: ROOT, encoding: 'utf8' });
  assert.is(help.status, 0);
  assert.match(help.stdout, 'mcp-dual-era connect [options] <url>');
  assert.match(help.stdout, 'Exit codes: 0');
});

c.run();
