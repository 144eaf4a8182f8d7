/**
 * quietTurn: a round is gathered until a whole turn of the event loop brings no further push,
 * ends at once when the call moves on, and never waits past its bound.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { quietTurn } from '../../../lib/wrap/mrtr/quietTurn.ts';

const q = suite('quietTurn');

q('should wait while pushes keep coming turn after turn, and end once a turn brings none', async () => {
  let pushes = 1;
  // One more push in each of the next five turns of the loop (an I/O read would bring one the same way).
  const more = (left: number): void => {
    if (left === 0) return;
    setImmediate(() => {
      pushes++;
      more(left - 1);
    });
  };
  more(5);
  await quietTurn(() => pushes, () => false, 60_000);
  assert.is(pushes, 6, 'every push of the burst is in the round');
});

q('should gather pushes that arrive by a read of the same turn', async () => {
  let pushes = 0;
  const { port1, port2 } = new MessageChannel();
  port1.on('message', () => pushes++);
  port2.postMessage(1);
  port2.postMessage(2);
  pushes++;
  await quietTurn(() => pushes, () => false, 60_000);
  port1.close();
  assert.is(pushes, 3);
});

q('should end as soon as the call moves on', async () => {
  let moved = false;
  let pushes = 0;
  const keepPushing = (): void => {
    if (moved) return;
    pushes++;
    setImmediate(keepPushing);
  };
  keepPushing();
  setTimeout(() => (moved = true), 5);
  await quietTurn(() => pushes, () => moved, 60_000);
  assert.ok(moved, 'it ended because the call moved on, while pushes still came');
});

q('should end at its bound when pushes never stop', async () => {
  let pushes = 0;
  let stop = false;
  const forever = (): void => {
    if (stop) return;
    pushes++;
    setImmediate(forever);
  };
  forever();
  await quietTurn(() => pushes, () => false, 20);
  stop = true;
  assert.ok(pushes > 2, 'it waited while they came');
});

q.run();
