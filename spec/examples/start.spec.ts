/**
 * `npm start` as a new user meets it: the built-in example is served, and only once it listens
 * are the lines to try printed, with the address it really listens on; pasted into a shell, every
 * one of them works — discover, a call that gets `input_required`, the retry that answers it, and a
 * legacy `initialize` on the same endpoint.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { namesCommand, startTarget } from '../../examples/startTarget.mjs';
import { builtCli } from '../helpers/built.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const ROOT = resolve(import.meta.dirname, '../..');

/** A TCP port free on 127.0.0.1 a moment ago. */
function freePort(): Promise<number> {
  return new Promise((done, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
const TSX = resolve(ROOT, 'node_modules/.bin/tsx');

const start = suite('npm start (examples/start.ts)');

start('should print its lines once it listens, and every line should work when pasted into a shell', async () => {
  const child = spawn(TSX, [resolve(ROOT, 'examples/start.ts')], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8');
  const printed = new Promise<void>((resolveDone, reject) => {
    child.stderr.on('data', (chunk: string) => {
      err += chunk;
      if (err.includes('Ctrl-C stops it')) resolveDone();
    });
    child.once('exit', (code) => reject(new Error(`npm start exited ${code}: ${err}`)));
  });
  try {
    await printed;
    const serving = err.indexOf('mcp-dual-era: serving');
    const tryIt = err.indexOf('Try it while it runs');
    assert.ok(serving !== -1 && serving < tryIt, `the lines come after the endpoint listens:\n${err}`);
    const url = /serving .* at (http:\/\/127\.0\.0\.1:(\d+)\/mcp)/.exec(err);
    assert.ok(url && url[2] !== '0', 'a real port');
    assert.match(err.slice(tryIt), url![1]!);
    // The commands, as a user pastes them (comments and all), run one after another in one shell.
    const script = err.slice(tryIt, err.indexOf('Or point any MCP client')).split('\n').slice(1).join('\n');
    const marks = script
      .split('\n')
      .filter((l) => l.trim().startsWith('#'))
      .map((l) => l.trim());
    const numbered = script
      .split('\n')
      .map((l) => (l.trim().startsWith('#') ? `echo; echo '@@ ${marks.indexOf(l.trim())}'` : l))
      .join('\n');
    const ran = spawnSync('bash', ['-c', numbered], { encoding: 'utf8', timeout: 30_000 });
    assert.is(ran.status, 0, ran.stderr);
    const outputs = ran.stdout
      .split(/^@@ \d+$/m)
      .slice(1)
      .map((o) => o.trim());
    assert.is(outputs.length, 4, ran.stdout);
    const [discover, call, retry, legacy] = outputs as [string, string, string, string];
    assert.equal(JSON.parse(discover).result.supportedVersions, ['2026-07-28']);
    const first = JSON.parse(call).result;
    assert.is(first.resultType, 'input_required');
    assert.ok(Object.keys(first.inputRequests).length === 1 && typeof first.requestState === 'string', call);
    const done = JSON.parse(retry).result;
    assert.is(done.resultType, 'complete');
    assert.equal(done.content, [{ type: 'text', text: 'Booked a table for 2 at Casa Lisboa at 19:30.' }]);
    assert.match(legacy, /^HTTP\/1\.1 200/);
    assert.match(legacy, /mcp-session-id: \S+/i);
    assert.match(legacy, '"protocolVersion":"2025-11-25"');
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
  }
});

start('should be the one example that says it is what npm start runs', () => {
  const script = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start'];
  assert.is(script, 'node examples/start.mjs');
  for (const name of readdirSync(resolve(ROOT, 'examples')).filter((n) => n.endsWith('.ts'))) {
    const header = readFileSync(resolve(ROOT, 'examples', name), 'utf8').split('*/')[0]!;
    assert.is(header.includes('`npm start`:'), name === 'start.ts', name);
  }
});

start('should run the translator walk-through (examples/translate-session.ts) to its end', () => {
  const ran = spawnSync(TSX, [resolve(ROOT, 'examples/translate-session.ts')], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  assert.is(ran.status, 0, ran.stderr);
  assert.match(ran.stdout, 'initialize becomes server/discover');
  assert.match(ran.stdout, 'input_required');
});

start('should serve the example with options only, and run the command with one', async () => {
  assert.ok(namesCommand(['connect', '--', 'node', 'server.js']));
  assert.ok(namesCommand(['--help']) && namesCommand(['--version']));
  assert.not.ok(namesCommand([]));
  assert.not.ok(namesCommand(['--port', '3021']));
  // `npm start -- --port <n>` serves the example there (a port found free; another process may take
  // it before the example listens, which the example says, and then another is tried).
  for (let attempt = 1; ; attempt++) {
    const port = String(await freePort());
    const child = spawn(process.execPath, [resolve(ROOT, 'examples/start.mjs'), '--port', port], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8');
    try {
      await new Promise<void>((done, reject) => {
        child.stderr.on('data', (c: string) => {
          err += c;
          if (err.includes('Ctrl-C stops it')) done();
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      assert.match(err, `serving `);
      assert.match(err, `at http://127.0.0.1:${port}/mcp`);
      return;
    } catch (e) {
      if (attempt < 3 && err.includes(`port ${port} is in use`)) continue;
      throw e;
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
    }
  }
});

start('should run the compiled command from a built checkout, and the source from one whose build is older', () => {
  const root = mkdtempSync(join(tmpdir(), 'start-target-'));
  try {
    mkdirSync(join(root, 'lib/cli'), { recursive: true });
    mkdirSync(join(root, 'dist/cli'), { recursive: true });
    assert.is(startTarget(root), 'source', 'not built');
    writeFileSync(join(root, 'lib/cli/main.ts'), '');
    writeFileSync(join(root, 'dist/cli/main.js'), '');
    const at = (file: string, seconds: number) => utimesSync(join(root, file), seconds, seconds);
    at('lib/cli/main.ts', 1_000);
    at('dist/cli/main.js', 2_000);
    assert.is(startTarget(root), 'compiled', 'built after the last change');
    at('lib/cli/main.ts', 3_000);
    assert.is(startTarget(root), 'source', 'changed since the build');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  // This checkout, built: the command runs compiled, and answers as the source would.
  builtCli();
  assert.is(startTarget(ROOT), 'compiled');
  const version = spawnSync(process.execPath, [resolve(ROOT, 'examples/start.mjs'), '--version'], { cwd: ROOT, encoding: 'utf8' });
  assert.is(version.status, 0, version.stderr);
  assert.match(version.stdout, /^\d+\.\d+\.\d+/);
});

start.run();
