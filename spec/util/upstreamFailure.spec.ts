import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BODY_EXCERPT_CHARS,
  bodyExcerpt,
  describeFailure,
  failureOf,
  STDERR_LINE_CHARS,
  STDERR_TAIL_LINES,
  stderrTail,
  telling,
  upstreamUnavailable,
} from '../../lib/util/upstreamFailure.ts';

const f = suite('upstreamFailure');
f('should bound a body excerpt and collapse its whitespace', () => {
  assert.is(bodyExcerpt('  database\n\n is   down \n'), 'database is down');
  const long = bodyExcerpt('y'.repeat(10_000));
  assert.is(long.length, BODY_EXCERPT_CHARS + 1);
  assert.ok(long.endsWith('…'));
});
f('should keep the last stderr lines, each bounded, blank ones skipped', () => {
  const text = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n') + `\n\n${'z'.repeat(1000)}\r\n`;
  const tail = stderrTail(text);
  assert.is(tail.length, STDERR_TAIL_LINES);
  assert.is(tail[0], 'line 32');
  assert.is(tail.at(-1)!.length, STDERR_LINE_CHARS + 1);
});
f('should keep the line that names the error when a long stack trace pushes it out of the tail (Node 24)', () => {
  // What Node 24.22 writes for a missing entry point: the error line is the 13th from the end.
  const node24 = [
    'node:internal/modules/cjs/loader:1568',
    '  throw err;',
    '  ^',
    '',
    "Error: Cannot find module '/mde-missing.js'",
    ...Array.from({ length: 8 }, (_, i) => `    at frame${i} (node:internal/modules/cjs/loader:${1000 + i}:5)`),
    "  code: 'MODULE_NOT_FOUND',",
    '  requireStack: []',
    '}',
    '',
    'Node.js v24.22.3',
  ].join('\n');
  const tail = stderrTail(node24);
  assert.is(tail.length, STDERR_TAIL_LINES);
  assert.is(tail[0], "Error: Cannot find module '/mde-missing.js'");
  assert.is(tail.at(-1), 'Node.js v24.22.3');
  assert.is(telling(tail), "Error: Cannot find module '/mde-missing.js'");
  // A tail that names an error itself is left as it is.
  assert.is(stderrTail(`Error: early\n${Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n')}\nError: late`)[0], 'line 11');
});
f('should pick the line that names the error, else the last one', () => {
  assert.is(
    telling(['node:internal/modules/cjs/loader:1228', "Error: Cannot find module '/x.js'", '    at Module._load (…)', 'Node.js v20.20.2']),
    "Error: Cannot find module '/x.js'",
  );
  assert.is(telling(['starting', 'TypeError: x is not a function', '    at y']), 'TypeError: x is not a function');
  assert.is(telling(['starting', 'bye']), 'bye');
  assert.is(telling([]), undefined);
});
f('should describe an exit, a signal, an HTTP refusal and a network error', () => {
  assert.is(
    describeFailure({ exitCode: 1, stderr: ['Error: boom', '    at x'] }, 'before it answered initialize'),
    'exited with code 1 before it answered initialize: Error: boom',
  );
  assert.is(describeFailure({ signal: 'SIGKILL' }), 'was ended by SIGKILL');
  assert.is(describeFailure({ httpStatus: 500, body: 'database is down' }), 'answered HTTP 500: database is down');
  assert.is(describeFailure({ network: 'connect ECONNREFUSED 127.0.0.1:1' }), 'could not be reached (connect ECONNREFUSED 127.0.0.1:1)');
  assert.is(describeFailure({}), undefined);
});
f('should put the failure in data, and read it back bounded', () => {
  const e = upstreamUnavailable('it exited with code 2', { exitCode: 2, stderr: ['fatal'] });
  assert.equal(e, {
    code: -32603,
    message: 'Internal error: the upstream server is unavailable: it exited with code 2',
    data: { exitCode: 2, stderr: ['fatal'] },
  });
  assert.equal(upstreamUnavailable('gone'), { code: -32603, message: 'Internal error: the upstream server is unavailable: gone' });
  assert.equal(failureOf({ httpStatus: 503, body: 'x'.repeat(5000), other: 1 }), { httpStatus: 503, body: bodyExcerpt('x'.repeat(5000)) });
  assert.is(failureOf({ upstreamCode: -32000 }), undefined);
  assert.is(failureOf('text'), undefined);
});
f.run();
