/**
 * Ids held exactly: what `holdExactIds` holds (ids JavaScript numbers would change, at the top
 * level of a message or of each message of a batch, and a cancellation's `requestId`) and what it
 * leaves alone (ordinary ids, ids with a fraction, numbers deeper in `params`, text inside strings);
 * `exactJson` and `withExactIds` writing them back as they came.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseMessage } from '../../lib/core/jsonrpc.ts';
import { exactJson, holdExactIds, holdsExactIds, withExactIds } from '../../lib/transport/exactIds.ts';

/** A request's text with its id written as `id`, exactly. */
const request = (id: string, method = 'tools/list') => `{"jsonrpc":"2.0","id":${id},"method":"${method}"}`;
const held = (text: string) => holdExactIds(JSON.parse(text), text) as Record<string, any>;

const h = suite('holdExactIds');

h('should leave an ordinary message as it was decoded, the same object', () => {
  for (const text of [
    request('7'),
    request('"abc"'),
    request('0'),
    request('-12'),
    request('9007199254740991'),
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    `[${request('1')},${request('"x"')}]`,
    '"text"',
    'null',
  ]) {
    const value = JSON.parse(text);
    assert.is(holdExactIds(value, text), value, text);
  }
});

h('should hold every id a number would change, and write it back as it came', () => {
  for (const id of [
    '9007199254740993',
    '1208925819614629174706176',
    '-9007199254740993',
    '1e30',
    '-1E+300',
    '1.0',
    '-0',
    '1.5e1',
    '100e-2',
    '123456789012345678901234567890',
    `1${'0'.repeat(300)}`,
  ]) {
    const text = request(id);
    const value = held(text);
    assert.type(value['id'], 'string', id);
    assert.ok(holdsExactIds(value), id);
    assert.is(exactJson(value), text, id);
  }
});

h(
  'should leave an id with a fraction or past any double as it decodes, and make one with a fraction that rounds to an integer no id at all',
  () => {
    assert.is(held(request('1.5'))['id'], 1.5);
    assert.is(held(request('1.50'))['id'], 1.5);
    assert.is(held(request('1e400'))['id'], Infinity);
    assert.is(held(request(`-1${'0'.repeat(400)}`))['id'], -Infinity);
    for (const id of ['9007199254740993.5', '1.0000000000000000001', '1e-400', '1e400', '1.5']) {
      const outcome = parseMessage(request(id), { rewrite: holdExactIds });
      assert.not.ok(outcome.ok, id);
      if (!outcome.ok) assert.equal([outcome.error.code, outcome.error.id], [-32600, null], id);
    }
  },
);

h('should classify a held id as the request it is', () => {
  const outcome = parseMessage(request('9007199254740993'), { rewrite: holdExactIds });
  assert.ok(outcome.ok && outcome.value.kind === 'request');
  if (outcome.ok && outcome.value.kind === 'request') assert.is(exactJson(outcome.value.message), request('9007199254740993'));
});

h('should hold the same id the same way, in a request and in the cancellation that names it', () => {
  const cancel = held('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993,"reason":"r"}}');
  assert.is(cancel['params']['requestId'], held(request('9007199254740993'))['id']);
  assert.is(exactJson(cancel), '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993,"reason":"r"}}');
  assert.is(
    held('{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":9007199254740993}}')['params']['requestId'],
    9007199254740992,
    'only a cancellation names a request',
  );
});

h('should hold the ids of each message of a batch, and no other', () => {
  const text = `[${request('9007199254740993')},${request('5')},${request('-1e300', 'ping')},{"jsonrpc":"2.0","method":"notifications/initialized"}]`;
  const batch = holdExactIds(JSON.parse(text), text) as Array<Record<string, unknown>>;
  assert.equal(
    batch.map((m) => typeof m['id']),
    ['string', 'number', 'string', 'undefined'],
  );
  assert.is(exactJson(batch), text);
});

h('should leave numbers deeper in params as JSON.parse decoded them, whatever their member is called', () => {
  const text =
    '{"jsonrpc":"2.0","method":"x","params":{"id":9007199254740993,"a\\"id":9007199254740995,"t":"\\"id\\":9007199254740997"},"id":9007199254740993}';
  const value = held(text);
  assert.type(value['id'], 'string');
  assert.equal(value['params'], { id: 9007199254740992, 'a"id': 9007199254740996, t: '"id":9007199254740997' });
  assert.is(
    exactJson(value),
    text.replace('{"id":9007199254740993', '{"id":9007199254740992').replace(':9007199254740995', ':9007199254740996'),
  );
  const nestedOnly = '{"jsonrpc":"2.0","method":"x","params":{"id":9007199254740993},"id":1.0}';
  assert.is(exactJson(held(nestedOnly)), nestedOnly.replace('9007199254740993', '9007199254740992'));
});

h('should find the id wherever the client put it, with any whitespace', () => {
  const text = '{ "method" : "x", "params" : { "id" : 1 } ,\n\t"jsonrpc" : "2.0" , "id" :\r\n 9007199254740993 }';
  assert.is(exactJson(held(text)), '{"method":"x","params":{"id":1},"jsonrpc":"2.0","id":9007199254740993}');
});

h.run();

const w = suite('exactJson');

w('should write what JSON.stringify writes when nothing is held, and a look-alike string id as a string', () => {
  for (const m of [
    { jsonrpc: '2.0', id: 1, result: {} },
    { jsonrpc: '2.0', id: 'exact-id~abc~9007199254740993', result: {} },
    [1, 2],
    'x',
    null,
  ]) {
    assert.is(exactJson(m), JSON.stringify(m));
    assert.not.ok(holdsExactIds(m));
  }
});

w('should write a held id back in an answer built around it', () => {
  const id = held(request('1208925819614629174706176'))['id'];
  assert.is(
    exactJson({ jsonrpc: '2.0', id, result: { content: [] } }),
    '{"jsonrpc":"2.0","id":1208925819614629174706176,"result":{"content":[]}}',
  );
  assert.is(exactJson({ result: {}, jsonrpc: '2.0', id }), '{"result":{},"jsonrpc":"2.0","id":1208925819614629174706176}');
});

w('should write a held id back where a listen names its subscription by it', () => {
  const id = held(request('9007199254740993', 'subscriptions/listen'))['id'];
  const key = 'io.modelcontextprotocol/subscriptionId';
  const acknowledged = {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { [key]: id }, notifications: {} },
  };
  assert.is(
    exactJson(acknowledged),
    `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"${key}":9007199254740993},"notifications":{}}}`,
  );
  assert.is(
    exactJson({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [key]: id } } }),
    `{"jsonrpc":"2.0","id":9007199254740993,"result":{"resultType":"complete","_meta":{"${key}":9007199254740993}}}`,
  );
});

w.run();

const r = suite('withExactIds');

r('should write held ids back in a body another library wrote, a chunk cut anywhere', async () => {
  const id = held(request('9007199254740993'))['id'];
  const events = `event: message\ndata: ${JSON.stringify({ result: {}, jsonrpc: '2.0', id })}\n\n: keepalive\n\n`;
  const bytes = new TextEncoder().encode(events);
  for (const cut of [1, 30, 60, bytes.length - 3]) {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, cut));
        controller.enqueue(bytes.slice(cut));
        controller.close();
      },
    });
    const response = withExactIds(
      new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'content-length': String(bytes.length) } }),
    );
    assert.is(response.headers.get('content-length'), null);
    assert.is(response.headers.get('content-type'), 'text/event-stream');
    assert.is(await response.text(), 'event: message\ndata: {"result":{},"jsonrpc":"2.0","id":9007199254740993}\n\n: keepalive\n\n');
  }
  const json = withExactIds(new Response(JSON.stringify([{ jsonrpc: '2.0', id, result: {} }]), { status: 200 }));
  assert.is(await json.text(), '[{"jsonrpc":"2.0","id":9007199254740993,"result":{}}]');
});

r.run();
