/**
 * readSse with a bound on one event: events within it are delivered, comments and keep-alives
 * between events never add up, and an event past it stops the read, cancels the body and is
 * reported once with the bytes seen.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readSse, readSseMessages } from '../../lib/transport/sse.ts';

function body(parts: Array<string | Uint8Array>): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean; pulled: () => number } {
  let cancelled = false;
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const part = parts[i++];
      if (part === undefined) return controller.close();
      controller.enqueue(typeof part === 'string' ? new TextEncoder().encode(part) : part);
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled, pulled: () => i };
}

const s = suite('readSse');

s('should deliver events within the bound and not count comments between them', async () => {
  const parts = [
    ...Array.from({ length: 200 }, () => ': keep-alive\n\n'),
    'data: {"a":1}\n\n',
    ...Array.from({ length: 200 }, (_, i) => `data: ${i}\n\n`),
  ];
  const { stream } = body(parts);
  const events: string[] = [];
  const over: number[] = [];
  await readSse(stream, { onEvent: (e) => void events.push(e.data), maxEventBytes: 100, onTooLarge: (n) => void over.push(n) });
  assert.is(events.length, 201);
  assert.equal(over, []);
});

s('should stop at an event past the bound, cancel the body and report it once', async () => {
  const parts = ['data: {"first":1}\n\n', 'data: ', ...Array.from({ length: 1000 }, () => 'x'.repeat(1000)), '\n\ndata: {"never":1}\n\n'];
  const { stream, cancelled, pulled } = body(parts);
  const events: string[] = [];
  const over: number[] = [];
  await readSse(stream, { onEvent: (e) => void events.push(e.data), maxEventBytes: 10_000, onTooLarge: (n) => void over.push(n) });
  assert.equal(events, ['{"first":1}']);
  assert.is(over.length, 1);
  assert.ok(over[0]! > 10_000 && over[0]! < 20_000, String(over[0]));
  assert.ok(cancelled());
  assert.ok(pulled() < 30, `stopped early (${pulled()} chunks pulled)`);
});

s('should stop within one big chunk that holds a whole oversized event', async () => {
  const { stream } = body([`data: ${'y'.repeat(1024 * 1024)}\n\ndata: after\n\n`]);
  const events: string[] = [];
  const over: number[] = [];
  await readSse(stream, { onEvent: (e) => void events.push(e.data), maxEventBytes: 100_000, onTooLarge: (n) => void over.push(n) });
  assert.equal(events, []);
  assert.is(over.length, 1);
});

s('should read without a bound when none is given', async () => {
  const { stream } = body([`data: ${'z'.repeat(100_000)}\n\n`]);
  const events: string[] = [];
  await readSse(stream, { onEvent: (e) => void events.push(e.data) });
  assert.is(events[0]!.length, 100_000);
});

const m = suite('readSseMessages');

m('should hand over the JSON messages and report an event past the bound', async () => {
  const { stream } = body(['data: {"jsonrpc":"2.0","method":"a"}\n\n', `data: ${'w'.repeat(5000)}\n\n`]);
  const got: unknown[] = [];
  const over: number[] = [];
  await readSseMessages(stream, (message) => void got.push(message), { maxEventBytes: 1000, onTooLarge: (n) => void over.push(n) });
  assert.equal(got, [{ jsonrpc: '2.0', method: 'a' }]);
  assert.is(over.length, 1);
});

s.run();
m.run();
