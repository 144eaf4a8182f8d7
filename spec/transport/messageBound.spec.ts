/**
 * The message bound: finding the id of an oversized answer from its two ends (head first, the v1
 * SDK's id-last order from the tail, requests never), and reading a body within the bound
 * (refused by its content-length, or stopped part way through a stream).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readBounded, responseIdOf } from '../../lib/transport/messageBound.ts';

const pad = 'x'.repeat(300);
const head = (text: string) => text.slice(0, 256);
const tail = (text: string) => text.slice(-256);
const ends = (text: string): [string, string] => [head(text), tail(text)];

const r = suite('responseIdOf');

r('should read a number or string id from the head', () => {
  assert.is(responseIdOf(...ends(`{"jsonrpc":"2.0","id":42,"result":{"text":"${pad}"}}`)), 42);
  assert.is(responseIdOf(...ends(`{ "id" : "req-\\"7\\"", "jsonrpc": "2.0", "error": {"code":1,"message":"${pad}"}}`)), 'req-"7"');
});

r('should read the id from the tail when the v1 SDK wrote it last', () => {
  assert.is(responseIdOf(...ends(`{"result":{"content":[{"type":"text","text":"${pad}"}]},"jsonrpc":"2.0","id":3}`)), 3);
  assert.is(responseIdOf(...ends(`{"result":{"text":"${pad}"},"id":"abc","jsonrpc":"2.0"}\r`)), 'abc');
  assert.is(responseIdOf(...ends(`{"result":{"text":"${pad}"},"id":-5}`)), -5);
});

r('should not take a nested id, or an id cut short by the end of the head', () => {
  assert.is(responseIdOf(...ends(`{"result":{"id":9,"text":"${pad}"},"jsonrpc":"2.0","id":4}`)), 4);
  assert.is(responseIdOf(...ends(`{"result":{"text":"${pad}","id":9}}`)), undefined);
  assert.is(responseIdOf('{"jsonrpc":"2.0","id":12', `${pad}}`), undefined);
  assert.is(responseIdOf(...ends(`{"result":{"text":"${pad} \\"id\\":8}`)), undefined);
});

r('should not treat a request or notification as an answer', () => {
  assert.is(responseIdOf(...ends(`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"x":"${pad}"}}`)), undefined);
  assert.is(responseIdOf(...ends(`{"method":"tools/call","params":{"x":"${pad}"},"jsonrpc":"2.0","id":2}`)), undefined);
  assert.is(responseIdOf(...ends(`{"params":{"x":"${pad}"},"jsonrpc":"2.0","id":2}`)), undefined);
  assert.is(
    responseIdOf(...ends(`{"result":{"method":"x","text":"${pad}"},"jsonrpc":"2.0","id":6}`)),
    6,
    'a nested method key is no request',
  );
});

r('should give nothing for a batch, a null or fractional id, or text that is not an object', () => {
  assert.is(responseIdOf(...ends(`[{"jsonrpc":"2.0","id":1,"result":"${pad}"}]`)), undefined);
  assert.is(responseIdOf(...ends(`{"jsonrpc":"2.0","id":null,"error":{"message":"${pad}"}}`)), undefined);
  assert.is(responseIdOf(...ends(`{"result":"${pad}","id":1.5}`)), undefined);
  assert.is(responseIdOf(pad, pad), undefined);
});

const b = suite('readBounded');

function streamed(parts: string[], headers: Record<string, string> = {}): { res: Response; cancelled: () => boolean } {
  let cancelled = false;
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < parts.length) controller.enqueue(new TextEncoder().encode(parts[i++]!));
      else controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { res: new Response(body, { headers }), cancelled: () => cancelled };
}

b('should read a body within the bound whole, multi-byte characters split across chunks included', async () => {
  const bytes = new TextEncoder().encode('{"text":"Zoë ✓"}');
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const byte of bytes) controller.enqueue(Uint8Array.of(byte));
      controller.close();
    },
  });
  assert.equal(await readBounded(new Response(body), 100), { ok: true, value: '{"text":"Zoë ✓"}' });
  assert.equal(await readBounded(new Response(null), 100), { ok: true, value: '' });
});

b('should refuse a content-length over the bound without reading', async () => {
  const { res, cancelled } = streamed(['a'.repeat(10)], { 'content-length': '5000' });
  assert.equal(await readBounded(res, 1000), { ok: false, error: { size: 5000 } });
  assert.ok(cancelled());
});

b('should stop a stream as soon as it passes the bound, and cancel it', async () => {
  const { res, cancelled } = streamed(Array.from({ length: 100 }, () => 'b'.repeat(100)));
  assert.equal(await readBounded(res, 1000), { ok: false, error: { size: 1100 } });
  assert.ok(cancelled());
});

r.run();
b.run();
