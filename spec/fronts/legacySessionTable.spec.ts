import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EVICTABLE_AFTER_MS, LegacySessionTable } from '../../lib/fronts/legacySessionTable.ts';

/** A table of plain names whose closes are recorded. */
function table(limits: ConstructorParameters<typeof LegacySessionTable>[0], closed: string[], now?: () => number) {
  return new LegacySessionTable<string>(limits, (s) => closed.push(s), now);
}

function open(t: LegacySessionTable<string>, id: string, principal: string): void {
  const admitted = t.admit(principal);
  assert.ok(admitted.ok, `${id} admitted`);
  if (admitted.ok) admitted.ticket.commit(id, id);
}

const sessions = suite('LegacySessionTable');

sessions('should find a session only for the principal that opened it', () => {
  const t = table({ idleMs: 0 }, []);
  open(t, 's1', 'auth:alice');
  assert.is(t.find('s1', 'auth:alice'), 's1');
  assert.is(t.find('s1', 'auth:mallory'), undefined, 'another caller');
  assert.is(t.find('s1', 'anonymous'), undefined, 'a caller with no credentials');
  assert.is(t.find('s2', 'auth:alice'), undefined);
});

sessions('should close a session left idle, and not one with a request in progress', async () => {
  const closed: string[] = [];
  const t = table({ idleMs: 300 }, closed);
  open(t, 'idle', 'a');
  open(t, 'busy', 'a');
  const ended = t.begin('busy');
  await new Promise((r) => setTimeout(r, 700));
  assert.equal(closed, ['idle']);
  assert.is(t.find('idle', 'a'), undefined);
  assert.is(t.find('busy', 'a'), 'busy');
  ended();
  await new Promise((r) => setTimeout(r, 700));
  assert.equal(closed, ['idle', 'busy']);
  t.drain();
});

sessions("should make room within a caller's bound by closing its own idlest session", () => {
  let now = 0;
  const closed: string[] = [];
  const t = table({ perPrincipal: 2, idleMs: 0 }, closed, () => now);
  open(t, 'a1', 'alice');
  now = 1;
  open(t, 'a2', 'alice');
  now = 2;
  open(t, 'b1', 'bob');
  const inUse = t.begin('a1');
  assert.not.ok(t.admit('alice').ok, 'a2 was used a moment ago: it is kept');
  now = 5_000;
  open(t, 'a3', 'alice');
  assert.equal(closed, ['a2'], 'a1 has a request in progress; a2 has been idle long enough');
  inUse();
  now = 10_000;
  const stillBusy = [t.begin('a1'), t.begin('a3')];
  const full = t.admit('alice');
  assert.not.ok(full.ok, 'both of its sessions are in use');
  if (!full.ok) {
    assert.is(full.refusal.limit, 'legacy-sessions-per-caller');
    assert.is(full.refusal.scope, 'caller');
  }
  for (const e of stillBusy) e();
  now = 20_000;
  assert.not.ok(t.admit('alice').ok, 'sessions in use a moment ago are kept');
  now = 10_000 + EVICTABLE_AFTER_MS.used;
  open(t, 'a4', 'alice');
  assert.equal(closed, ['a2', 'a1'], 'once idle long enough, its idlest gives way');
  assert.is(t.find('b1', 'bob'), 'b1', "another caller's session is never touched");
});

sessions('should serve a newcomer at the bound by closing the idlest session of whoever holds the most', () => {
  let now = 0;
  const closed: string[] = [];
  const t = table({ max: 3, perPrincipal: 8, idleMs: 0 }, closed, () => (now += 1000));
  open(t, 'b1', 'bob');
  open(t, 'm1', 'mallory');
  open(t, 'm2', 'mallory');
  open(t, 'c1', 'carol');
  assert.equal(closed, ['m1'], "mallory holds the most: her idlest goes, bob's older one stays");
  const all = ['b1', 'm2', 'c1'].map((id) => t.begin(id));
  const refused = t.admit('dave');
  assert.not.ok(refused.ok, 'every session is in use');
  if (!refused.ok) {
    assert.is(refused.refusal.limit, 'legacy-sessions');
    assert.is(refused.refusal.scope, 'server');
  }
  for (const e of all) e();
});

sessions('should never give a session whose client listens (an open GET stream) to a crowd of made-up principals', async () => {
  let now = 0;
  const closed: string[] = [];
  const t = table({ max: 4, perPrincipal: 8, idleMs: 0 }, closed, () => now);
  open(t, 'honest', 'alice');
  const used = t.begin('honest');
  used();
  // Alice's client opens its GET stream and listens; her last request was half a minute and more ago.
  let cancel: (() => void) | undefined;
  const stream = new Response(new ReadableStream({ start: (c) => void (cancel = () => c.close()) }), {
    headers: { 'content-type': 'text/event-stream' },
  });
  const get = new Request('http://127.0.0.1/mcp', { method: 'GET', headers: { 'mcp-session-id': 'honest' } });
  const listening = await t.serve(get, 'alice', async () => stream);
  const reader = listening.body!.getReader();
  now = 31_000;
  // Made-up principals fill the table, their sessions busy (as openings and calls are).
  const busy: Array<() => void> = [];
  for (let i = 0; i < 3; i++) {
    open(t, `sybil-${i}`, `sybil-${i}`);
    busy.push(t.begin(`sybil-${i}`));
  }
  now = 40_000;
  for (let i = 3; i < 11; i++) {
    const admitted = t.admit(`sybil-${i}`);
    assert.not.ok(admitted.ok, `sybil-${i} was given a place`);
    if (!admitted.ok) assert.match(admitted.refusal.detail, 'in use or listened to');
  }
  assert.equal(closed, [], 'a listened-to session gave way');
  assert.is(t.find('honest', 'alice'), 'honest');
  // Once nobody listens, it may give way like any idle session.
  cancel!();
  await reader.read();
  open(t, 'newcomer', 'sybil-11');
  assert.equal(closed, ['honest'], 'an idle session nobody listens to gives way');
  for (const e of busy) e();
  t.drain();
});

sessions('should close a session never used after its initialize before one its client uses', () => {
  let now = 0;
  const closed: string[] = [];
  const t = table({ max: 2, idleMs: 0 }, closed, () => now);
  open(t, 'honest', 'alice');
  t.begin('honest')();
  now = 1;
  open(t, 'bare', 'mallory');
  now = 60_000;
  open(t, 'new', 'carol');
  assert.equal(closed, ['bare'], 'the bare one goes, though the used one is idler');
});

sessions('should count a session being opened, and give its place back when cancelled', () => {
  let now = 0;
  const t = table({ max: 1, idleMs: 0 }, [], () => (now += 5000));
  const first = t.admit('a');
  assert.ok(first.ok);
  const second = t.admit('b');
  assert.not.ok(second.ok, 'the place is taken while the first opens');
  if (first.ok) first.ticket.cancel();
  const third = t.admit('b');
  assert.ok(third.ok);
  assert.is(t.size, 1);
});

sessions.run();
