/**
 * gatherRound: a round is gathered until a barrier the server answers brings no push after it
 * began, ends at once when the call moves on, never waits past its bound, and abandons a barrier
 * still unanswered then. The barriers here are plain functions; the real one (a `ping` to a real
 * v1 server) is exercised by the MRTR specs over stdio and HTTP.
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { gatherRound } from '../../../lib/wrap/mrtr/gatherRound.ts';
import type { CancelSignal } from '../../../lib/util/signals.ts';

const g = suite('gatherRound');

/** A barrier answered after `delayMs`, counting how often it was asked. */
function timedBarrier(delayMs: number): { barrier: (signal: CancelSignal) => Promise<void>; asked: () => number } {
  let asked = 0;
  return {
    barrier: () => {
      asked++;
      return new Promise((resolve) => setTimeout(resolve, delayMs));
    },
    asked: () => asked,
  };
}

g('should send the round after one barrier when no push follows it', async () => {
  const pushes = 1;
  const b = timedBarrier(1);
  assert.is(
    await gatherRound(
      () => pushes,
      () => false,
      60_000,
      b.barrier,
    ),
    false,
    'not ended at its bound',
  );
  assert.is(b.asked(), 1);
});

g('should take in the pushes read together with the first before it asks', async () => {
  let pushes = 0;
  // One read of the pipe bringing three pushes: the session hands each to its call a microtask
  // later, the first starting the round.
  let seenAtBarrier = -1;
  let gathering: Promise<boolean> | undefined;
  for (let i = 0; i < 3; i++)
    queueMicrotask(() => {
      pushes++;
      gathering ??= gatherRound(
        () => pushes,
        () => false,
        60_000,
        async () => {
          seenAtBarrier = pushes;
        },
      );
    });
  await new Promise((r) => setImmediate(r));
  await gathering;
  assert.is(seenAtBarrier, 3, 'the barrier was asked after every push of the read was counted');
});

g('should ask again when a push of a later read comes before the answer', async () => {
  let pushes = 1;
  let asked = 0;
  const { port1, port2 } = new MessageChannel();
  port1.on('message', () => pushes++);
  port2.postMessage(1);
  await gatherRound(
    () => pushes,
    () => false,
    60_000,
    () => {
      asked++;
      return new Promise<void>((r) => setTimeout(r, 2));
    },
  );
  port1.close();
  assert.is(pushes, 2);
  assert.is(asked, 2, 'the barrier asked before the second push came was asked again');
});

g('should ask again while pushes keep coming during its barriers', async () => {
  let pushes = 1;
  let more = 3;
  let asked = 0;
  // Each barrier's answer comes with one more push, three times: the fourth barrier brings none.
  await gatherRound(
    () => pushes,
    () => false,
    60_000,
    () => {
      asked++;
      return new Promise<void>((resolve) =>
        setTimeout(() => {
          if (more-- > 0) pushes++;
          resolve();
        }, 1),
      );
    },
  );
  assert.is(pushes, 4, 'every push is in the round');
  assert.is(asked, 4);
});

g('should end as soon as the call moves on, and abandon the barrier', async () => {
  let moved = false;
  let abandoned = false;
  let wake: (() => void) | undefined;
  // The call moves on (its result came, or its client went away) while the barrier is unanswered.
  setTimeout(() => {
    moved = true;
    wake?.();
  }, 5);
  const started = performance.now();
  await gatherRound(
    () => 1,
    () => moved,
    60_000,
    (signal) => {
      signal.addEventListener('abort', () => (abandoned = true));
      return new Promise<void>(() => {});
    },
    (recheck) => (wake = recheck),
  );
  assert.ok(moved);
  assert.ok(performance.now() - started < 1_000, 'it ended when told, not at its bound');
  assert.ok(abandoned, 'the unanswered barrier was abandoned');
});

g('should keep gathering when woken by a push rather than by the call moving on', async () => {
  let pushes = 1;
  let wake: (() => void) | undefined;
  let answer: (() => void) | undefined;
  const gathering = gatherRound(
    () => pushes,
    () => false,
    60_000,
    () => new Promise<void>((resolve) => (answer = resolve)),
    (recheck) => (wake = recheck),
  );
  await new Promise((r) => setTimeout(r, 5));
  pushes++;
  wake?.();
  let ended = false;
  void gathering.then(() => (ended = true));
  await new Promise((r) => setTimeout(r, 5));
  assert.not.ok(ended, 'a push is no reason to end');
  // The barrier answers after the push came: one more barrier is asked, and answered with no push after it.
  answer?.();
  await new Promise((r) => setTimeout(r, 5));
  assert.not.ok(ended);
  answer?.();
  await gathering;
  assert.is(pushes, 2);
});

g('should end at its bound when the server never answers the barrier, and abandon it', async () => {
  let abandoned = false;
  const started = performance.now();
  const unanswered = await gatherRound(
    () => 1,
    () => false,
    20,
    (signal) => {
      signal.addEventListener('abort', () => (abandoned = true));
      return new Promise<void>(() => {});
    },
  );
  assert.ok(performance.now() - started >= 19, 'it waited for the bound');
  assert.ok(unanswered, 'it says a barrier went unanswered');
  assert.ok(abandoned, 'the unanswered barrier was abandoned (the ping is cancelled upstream)');
});

g('should end at its bound when pushes never stop', async () => {
  // A server that pushes once more whenever it is asked: every barrier is answered with a push
  // after it began. Counted by what was asked, not by the clock, so a machine that keeps this
  // process from running for the whole bound still sees the second barrier asked.
  let pushes = 0;
  let asked = 0;
  const atBound = await gatherRound(
    () => pushes,
    () => false,
    20,
    () => {
      asked++;
      pushes++;
      return new Promise<void>((r) => setTimeout(r, 1));
    },
  );
  assert.ok(asked > 1, 'it asked again while pushes came');
  assert.is(atBound, true, 'it ended at its bound, a barrier unanswered');
});

g('should count an answer that was waiting to be read when the process, kept from running, found its bound due', async () => {
  // A real socket: the answer is written to it before the bound, but this process is busy past the
  // bound, so the timer and the read are due in the same turn of the event loop (the timer first).
  let far: Socket | undefined;
  const server = createServer((socket) => (far = socket));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  while (!far) await new Promise((r) => setImmediate(r));
  try {
    const unanswered = await gatherRound(
      () => 1,
      () => false,
      20,
      () => {
        const answered = new Promise<void>((r) => socket.once('data', () => r()));
        far!.write('pong');
        const until = performance.now() + 80;
        while (performance.now() < until); // kept from running past the bound, the answer waiting to be read
        return answered;
      },
    );
    assert.is(unanswered, false, 'the waiting answer ended the round, not the bound');
  } finally {
    socket.destroy();
    far?.destroy();
    server.close();
  }
});

g('should send after one turn, asking nothing, with a bound of 0', async () => {
  let asked = 0;
  await gatherRound(
    () => 1,
    () => false,
    0,
    async () => {
      asked++;
    },
  );
  assert.is(asked, 0);
});

g.run();
