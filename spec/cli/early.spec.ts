/**
 * `startServerAhead`: which command lines start their server before the rest of the command
 * loads (`connect -- <command>`, `serve --stdio -- <command>`), with the process the command will
 * ask for (the same command line, `--env` and `--cwd`); and which start nothing (HTTP `serve`,
 * whose port comes first; `--modern`; `--help`; arguments the command will refuse).
 */
import { tmpdir } from 'node:os';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startServerAhead } from '../../lib/cli/early.ts';
import { takeAhead } from '../../lib/transport/spawnChild.ts';

const IDLE = [process.execPath, '-e', 'setTimeout(() => {}, 10000)'];
const asked = (env: Record<string, string> = {}, cwd?: string) => ({
  command: IDLE[0]!,
  args: IDLE.slice(1),
  env,
  ...(cwd ? { cwd } : {}),
});

/** Whether the command line started the process `options` describes (which is then stopped). */
function started(options: ReturnType<typeof asked>): boolean {
  const ahead = takeAhead(options);
  ahead?.child.kill('SIGKILL');
  return ahead !== undefined;
}

const s = suite('startServerAhead');

s('should start the server of connect -- <command> and serve --stdio -- <command>, as the command will ask for it', () => {
  startServerAhead(['connect', '--quiet', '--', ...IDLE]);
  assert.ok(started(asked()), 'connect');
  startServerAhead(['connect', '--env', 'MDE_A=1', '--cwd', tmpdir(), '--roots', 'file:///x', '--', ...IDLE]);
  assert.ok(started(asked({ MDE_A: '1' }, tmpdir())), 'connect with --env and --cwd');
  startServerAhead(['serve', '--stdio', '--spares', '0', '--', ...IDLE]);
  assert.ok(started(asked()), 'serve --stdio');
});

s('should not hand the process to a command line that differs from it', () => {
  startServerAhead(['connect', '--env', 'MDE_A=1', '--', ...IDLE]);
  assert.not.ok(started(asked({ MDE_A: '2' })), 'another environment');
  assert.ok(started(asked({ MDE_A: '1' })), 'its own');
});

s('should start nothing for serve over HTTP, --modern, --help, or arguments the command will refuse', () => {
  for (const args of [
    ['serve', '--', ...IDLE],
    ['serve', '--stdio', '--modern', '--', ...IDLE],
    ['serve', '--stdio', '--upstream', 'http://127.0.0.1:9/mcp', '--', ...IDLE],
    ['connect', '--help', '--', ...IDLE],
    ['connect', '--no-such-option', '--', ...IDLE],
    ['connect', 'http://127.0.0.1:9/mcp', '--', ...IDLE],
    ['connect', '--env', 'no-equals-sign', '--', ...IDLE],
    ['probe', '--', ...IDLE],
    ['connect'],
  ]) {
    startServerAhead(args);
    assert.not.ok(started(asked()), args.join(' '));
  }
});

s.run();
