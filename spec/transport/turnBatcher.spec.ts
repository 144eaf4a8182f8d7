import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { turnBatcher } from '../../lib/transport/turnBatcher.ts';

const batcher = suite('turnBatcher');

/** A stream that records each write it gets and finishes it when told (or at once). */
function recording(highWaterMark = 16 * 1024, hold = false) {
  const writes: string[] = [];
  const callbacks: Array<() => void> = [];
  const stream = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      writes.push(chunk);
      if (hold) callbacks.push(() => callback());
      else callback();
    },
  });
  return { stream, writes, release: () => callbacks.splice(0).forEach((c) => c()) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

batcher("should send the writes of one turn as one write, in order, and the next turn's in another", async () => {
  const { stream, writes } = recording();
  const write = turnBatcher(stream);
  write('a\n');
  write('b\n');
  await Promise.resolve();
  write('c\n');
  assert.equal(writes, [], 'nothing leaves before the turn ends');
  await turn();
  assert.equal(writes, ['a\nb\nc\n']);
  write('d\n');
  await turn();
  assert.equal(writes, ['a\nb\nc\n', 'd\n']);
});

batcher('should say the stream is full until it drains, as Writable.write does', async () => {
  const { stream, writes, release } = recording(8, true);
  const write = turnBatcher(stream);
  assert.ok(write('0123456789\n'), 'nothing is buffered yet');
  await turn();
  assert.is(writes.length, 1);
  assert.not.ok(write('more\n'), 'the first write filled the buffer');
  const drained = new Promise((resolve) => stream.once('drain', resolve));
  release();
  await turn();
  release();
  await drained;
  assert.ok(write('again\n'));
  await turn();
  release();
  assert.equal(writes, ['0123456789\n', 'more\n', 'again\n']);
});

batcher('should drop what a turn held when the stream ended meanwhile, without an error', async () => {
  const { stream, writes } = recording();
  const errors: unknown[] = [];
  stream.on('error', (e) => errors.push(e));
  const write = turnBatcher(stream);
  write('early\n');
  await turn();
  write('late\n');
  stream.end();
  await turn();
  await turn();
  assert.equal(writes, ['early\n']);
  assert.equal(errors, []);
});

batcher('should write what the turn holds when flushed, so that ending the stream right after loses nothing', async () => {
  const { stream, writes } = recording();
  const write = turnBatcher(stream);
  write('cancel 1\n');
  write('cancel 2\n');
  write.flush();
  stream.end();
  await turn();
  assert.equal(writes, ['cancel 1\ncancel 2\n']);
  write.flush();
  assert.is(writes.length, 1, 'an empty turn writes nothing');
});

batcher('should write a lone chunk at once when nothing is held, and after what is held otherwise, in order', async () => {
  const { stream, writes } = recording();
  const write = turnBatcher(stream);
  assert.ok(write('only\n', true));
  assert.equal(writes, ['only\n'], 'a lone chunk does not wait for the turn to end');
  write('a\n');
  write('b\n', true);
  assert.equal(writes, ['only\n'], 'a lone chunk after a held one waits with it');
  await turn();
  assert.equal(writes, ['only\n', 'a\nb\n']);
  write('c\n', true);
  write('d\n');
  await turn();
  assert.equal(writes, ['only\n', 'a\nb\n', 'c\n', 'd\n'], 'what follows a lone chunk in its turn still waits for the turn');
});

batcher('should drop a lone chunk for a stream that has ended, without an error', async () => {
  const { stream, writes } = recording();
  const errors: unknown[] = [];
  stream.on('error', (e) => errors.push(e));
  const write = turnBatcher(stream);
  stream.end();
  assert.ok(write('late\n', true));
  await turn();
  assert.equal(writes, []);
  assert.equal(errors, []);
});

batcher.run();
