import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { refusalOf } from '../../lib/core/limits.ts';
import { inProcessBackend } from '../../lib/session/backend.ts';
import { EVICTABLE_AFTER_MS, SessionPool, type SessionKey, type SessionPoolOptions } from '../../lib/session/pool.ts';

const CLIENT = { name: 'spec', version: '1.0.0' };

function key(principal: string, capabilities: Record<string, unknown> = {}): SessionKey {
  return { principal, capabilities, clientInfo: CLIENT };
}

function pool(options: SessionPoolOptions): SessionPool {
  return new SessionPool(inProcessBackend(() => createPushServer()), options);
}

/** A session taken alone (reserved, as for a call that may push): busy until `unreserve()`. */
async function busy(p: SessionPool, k: SessionKey) {
  return p.acquire(k, { exclusive: true });
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
  const p = pool({ maxPerPrincipal: 2, waitMs: 100 });
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
    assert.is(await refusal(p.acquire(key('alice', { c: {} }))), 'sessions-per-caller', 'one handed over a moment ago is kept (its call may not be sent yet)');
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
