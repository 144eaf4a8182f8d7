import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { okValue } from '../helpers/outcome.ts';
import { classify, errorResponse, nestingDepth, parseMessage } from '../../lib/core/jsonrpc.ts';

const c = suite('classify');
c('should sort requests, notifications, results, errors and batches', () => {
  const kinds = [
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 'a', result: {} },
    { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'nope' } },
    [{ jsonrpc: '2.0', id: 1, method: 'ping' }],
  ].map((m) => {
    const r = classify(m);
    return r.ok ? r.value.kind : 'fail';
  });
  assert.equal(kinds, ['request', 'notification', 'result', 'error', 'batch']);
});
c('should refuse broken envelopes with -32600 and the id when it can be read', () => {
  const cases: Array<[unknown, string | number | null]> = [
    [{ jsonrpc: '1.0', id: 7, method: 'x' }, 7],
    [{ jsonrpc: '2.0', id: 7, method: 42 }, 7],
    [{ jsonrpc: '2.0', id: 1.5, method: 'x' }, null],
    [{ jsonrpc: '2.0', id: null, method: 'x' }, null],
    [{ jsonrpc: '2.0', id: 'q', method: 'x', params: [1, 2] }, 'q'],
    [{ jsonrpc: '2.0', id: 3, result: {}, error: { code: 1, message: 'x' } }, 3],
    [{ jsonrpc: '2.0', id: 3, result: 'text' }, 3],
    [{ jsonrpc: '2.0' }, null],
    ['string', null],
    [null, null],
    [[], null],
  ];
  for (const [input, id] of cases) {
    const r = classify(input);
    assert.not.ok(r.ok, JSON.stringify(input));
    if (!r.ok) {
      assert.is(r.error.code, -32600);
      assert.is(r.error.id, id, JSON.stringify(input));
    }
  }
});
c('should accept an error response without an id (the request id was unreadable)', () => {
  const r = classify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' } });
  assert.is(okValue(r).kind, 'error');
});
c.run();

const p = suite('parseMessage');
p('should answer invalid JSON with -32700', () => {
  const r = parseMessage('{"jsonrpc":');
  assert.not.ok(r.ok);
  if (!r.ok) assert.is(r.error.code, -32700);
});
p('should bound nesting depth without overflowing the stack', () => {
  const deep = '['.repeat(5000) + ']'.repeat(5000);
  const r = parseMessage(deep);
  assert.not.ok(r.ok);
  if (!r.ok) assert.match(r.error.message, /nesting deeper than 64/);
  assert.is(nestingDepth(JSON.parse(deep)), 5000);
  assert.ok(parseMessage(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { a: { b: { c: [1] } } } })).ok);
});
p('should classify what `rewrite` makes of the decoded value, given its text, and only of valid JSON', () => {
  const text = '{"jsonrpc":"2.0","id":1,"method":"x"}';
  const seen: string[] = [];
  const rewrite = (value: unknown, from: string) => (seen.push(from), { ...(value as object), id: 'two' });
  const r = okValue(parseMessage(text, { rewrite }));
  assert.equal(r.kind === 'request' ? r.message.id : undefined, 'two');
  assert.not.ok(parseMessage('{"jsonrpc":', { rewrite }).ok);
  assert.equal(seen, [text]);
});
p.run();

const e = suite('errorResponse');
e('should omit the id when it is unknown and keep only code, message and data', () => {
  assert.equal(errorResponse(null, { code: -32700, message: 'Parse error' }), {
    jsonrpc: '2.0',
    error: { code: -32700, message: 'Parse error' },
  });
  const withExtra = { code: -32602, message: 'bad', data: { x: 1 }, status: 400 } as const;
  assert.equal(errorResponse(5, withExtra), { jsonrpc: '2.0', id: 5, error: { code: -32602, message: 'bad', data: { x: 1 } } });
});
e.run();
