/**
 * The test runner (spec/run.ts) always ends with its summary line and a non-zero exit when
 * anything failed: a file that cannot load, an uncaught exception, an unhandled rejection, a test
 * that can never finish. Run on the spec files of fixtures/runner/ in a process of their own.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '..');
const tsx = resolve(root, 'node_modules/.bin/tsx');

function run(...files: string[]): { status: number | null; out: string; last: string } {
  const r = spawnSync(tsx, ['spec/run.ts', ...files.map((f) => `fixtures/runner/${f}.spec.ts`)], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  const lines = r.stdout.trim().split('\n');
  return { status: r.status, out: r.stdout + r.stderr, last: lines[lines.length - 1] ?? '' };
}

const runner = suite('spec/run.ts');

runner('should pass and exit 0 when every test passes', () => {
  const r = run('fine');
  assert.match(r.last, /^1 passed, 0 failed \(1 files, \d+ ms\)$/);
  assert.is(r.status, 0);
});

runner('should count a file that fails to load, and still run the others', () => {
  const r = run('unloadable', 'fine');
  assert.match(r.out, /a failure to load in fixtures\/runner\/unloadable\.spec\.ts/);
  assert.match(r.out, /ENOENT/);
  assert.match(r.last, /^1 passed, 1 failed \(2 files/);
  assert.is(r.status, 1);
});

runner('should count uncaught exceptions and unhandled rejections, and end with the summary', () => {
  const r = run('crashing', 'fine');
  assert.match(r.out, /uncaught exception in fixtures\/runner\/crashing\.spec\.ts:\nError: thrown from a timer/);
  assert.match(r.out, /unhandled rejection in fixtures\/runner\/crashing\.spec\.ts:\nError: rejected and dropped/);
  assert.match(r.last, /^4 passed, 2 failed \(2 files/);
  assert.is(r.status, 1);
});

runner('should print the summary when a test can never finish', () => {
  const r = run('fine', 'stalled');
  assert.match(r.last, /^1 passed, 1 failed \(2 files, \d+ ms\); the run stopped in fixtures\/runner\/stalled\.spec\.ts before its end$/);
  assert.is(r.status, 1);
});

runner.run();
