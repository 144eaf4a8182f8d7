/**
 * The test runner (spec/run.ts) always ends with its summary line and a non-zero exit when
 * anything failed: a file that cannot load, an uncaught exception, an unhandled rejection, a test
 * that can never finish. Run on the spec files of fixtures/runner/ in a process of their own, with
 * every file in that process (`--jobs 1`) and across worker processes (`--jobs 2`).
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '..');
const tsx = resolve(root, 'node_modules/.bin/tsx');

function runWith(flags: string[], files: string[]): { status: number | null; out: string; last: string } {
  const r = spawnSync(tsx, ['spec/run.ts', ...flags, ...files.map((f) => `fixtures/runner/${f}.spec.ts`)], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const lines = r.stdout.trim().split('\n');
  return { status: r.status, out: r.stdout + r.stderr, last: lines[lines.length - 1] ?? '' };
}

for (const jobs of [1, 2]) {
  const run = (...files: string[]) => runWith(['--jobs', String(jobs)], files);
  const runner = suite(`spec/run.ts --jobs ${jobs}`);

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
    assert.match(r.out, /the run stopped in fixtures\/runner\/stalled\.spec\.ts before its end/);
    // In one process the run ends there; across workers the others go on.
    if (jobs === 1)
      assert.match(
        r.last,
        /^1 passed, 1 failed \(2 files, \d+ ms\); the run stopped in fixtures\/runner\/stalled\.spec\.ts before its end$/,
      );
    else assert.match(r.last, /^1 passed, 1 failed \(2 files, \d+ ms\)$/);
    assert.is(r.status, 1);
  });

  runner.run();
}

const workers = suite('spec/run.ts across workers');

workers('should run files at once, print each whole, and count them all', () => {
  const r = runWith(['--jobs', '2'], ['fine', 'crashing', 'stalled']);
  const blocks = r.out.split(/\n(?=fixtures\/runner\/)/).filter((b) => b.startsWith('fixtures/'));
  assert.is(blocks.length, 3);
  for (const block of blocks.filter((b) => !b.includes('stalled')))
    assert.match(block, /^fixtures\/runner\/\w+\.spec\.ts\n[^]*\(\d+ ms\)\n/);
  assert.match(r.last, /^4 passed, 3 failed \(3 files/);
  assert.is(r.status, 1);
});

workers('should fail a file that outlasts --file-timeout, stop its worker and go on with the rest', () => {
  const r = runWith(['--jobs', '2', '--file-timeout', '3'], ['hung', 'fine', 'crashing']);
  assert.match(r.out, /fixtures\/runner\/hung\.spec\.ts did not end in 3 s/);
  assert.match(r.out, /failed in: .*fixtures\/runner\/hung\.spec\.ts/);
  assert.match(r.last, /^4 passed, 3 failed \(3 files/);
  assert.is(r.status, 1);
});

workers.run();
