/**
 * What a person sees when they get the command wrong: the error in one line, and where the options
 * are, not the whole help (which would scroll the line away); `help` lists the commands first, and
 * `help <command>` prints that command's options. The built command, as installed.
 */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { builtCli } from '../helpers/built.ts';

function run(args: readonly string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [builtCli(), ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');

const usage = suite('usage errors and help');

usage('should say a usage error in one line, and where the options are, for every command', () => {
  for (const command of ['serve', 'connect', 'probe', 'explain', 'migrate']) {
    const { code, out, err } = run([command, '--no-such-option']);
    assert.is(code, 2, `${command}: ${err}`);
    assert.is(out, '');
    const [said, hint, ...more] = lines(err);
    assert.ok(said?.startsWith(`mcp-dual-era ${command}: `) && said.includes("'--no-such-option'"), `${command}: ${err}`);
    assert.is(hint, `Run 'mcp-dual-era ${command} --help' for its options.`);
    assert.equal(more, [], `${command}: nothing more`);
  }
  const missing = run(['serve']);
  assert.is(missing.code, 2);
  assert.equal(lines(missing.err), [
    'mcp-dual-era serve: name the upstream server (-- <command> or --upstream <url>)',
    "Run 'mcp-dual-era serve --help' for its options.",
  ]);
});

usage('should list the commands first in help, and print a command’s options with help <command>', () => {
  for (const args of [['help'], ['--help'], []]) {
    const { code, out } = run(args);
    assert.is(code, 0, args.join(' '));
    const commands = lines(out).findIndex((l) => l === 'Commands:');
    assert.ok(commands >= 0 && commands < 6, `the commands come first: ${out}`);
    for (const name of ['serve', 'connect', 'probe', 'explain', 'migrate', 'help'])
      assert.ok(
        lines(out)
          .slice(commands + 1, commands + 8)
          .some((l) => l.trimStart().startsWith(`${name} `)),
        `${name} is listed`,
      );
  }
  for (const command of ['serve', 'connect', 'probe', 'explain', 'migrate']) {
    const { code, out } = run(['help', command]);
    assert.is(code, 0, command);
    assert.is(out, run([command, '--help']).out.replace(/^(?!Usage:)/, 'Usage:\n'), `help ${command} is ${command} --help`);
  }
});

usage('should say an unknown command in one line, with the commands', () => {
  for (const args of [['serv'], ['help', 'serv']]) {
    const { code, err } = run(args);
    assert.is(code, 2);
    assert.equal(lines(err), [
      'mcp-dual-era: unknown command "serv" (the commands: serve, connect, probe, explain, migrate)',
      "Run 'mcp-dual-era help' for the commands.",
    ]);
  }
});

usage('should build the command executable', () => {
  assert.ok((statSync(builtCli()).mode & 0o111) !== 0, 'dist/cli/main.js has its execute bit');
});

usage.run();
