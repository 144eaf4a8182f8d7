/**
 * The session pool on in-process push servers: its limits (per caller, per key, the reserve,
 * openings in turn), and its sessions (reuse per key, reservation, waiters, idle close, an upstream
 * that went away, retries, close). Not the sessions' own calls (upstreamSession.spec.ts).
 */
import { setMaxListeners } from 'node:events';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { AdapterError } from '../../lib/core/errors.ts';
import { refusalOf } from '../../lib/util/limits.ts';
import { inProcessBackend } from '../../lib/session/backend.ts';
import { SessionPool } from '../../lib/session/pool.ts';
import type { SessionPoolOptions } from '../../lib/session/poolOptions.ts';
import { EVICTABLE_AFTER_MS } from '../../lib/session/poolRoom.ts';
import type { SessionKey } from '../../lib/session/sessionKey.ts';
import type { RpcOutcome } from '../../lib/session/callHooks.ts';
import { sleep, waitFor } from '../helpers/everything.ts';
import { recordingUpstream } from '../helpers/recordingUpstream.ts';

const CLIENT = { name: 'spec', version: '1.0.0' };

function key(principal: string, capabilities: Record<string, unknown> = {}): SessionKey {
  return { principal, capabilities, clientInfo: CLIENT };
}

function pool(options: SessionPoolOptions): SessionPool {
  return new SessionPool(
    inProcessBackend(() => createPushServer()),
    options,
  );
}

/** A session taken alone (reserved, as for a pushable call): busy until `unreserve()`. */
async function busy(p: SessionPool, k: SessionKey) {
  return p.acquire(k, { exclusive: true });
}

/** A pool over push servers that record what they receive. */
function recorded(options: SessionPoolOptions) {
  const upstream = recordingUpstream(createPushServer);
  return { p: new SessionPool(inProcessBackend(upstream.upstream), options), upstream };
}

function echoed(outcome: RpcOutcome): string {
  if ('error' in outcome) return `error ${outcome.error.code}: ${outcome.error.message}`;
  return (outcome.result['content'] as Array<{ text: string }>)[0]!.text;
}

/** What an acquire that must fail rejected with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.unreachable('it was served'),
    (e: unknown) => e,
  );
}

async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (e) {
    return refusalOf(e)?.limit ?? `not a refusal: ${e instanceof Error ? e.message : String(e)}`;
  }
}

const limits = suite('SessionPool limits');

limits('should refuse a caller past its own bound, naming it, and still serve others', async () => {
  // Places to open enough that none rests after a slow boot (openings are not what this is about).
  const p = pool({ maxPerPrincipal: 2, waitMs: 100, opening: 4 });
  try {
    await busy(p, key('alice', { a: {} }));
    await busy(p, key('alice', { b: {} }));
    const started = Date.now();
    assert.is(await refusal(p.acquire(key('alice', { c: {} }))), 'sessions-per-caller');
    assert.ok(Date.now() - started >= 90, 'it waited for room first');
    assert.ok(await p.acquire(key('bob')), 'another caller is served');
  } finally {
    await p.close();
  }
});

limits("should close a caller's own idle session to open one for it at its bound", async () => {
  const p = pool({ maxPerPrincipal: 2, waitMs: 100 });
  try {
    const idle = await p.acquire(key('alice', { a: {} }));
    await busy(p, key('alice', { b: {} }));
    assert.is(
      await refusal(p.acquire(key('alice', { c: {} }))),
      'sessions-per-caller',
      'one handed over a moment ago is kept (its call may not be sent yet)',
    );
    assert.not.ok(idle.closed);
    await new Promise((r) => setTimeout(r, EVICTABLE_AFTER_MS));
    const fresh = await p.acquire(key('alice', { c: {} }));
    assert.ok(idle.closed, 'the idle one made room');
    assert.not.ok(fresh.closed);
    assert.is(p.size, 2);
  } finally {
    await p.close();
  }
});

limits('should keep the reserve for callers with nothing busy', async () => {
  const p = pool({ maxSessions: 4, reserve: 2, maxPerPrincipal: 8, waitMs: 100 });
  try {
    await busy(p, key('mallory', { a: {} }));
    await busy(p, key('mallory', { b: {} }));
    assert.is(await refusal(p.acquire(key('mallory', { c: {} }))), 'sessions', 'mallory may not take the reserve');
    await busy(p, key('alice'));
    await busy(p, key('bob'));
    assert.is(p.size, 4);
    assert.is(await refusal(p.acquire(key('carol'))), 'sessions', 'all four are busy now');
  } finally {
    await p.close();
  }
});

limits('should hand a waiting caller the session that frees up within its wait', async () => {
  const p = pool({ maxSessions: 1, reserve: 0, waitMs: 5_000 });
  try {
    const held = await busy(p, key('alice'));
    setTimeout(() => held.unreserve(), 100);
    const started = Date.now();
    const next = await p.acquire(key('alice'), { exclusive: true });
    assert.is(next, held, 'the same session, once free');
    assert.ok(Date.now() - started < 2_000);
  } finally {
    await p.close();
  }
});

limits('should let a waiting caller go when its request is cancelled', async () => {
  const p = pool({ maxSessions: 1, reserve: 0, waitMs: 60_000 });
  try {
    await busy(p, key('alice'));
    const controller = new AbortController();
    const waiting = p.acquire(key('bob'), { signal: controller.signal }).then(
      () => 'served',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    setTimeout(() => controller.abort(), 50);
    assert.match(await waiting, 'cancelled');
  } finally {
    await p.close();
  }
});

limits('should open sessions a few at a time, the others waiting their turn', async () => {
  let starting = 0;
  let most = 0;
  const slow = new SessionPool(
    inProcessBackend(async () => {
      starting++;
      most = Math.max(most, starting);
      await new Promise((r) => setTimeout(r, 50));
      starting--;
      return createPushServer();
    }),
    { opening: 2, waitMs: 5_000 },
  );
  try {
    const sessions = await Promise.all(Array.from({ length: 8 }, (_, i) => slow.acquire(key(`caller-${i}`))));
    assert.is(new Set(sessions).size, 8, 'each caller got its own');
    assert.is(most, 2, 'never more than two opening at once');
  } finally {
    await slow.close();
  }
});

limits('should not close a session handed to a caller before its call is sent', async () => {
  const p = pool({ maxSessions: 2, reserve: 0, waitMs: 300 });
  try {
    const first = await p.acquire(key('alice'));
    await busy(p, key('bob'));
    // Carol wants room now: alice's session was handed over a moment ago and is not closed for her.
    assert.is(await refusal(p.acquire(key('carol'))), 'sessions');
    assert.not.ok(first.closed);
    const outcome = await first.call('tools/call', { name: 'echo', arguments: { text: 'mine' } });
    assert.ok('result' in outcome, JSON.stringify(outcome));
  } finally {
    await p.close();
  }
});

limits.run();

const sessions = suite('SessionPool sessions');

sessions('should hand the same session to the same principal and capability set, whatever the key order', async () => {
  const { p, upstream } = recorded({});
  try {
    const first = await p.acquire(key('alice', { sampling: {}, elicitation: {} }));
    const again = await p.acquire(key('alice', { elicitation: {}, sampling: {} }));
    assert.is(again, first);
    assert.is(p.tryAcquire(key('alice', { sampling: {}, elicitation: {} })), first);
    assert.is(p.size, 1);
    assert.is(upstream.servers.length, 1, 'one upstream server started');
    assert.is(upstream.withMethod('initialize').length, 1, 'one initialize sent');
  } finally {
    await p.close();
  }
});

sessions('should open a separate session per principal and per capability set, each declaring its own', async () => {
  const { p, upstream } = recorded({});
  try {
    const alice = await p.acquire(key('alice'));
    const bob = await p.acquire(key('bob'));
    const aliceEliciting = await p.acquire(key('alice', { elicitation: {} }));
    assert.is(new Set([alice, bob, aliceEliciting]).size, 3);
    assert.is(p.size, 3);
    assert.is(upstream.servers.length, 3);
    const declared = upstream.withMethod('initialize').map((m) => JSON.stringify(m.params?.['capabilities']));
    assert.equal(declared.sort(), ['{"elicitation":{}}', '{}', '{}']);
    const held = p.sessions().map(({ key: k, session }) => [k.principal, JSON.stringify(k.capabilities), session]);
    assert.equal(held.length, 3);
    assert.ok(held.some(([principal, caps, session]) => principal === 'bob' && caps === '{}' && session === bob));
    assert.ok(
      held.some(([principal, caps, session]) => principal === 'alice' && caps === '{"elicitation":{}}' && session === aliceEliciting),
    );
    assert.is(p.tryAcquire(key('carol')), undefined, 'tryAcquire opens nothing');
    assert.is(p.size, 3);
  } finally {
    await p.close();
  }
});

sessions('should reserve a session for a caller that may push until its call uses the reservation or gives it back', async () => {
  const p = pool({ waitMs: 2_000 });
  const k = key('alice');
  try {
    const reservation = { reserved: false };
    const first = await p.acquire(k, { exclusive: true, reservation });
    assert.ok(reservation.reserved, 'the caller is told it holds a reservation');
    assert.is(first.pushableInFlight, 1);
    assert.is(await p.acquire(k), first, 'a caller whose call does not push shares it');
    const second = await p.acquire(k, { exclusive: true });
    assert.is.not(second, first, 'another caller that may push gets one of its own');
    assert.is(p.size, 2);
    assert.is(p.tryAcquire(k, { exclusive: true }), undefined, 'both are reserved');
    assert.is(echoed(await first.call('tools/call', { name: 'echo', arguments: { text: 'mine' } }, {}, true)), 'mine');
    assert.is(first.pushableInFlight, 0, 'the reservation ended with the call that used it');
    second.unreserve();
    second.unreserve();
    assert.is(second.pushableInFlight, 0, 'giving it back twice counts once');
    const third = await p.acquire(k, { exclusive: true });
    assert.ok(third === first || third === second, 'a free session is reused');
    assert.is(p.size, 2, 'none opened');
  } finally {
    await p.close();
  }
});

sessions('should put calls that may share on the oldest session, whatever the others carry, so the others can go idle', async () => {
  const p = pool({ waitMs: 2_000, idleMs: 200 });
  const k = key('alice');
  try {
    const first = await p.acquire(k, { exclusive: true });
    const second = await p.acquire(k, { exclusive: true });
    assert.is.not(second, first);
    first.unreserve();
    second.unreserve();
    // The oldest carries calls already; the other carries none: shared calls still go to the oldest.
    const stop = new AbortController();
    const inFlight = [0, 1, 2].map(() => first.call('tools/call', { name: 'wait' }, { signal: stop.signal }));
    assert.is(first.inFlight, 3);
    for (let i = 0; i < 4; i++) assert.is(await p.acquire(k), first, `shared call ${i} goes to the oldest session`);
    assert.is(p.tryAcquire(k), first);
    stop.abort();
    await Promise.all(inFlight);
    assert.ok(await waitFor(() => second.closed, 5_000), 'the session no shared call used is closed once idle');
  } finally {
    await p.close();
  }
});

/** A pool whose servers take `ms` to start, `opening` of them at a time; `opened()` counts the starts. */
function slowlyOpening(ms: number, opening: number): { p: SessionPool; opened: () => number } {
  let opened = 0;
  const p = new SessionPool(
    inProcessBackend(async () => {
      opened++;
      await sleep(ms);
      return createPushServer();
    }),
    { opening, waitMs: 5_000 },
  );
  return { p, opened: () => opened };
}

sessions('should not open a session a waiting caller stopped needing while it waited for its turn to open one', async () => {
  const { p, opened } = slowlyOpening(300, 1);
  const k = key('alice');
  try {
    const held = await p.acquire(k, { exclusive: true });
    // Openings of alice's other capability sets take the gate's places (the one, and the one more
    // a caller served before has) for a while.
    const elsewhere = [p.acquire(key('alice', { sampling: {} })), p.acquire(key('alice', { roots: {} }))];
    await sleep(10);
    let alone = true;
    const waiting = p.acquire(k, { exclusive: true, stillExclusive: () => alone });
    await sleep(100);
    // While it waits for its turn, its call is found not to push: it may share after all.
    alone = false;
    assert.is(await waiting, held, 'it shares the session that was open');
    await Promise.all(elsewhere);
    assert.is(opened(), 3, 'one session per capability set only');
    assert.is(p.size, 3);
  } finally {
    await p.close();
  }
});

sessions('should keep callers not known to push waiting while the first session of their key opens, however slowly', async () => {
  const { p, opened } = slowlyOpening(400, 4);
  const k = key('alice');
  try {
    let alone = true;
    // A burst in one turn (as a client's first chunk of calls), none known to push: the first
    // opens one; without patience the others would open four more at once.
    const first = p.acquire(k, { exclusive: true, open: false, stillExclusive: () => alone });
    const others = Array.from({ length: 6 }, () => p.acquire(k, { exclusive: true, open: false, stillExclusive: () => alone }));
    const session = await first;
    assert.is(opened(), 1, 'only the first caller opened one while it was opening');
    // Its call is found not to push: the others share its session.
    session.unreserve();
    alone = false;
    const got = await Promise.all(others);
    assert.ok(
      got.every((s) => s === session),
      'every caller shares the one session',
    );
    assert.is(opened(), 1);
  } finally {
    await p.close();
  }
});

sessions('should serve callers waiting for a reserved session in the order they came', async () => {
  const p = pool({ maxPerKey: 1, waitMs: 5_000 });
  const k = key('alice');
  try {
    const held = await p.acquire(k, { exclusive: true });
    const order: string[] = [];
    const waiters = ['first', 'second', 'third'].map(async (name) => {
      const session = await p.acquire(k, { exclusive: true });
      order.push(name);
      assert.is(session, held, `${name} got the one session`);
      assert.is(session.pushableInFlight, 1, `${name} holds it alone`);
      setTimeout(() => session.unreserve(), 20);
    });
    await sleep(50);
    assert.equal(order, [], 'all wait while it is reserved');
    held.unreserve();
    await Promise.all(waiters);
    assert.equal(order, ['first', 'second', 'third']);
    assert.is(p.size, 1, 'no other session was opened');
  } finally {
    await p.close();
  }
});

sessions('should close a session idle for idleMs, but not one reserved or held, and open a fresh one after', async () => {
  const closed: string[] = [];
  const p = pool({ idleMs: 50, onSessionClosed: (k) => closed.push(k.principal) });
  try {
    const idle = await p.acquire(key('alice'));
    const reserved = await p.acquire(key('bob'), { exclusive: true });
    const holding = await p.acquire(key('carol'));
    const release = holding.hold();
    // The sweep runs at most once a second, whatever idleMs.
    assert.ok(await waitFor(() => idle.closed, 3_000), 'the idle session closed');
    assert.not.ok(reserved.closed, 'a reserved session is kept');
    assert.not.ok(holding.closed, 'a held session is kept');
    assert.equal(closed, ['alice']);
    assert.equal(
      p
        .sessions()
        .map(({ key: k }) => k.principal)
        .sort(),
      ['bob', 'carol'],
    );
    const fresh = await p.acquire(key('alice'));
    assert.is.not(fresh, idle);
    assert.is(echoed(await fresh.call('tools/call', { name: 'echo', arguments: { text: 'again' } })), 'again');
    release();
    reserved.unreserve();
    assert.ok(await waitFor(() => p.size === 0, 3_000), 'released, they close in turn');
  } finally {
    await p.close();
  }
});

sessions('should answer a call in flight when its upstream goes away, and open a new session on the next acquire', async () => {
  const upstream = recordingUpstream(createPushServer);
  const reasons: string[] = [];
  const p = new SessionPool(inProcessBackend(upstream.upstream), { onSessionClosed: (_k, reason) => reasons.push(reason) });
  const k = key('alice');
  try {
    const first = await p.acquire(k);
    const pending = first.call('tools/call', { name: 'wait' });
    assert.ok(await waitFor(() => upstream.withMethod('tools/call').length === 1, 2_000), 'the call reached the server');
    await upstream.servers[0]!.server.close();
    const outcome = await pending;
    assert.ok('error' in outcome && outcome.error.code === -32603, JSON.stringify(outcome));
    assert.match((outcome as { error: { message: string } }).error.message, 'the upstream server closed the connection');
    assert.ok(first.closed);
    assert.equal(reasons, ['closed the connection']);
    assert.is(p.size, 0, 'the closed session left the pool');
    assert.is(p.tryAcquire(k), undefined);
    const next = await p.acquire(k);
    assert.is.not(next, first);
    assert.is(upstream.servers.length, 2, 'a new upstream server was started');
    assert.is(echoed(await next.call('tools/call', { name: 'echo', arguments: { text: 'back' } })), 'back');
  } finally {
    await p.close();
  }
});

sessions('should retry opening a session that failed to start, and report one that never starts', async () => {
  let attempts = 0;
  const flaky = new SessionPool(
    inProcessBackend(() => {
      attempts++;
      if (attempts === 1) throw new Error('not yet');
      return createPushServer();
    }),
  );
  const failures: unknown[] = [];
  const broken = new SessionPool(
    inProcessBackend(() => {
      throw new Error('no server here');
    }),
    { openAttempts: 2, onOpenFailed: (_k, e) => failures.push(e) },
  );
  // The backoff between attempts does not keep the process up; nothing else here would.
  const alive = setInterval(() => {}, 1_000);
  try {
    const session = await flaky.acquire(key('alice'));
    assert.is(attempts, 2, 'opened on the second attempt');
    assert.is(echoed(await session.call('tools/call', { name: 'echo', arguments: { text: 'up' } })), 'up');
    const error = await rejection(broken.acquire(key('alice')));
    assert.instance(error, Error);
    assert.match((error as Error).message, 'no server here');
    assert.is(failures.length, 1, 'reported once, after its retries');
    assert.is(broken.size, 0);
  } finally {
    clearInterval(alive);
    await Promise.all([flaky.close(), broken.close()]);
  }
});

sessions('should end waiting callers with an error on close, answer calls in flight, and stay closed (idempotent)', async () => {
  const p = pool({ maxPerKey: 1, waitMs: 60_000 });
  const k = key('alice');
  const held = await p.acquire(k, { exclusive: true });
  const other = await p.acquire(key('bob'));
  const inFlight = other.call('tools/call', { name: 'wait' });
  const waiting = rejection(p.acquire(k, { exclusive: true }));
  await sleep(50);
  await p.close();
  const error = await waiting;
  assert.instance(error, AdapterError);
  assert.is((error as AdapterError).code, 'closed');
  assert.ok(held.closed && other.closed, 'every session closed');
  const outcome = await inFlight;
  assert.ok('error' in outcome && outcome.error.code === -32603, JSON.stringify(outcome));
  assert.is(p.size, 0);
  assert.equal(p.sessions(), []);
  await p.close();
  assert.throws(
    () => p.tryAcquire(k),
    (e: unknown) => e instanceof AdapterError && e.code === 'closed',
  );
  const late = await rejection(p.acquire(k));
  assert.ok(late instanceof AdapterError && late.code === 'closed', String(late));
});

sessions(
  'should open another session beside a shared one under load, up to its spread, and keep one per key for a principal of its own',
  async () => {
    const shared = pool({ sharedPrincipal: 'everyone', opening: 4, spread: 2 });
    const own = pool({ opening: 4 });
    const stop = new AbortController();
    setMaxListeners(64, stop.signal);
    try {
      const load = async (p: SessionPool, principal: string) => {
        const calls: Array<Promise<RpcOutcome>> = [];
        for (let i = 0; i < 20; i++) {
          const s = await p.acquire(key(principal));
          calls.push(s.call('tools/call', { name: 'wait', arguments: {} }, { signal: stop.signal, pushable: false }));
        }
        // One more call after the first twenty: its pick finds them all busy.
        await p.acquire(key(principal));
        return calls;
      };
      const calls = [...(await load(shared, 'everyone')), ...(await load(own, 'alice'))];
      assert.ok(await waitFor(() => shared.size === 2, 5000), `${shared.size} shared sessions`);
      const [first, second] = shared.sessions().map((x) => x.session);
      assert.is(first!.inFlight, 20);
      // The next calls go to the least busy session.
      assert.is(await shared.acquire(key('everyone')), second);
      assert.is(own.size, 1, 'a principal of its own keeps its calls on one session');
      stop.abort();
      await Promise.all(calls);
    } finally {
      await shared.close();
      await own.close();
    }
  },
);

sessions.run();
