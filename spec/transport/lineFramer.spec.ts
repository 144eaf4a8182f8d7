/**
 * LineFramer: lines split across and within chunks, and lines past the bound — skipped to their
 * newline whether they arrive in one chunk or many, reported once with their two ends, the lines
 * around them still delivered, memory held to the bound.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { frame, LineFramer } from '../../lib/transport/lineFramer.ts';

interface Overflow {
  size: number;
  head: string;
  tail: string;
}

function framer(maxLineBytes: number): { f: LineFramer; lines: string[]; overflows: Overflow[] } {
  const lines: string[] = [];
  const overflows: Overflow[] = [];
  const f = new LineFramer((line) => void lines.push(line), {
    maxLineBytes,
    onOverflow: (size, head, tail) => void overflows.push({ size, head, tail }),
  });
  return { f, lines, overflows };
}

/** A full garbage collection on demand, without starting Node with --expose-gc. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const l = suite('LineFramer');

l('should split lines across and within chunks, trimming \\r and skipping blank lines', () => {
  const { f, lines, overflows } = framer(1024);
  f.push('{"a":1}\n{"b"');
  f.push(new TextEncoder().encode(':2}\r\n\n{"c":"é"}\n{"d"'));
  f.push(':4}');
  f.end();
  assert.equal(lines, ['{"a":1}', '{"b":2}', '{"c":"é"}', '{"d":4}']);
  assert.equal(overflows, []);
});

l('should decode a character split across chunks, and an invalid byte as U+FFFD', () => {
  const { f, lines } = framer(1024);
  const bytes = Buffer.from('{"c":"é😀"}\n', 'utf8');
  // Every byte its own chunk: é and the emoji each arrive in pieces.
  for (let i = 0; i < bytes.length; i++) f.push(bytes.subarray(i, i + 1));
  f.push(Uint8Array.from([0x7b, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x0a]));
  f.push(Buffer.from('{"t":"\xc3', 'latin1'));
  f.end();
  assert.equal(lines, ['{"c":"é😀"}', '{"x":"\uFFFD"}', '{"t":"\uFFFD']);
});

l('should leave out a byte order mark at the start of a byte stream only, even one split across chunks', () => {
  const { f, lines } = framer(1024);
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);
  f.push(bom.subarray(0, 2));
  f.push(Buffer.concat([bom.subarray(2), Buffer.from('{"a":1}\n'), bom, Buffer.from('{"b":2}\n')]));
  f.end();
  assert.equal(lines, ['{"a":1}', '\uFEFF{"b":2}']);
});

l('should keep a line exactly at the bound', () => {
  const { f, lines, overflows } = framer(10);
  f.push('0123456789\n');
  assert.equal(lines, ['0123456789']);
  assert.equal(overflows, []);
});

l('should skip a line past the bound that arrives in one chunk with its newline, and report it once with its ends', () => {
  const { f, lines, overflows } = framer(1000);
  const huge = `{"id":7,${'x'.repeat(5000)}END}`;
  f.push(`${huge}\n{"next":1}\n`);
  assert.equal(lines, ['{"next":1}']);
  assert.is(overflows.length, 1);
  assert.is(overflows[0]!.size, huge.length);
  assert.is(overflows[0]!.head, huge.slice(0, 256));
  assert.is(overflows[0]!.tail, huge.slice(-256));
});

l('should skip a line past the bound spread over many chunks, then frame the next line normally', () => {
  const { f, lines, overflows } = framer(1000);
  const huge = `HEAD${'y'.repeat(20_000)}TAIL\r`;
  for (let i = 0; i < huge.length; i += 333) f.push(huge.slice(i, i + 333));
  assert.equal(overflows, [], 'reported at its newline, not before');
  f.push('\n{"after":true}\n');
  assert.equal(lines, ['{"after":true}']);
  assert.is(overflows.length, 1);
  assert.is(overflows[0]!.size, huge.length - 1);
  assert.ok(overflows[0]!.head.startsWith('HEAD'));
  assert.ok(overflows[0]!.tail.endsWith('TAIL'), 'the \\r is trimmed');
  assert.is(overflows[0]!.tail.length, 255, 'the last 256 characters, less the \r');
});

l('should deliver the lines before and after a huge line inside the same chunk', () => {
  const { f, lines, overflows } = framer(100);
  f.push(`{"before":1}\n{"x":"${'z'.repeat(500)}"}\n{"after":2}\n{"par`);
  f.push('tial":3}\n');
  assert.equal(lines, ['{"before":1}', '{"after":2}', '{"partial":3}']);
  assert.is(overflows.length, 1);
  assert.is(overflows[0]!.size, 508);
});

l('should report each oversized line once, and one that the stream ends in at end()', () => {
  const { f, lines, overflows } = framer(50);
  f.push(`${'a'.repeat(60)}\nok\n${'b'.repeat(30)}`);
  f.push(`${'b'.repeat(30)}\n${'c'.repeat(80)}`);
  f.end();
  assert.equal(lines, ['ok']);
  assert.equal(
    overflows.map((o) => o.size),
    [60, 60, 80],
  );
});

l('should hold no more than the bound while skipping 50 MiB in 64 KiB chunks, and deliver the next line', () => {
  const { f, lines, overflows } = framer(1024 * 1024);
  const chunk = Buffer.alloc(64 * 1024, 'q');
  // What the framer holds, not the garbage it made on the way: collected before each reading
  // (garbage alone once made Node 24's heap look 20 MiB bigger at a reading).
  const gc = collector();
  gc();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  for (let i = 0; i < 800; i++) {
    f.push(chunk);
    if (i % 50 === 0) {
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
  }
  f.push('\n{"next":1}\n');
  assert.equal(lines, ['{"next":1}']);
  assert.is(overflows[0]!.size, 800 * 64 * 1024);
  assert.ok(peak - before < 20 * 1024 * 1024, `heap grew by ${peak - before} bytes`);
});

l('should write one message per line', () => {
  assert.is(frame({ a: 'x\ny' }), '{"a":"x\\ny"}\n');
});

l.run();
