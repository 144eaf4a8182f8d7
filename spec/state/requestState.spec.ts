import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ErrorCode } from '../../lib/core/errors.ts';
import { Keyring } from '../../lib/state/keyring.ts';
import {
  openReplay,
  openSuspend,
  paramsDigest,
  principalTag,
  pushDigest,
  sameParams,
  sealReplay,
  STATE_REFUSALS,
  stateOwner,
  stateRefusal,
  suspendRefusal,
  suspendState,
  type ReplayState,
  type ReplayExpectation,
  type StateRefusalReason,
  type SuspendHandle,
} from '../../lib/state/requestState.ts';
import { InProcessUsedStates } from '../../lib/state/usedStates.ts';

const NOW = 1_000_000;
const PARAMS = { name: 'ask_name', arguments: { a: 1 } };

function handle(overrides: Partial<SuspendHandle> = {}): SuspendHandle {
  return { callId: 'call-1', round: 1, expiresAt: NOW + 1_000, ...overrides };
}

function replayState(overrides: Partial<ReplayState> = {}): ReplayState {
  return {
    kind: 'replay',
    stateId: 'state-1',
    principalTag: principalTag('alice'),
    method: 'tools/call',
    paramsDigest: paramsDigest(PARAMS),
    round: 1,
    expiresAt: NOW + 1_000,
    answers: [{ key: 'elicitation-1', pushDigest: 'd', result: { action: 'accept' } }],
    asked: { 'elicitation-2': 'e' },
    ...overrides,
  };
}

function expecting(overrides: Partial<ReplayExpectation> = {}): ReplayExpectation {
  return { principal: 'alice', method: 'tools/call', params: PARAMS, now: NOW, ...overrides };
}

/** Flips one bit of the decoded binary part of a state and re-encodes it (a label, if any, kept). */
function flipByte(text: string, index: (length: number) => number): string {
  const [prefix, id, body, ...label] = text.split('.') as [string, string, string, ...string[]];
  const raw = Buffer.from(body, 'base64url');
  raw[index(raw.length)]! ^= 0x01;
  return [prefix, id, raw.toString('base64url'), ...label].join('.');
}

function assertRefusal(
  refusal: { reason: StateRefusalReason; code: number; message: string } | undefined,
  reason: StateRefusalReason,
): void {
  assert.ok(refusal, `expected a refusal (${reason})`);
  assert.is(refusal!.reason, reason);
  assert.is(refusal!.code, ErrorCode.InvalidParams);
  assert.is(refusal!.message, `Invalid params: requestState ${STATE_REFUSALS[reason]}`);
}

async function assertRefused(
  opening:
    | Promise<{ ok: boolean; error?: { reason: StateRefusalReason; code: number; message: string } }>
    | { ok: boolean; error?: { reason: StateRefusalReason; code: number; message: string } },
  reason: StateRefusalReason,
): Promise<void> {
  const opened = await opening;
  assert.not.ok(opened.ok, `expected a refusal (${reason})`);
  assertRefusal(opened.error, reason);
}

const state = suite('openReplay (replay states, sealed)');

state('should open what it sealed, for the same caller and request', async () => {
  const keyring = new Keyring();
  const replay = await openReplay(keyring, sealReplay(keyring, replayState()), expecting());
  assert.ok(replay.ok);
  if (replay.ok) assert.equal(replay.value, replayState());
});

state('should hide what it seals: neither the answers nor the caller can be read from the text', () => {
  const keyring = new Keyring();
  const text = sealReplay(
    keyring,
    replayState({ answers: [{ key: 'elicitation-1', pushDigest: 'd', result: { secret: 'Ada Lovelace' } }] }),
  );
  const body = Buffer.from(text.split('.')[2]!, 'base64url').toString('latin1');
  assert.not.match(body, 'Ada Lovelace');
  assert.not.match(body, principalTag('alice'));
});

state('should read a state it sealed lately exactly as deciphering it reads it, and forget the oldest', async () => {
  const key = Keyring.generate('k1');
  const keyring = new Keyring([key]);
  /** The same key in a ring that sealed nothing: it can only decipher. */
  const twin = new Keyring([key]);
  for (const sealedState of [replayState({ trace: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01' }), replayState()]) {
    const sealed = sealReplay(keyring, sealedState);
    const remembered = await openReplay(keyring, sealed, expecting());
    const deciphered = await openReplay(twin, sealed, expecting());
    assert.ok(remembered.ok && deciphered.ok);
    assert.equal(remembered, deciphered);
    assert.is.not(remembered.ok && remembered.value, deciphered.ok && deciphered.value, 'the twin read its own copy');
  }
  const first = sealReplay(keyring, replayState({ stateId: 'first' }));
  for (let i = 0; i < 300; i++) sealReplay(keyring, replayState({ stateId: `later-${i}` }));
  const opened = await openReplay(keyring, first, expecting());
  assert.ok(opened.ok, 'a state no longer remembered still opens, deciphered');
  if (opened.ok) assert.is(opened.value.stateId, 'first');
});

state('should refuse a state with any byte flipped', async () => {
  const keyring = new Keyring();
  const sealed = sealReplay(keyring, replayState());
  for (const at of [() => 0, () => 20, (n: number) => n >> 1, (n: number) => n - 1]) {
    await assertRefused(openReplay(keyring, flipByte(sealed, at), expecting()), 'not-ours');
  }
  for (const garbage of ['', 'garbage', `${sealed}x`, sealed.slice(0, -4)]) {
    await assertRefused(openReplay(keyring, garbage, expecting()), 'not-ours');
  }
});

state('should refuse a state sealed by another keyring, and a suspend state', async () => {
  const keyring = new Keyring([Keyring.generate('k1')]);
  const other = new Keyring([Keyring.generate('k1')]);
  await assertRefused(openReplay(keyring, sealReplay(other, replayState()), expecting()), 'not-ours');
  await assertRefused(openReplay(keyring, suspendState(handle()), expecting()), 'not-ours');
});

state('should refuse a sealed payload that is not a state', async () => {
  const keyring = new Keyring();
  const sealed = keyring.seal(
    new TextEncoder().encode(JSON.stringify({ c: 'x', p: 'alice', m: 'tools/call', d: '', r: 1, e: NOW + 1e6 })),
    'replayState',
  );
  await assertRefused(openReplay(keyring, sealed, expecting()), 'unreadable');
  const notJson = keyring.seal(new TextEncoder().encode('{'), 'replayState');
  await assertRefused(openReplay(keyring, notJson, expecting()), 'unreadable');
});

state('should refuse a state sealed under a key id the ring does not hold', async () => {
  const keyring = new Keyring([Keyring.generate('old')]);
  const sealed = sealReplay(keyring, replayState());
  await assertRefused(openReplay(new Keyring([Keyring.generate('new')]), sealed, expecting()), 'unknown-key');
});

state('should still open a state sealed under the previous key after a rotation, and not once it retired', async () => {
  const keyring = new Keyring([], { maxKeys: 2 });
  const sealed = sealReplay(keyring, replayState());
  keyring.rotate();
  assert.ok((await openReplay(keyring, sealed, expecting())).ok, 'the previous key still opens');
  const after = sealReplay(keyring, replayState());
  assert.is.not(after.split('.')[1], sealed.split('.')[1], 'the newest key seals');
  keyring.rotate();
  await assertRefused(openReplay(keyring, sealed, expecting()), 'unknown-key');
  assert.ok((await openReplay(keyring, after, expecting())).ok);
});

state('should refuse a state past its expiry', async () => {
  const keyring = new Keyring();
  const sealed = sealReplay(keyring, replayState({ expiresAt: NOW + 100 }));
  assert.ok((await openReplay(keyring, sealed, expecting({ now: NOW + 100 }))).ok, 'still open at its expiry');
  await assertRefused(openReplay(keyring, sealed, expecting({ now: NOW + 101 })), 'expired');
});

state('should refuse a state brought back by another caller', async () => {
  const keyring = new Keyring();
  const sealed = sealReplay(keyring, replayState());
  await assertRefused(openReplay(keyring, sealed, expecting({ principal: 'mallory' })), 'other-principal');
  await assertRefused(openReplay(keyring, sealed, expecting({ principal: '' })), 'other-principal');
});

state('should refuse a state carried by another method', async () => {
  const keyring = new Keyring();
  await assertRefused(openReplay(keyring, sealReplay(keyring, replayState()), expecting({ method: 'prompts/get' })), 'other-method');
});

state('should refuse a state carried with other params, whatever the retry adds of its own', async () => {
  const keyring = new Keyring();
  const sealed = sealReplay(keyring, replayState());
  await assertRefused(openReplay(keyring, sealed, expecting({ params: { ...PARAMS, arguments: { a: 2 } } })), 'other-params');
  await assertRefused(openReplay(keyring, sealed, expecting({ params: undefined })), 'other-params');
  const retry = { arguments: { a: 1 }, _meta: { x: 1 }, inputResponses: {}, requestState: sealed, name: 'ask_name' };
  assert.ok((await openReplay(keyring, sealed, expecting({ params: retry }))).ok, 'member order, _meta and the retry members do not count');
});

state('should refuse a single-use state the second time', async () => {
  const keyring = new Keyring();
  const used = new InProcessUsedStates({ now: () => NOW });
  const sealed = sealReplay(keyring, replayState());
  assert.ok((await openReplay(keyring, sealed, expecting({ used }))).ok);
  await assertRefused(openReplay(keyring, sealed, expecting({ used })), 'used');
  const next = sealReplay(keyring, replayState({ stateId: 'state-2' }));
  assert.ok((await openReplay(keyring, next, expecting({ used }))).ok, 'another state opens');
});

state('should not use up a state refused for another reason', async () => {
  const keyring = new Keyring();
  const used = new InProcessUsedStates({ now: () => NOW });
  const sealed = sealReplay(keyring, replayState());
  await assertRefused(openReplay(keyring, sealed, expecting({ used, principal: 'mallory' })), 'other-principal');
  assert.ok((await openReplay(keyring, sealed, expecting({ used }))).ok);
});

state.run();

const suspend = suite('suspend states (a handle, checked against the parked call)');

const CALL = { principal: 'alice', method: 'tools/call', params: PARAMS, round: 1, expiresAt: NOW + 1_000 };
const RETRY = { principal: 'alice', method: 'tools/call', params: PARAMS };

/** What a retry that brings `text` gets from a process where `call-1` (CALL) is parked: resumed, or the reason it is refused. */
function retried(text: string, retry = RETRY): StateRefusalReason | 'resumed' {
  const opened = openSuspend(text, NOW);
  if (!opened.ok) return opened.error.reason;
  const parked = new Map([['call-1', CALL]]);
  return suspendRefusal(opened.value, parked.get(opened.value.callId), retry)?.reason ?? 'resumed';
}

suspend('should read back the call, its round, its expiry and its owner', () => {
  assert.equal(openSuspend(suspendState(handle()), NOW), { ok: true, value: handle() });
  const owned = suspendState(handle({ owner: 'replica-a', round: 3 }));
  assert.equal(openSuspend(owned, NOW), { ok: true, value: handle({ owner: 'replica-a', round: 3 }) });
  const keyring = new Keyring();
  assert.is(stateOwner(keyring, owned), 'replica-a');
  assert.is(stateOwner(keyring, suspendState(handle())), undefined);
  assert.is(retried(suspendState(handle())), 'resumed');
});

suspend('should route a state written by a replica of the previous version by its label', () => {
  // Those were signed texts in the keyring's format, the owner as their label.
  const keyring = new Keyring();
  const earlier = keyring.seal(Buffer.from('1.2000.call-1'), 'suspendState', 'replica-a');
  assert.is(stateOwner(keyring, earlier), 'replica-a');
  assert.is(retried(earlier), 'not-ours', 'the new format is the only one read as a handle');
});

suspend('should keep in the text nothing of the caller or the request: only what names the parked call', () => {
  const text = suspendState(handle({ callId: '3b2f1c4e-0000-4000-8000-000000000000' }));
  const body = Buffer.from(text.split('.')[1]!, 'base64url').toString('latin1');
  assert.match(body, '3b2f1c4e-0000-4000-8000-000000000000');
  assert.not.match(body, principalTag('alice'));
  assert.not.match(body, paramsDigest(PARAMS));
  assert.ok(text.length < 100, `short: ${text.length} characters`);
});

suspend('attack: a state altered anywhere resumes nothing', () => {
  const text = suspendState(handle());
  const body = Buffer.from(text.split('.')[1]!, 'base64url');
  for (let at = 0; at < body.length; at++) {
    const raw = Buffer.from(body);
    raw[at]! ^= 0x01;
    const result = retried(`mds1.${raw.toString('base64url')}`);
    assert.ok(['gone', 'unreadable', 'stale-round', 'not-ours', 'expired'].includes(result), `byte ${at}: ${result}`);
  }
  // The expiry moved on, or the owner written in or changed: not the text the round was given.
  assert.is(retried(suspendState(handle({ expiresAt: NOW + 10_000_000 }))), 'not-ours');
  assert.is(retried(suspendState(handle({ owner: 'replica-b' }))), 'not-ours');
  // Another call's id: not parked here, or parked for another caller.
  assert.is(retried(suspendState(handle({ callId: 'call-2' }))), 'gone');
  assert.is(retried(suspendState(handle()), { ...RETRY, principal: 'mallory' }), 'other-principal');
});

suspend('attack: garbage, a replay state or a state with a malformed owner is not a suspend state', async () => {
  const text = suspendState(handle({ owner: 'replica-a' }));
  const body = text.split('.')[1]!;
  const keyring = new Keyring();
  for (const garbage of [
    '',
    'garbage',
    'mds1',
    'mds1.',
    `${text}.more`,
    `mds1.${body}.bad label`,
    `mds1.${body}.`,
    `mds2.${body}`,
    `mds1.${body}x`,
    sealReplay(keyring, replayState()),
  ]) {
    await assertRefused(openSuspend(garbage, NOW), 'not-ours');
  }
});

suspend('should refuse a state past its expiry', async () => {
  const text = suspendState(handle({ expiresAt: NOW + 100 }));
  assert.ok(openSuspend(text, NOW + 100).ok, 'still open at its expiry');
  await assertRefused(openSuspend(text, NOW + 101), 'expired');
});

suspend('should refuse a state that names no call', async () => {
  for (const payload of ['1.2', 'x.2.call', '0.2.call', '1.x.call', '1.2.']) {
    await assertRefused(openSuspend(`mds1.${Buffer.from(payload).toString('base64url')}`, NOW), 'unreadable');
  }
});

suspend("should match a retry's params to the call's whatever their order and depth, _meta and the retry members aside", () => {
  assert.ok(
    sameParams(
      { a: 1, b: { c: 2, d: [3, { e: 4 }] } },
      { b: { d: [3, { e: 4 }], c: 2 }, a: 1, _meta: { x: 1 }, inputResponses: {}, requestState: 's' },
    ),
  );
  assert.ok(sameParams(undefined, {}));
  assert.ok(sameParams({ _meta: { progressToken: 1 } }, undefined));
  let deep: unknown = 'leaf';
  for (let i = 0; i < 40; i++) deep = { i, deep };
  assert.ok(sameParams({ arguments: deep }, { arguments: structuredClone(deep) }), 'nested deeper than 16');
  assert.not.ok(sameParams({ a: 1 }, { a: 2 }));
  assert.not.ok(sameParams({ a: 1 }, { a: 1, b: 1 }));
  assert.not.ok(sameParams({ a: 1, b: 1 }, { a: 1 }));
  assert.not.ok(sameParams({ a: [1, 2] }, { a: [2, 1] }));
  assert.not.ok(sameParams({ a: {} }, { a: [] }));
  assert.not.ok(sameParams({ a: null }, { a: {} }));
});

suspend('attack: a retry is checked against the call the state names: caller, method, params and round', () => {
  const h = handle();
  assert.is(suspendRefusal(h, CALL, RETRY), undefined);
  const retryMembers = { ...PARAMS, _meta: { x: 1 }, inputResponses: {}, requestState: 's' };
  assert.is(suspendRefusal(h, CALL, { ...RETRY, params: retryMembers }), undefined, '_meta and the retry members do not count');
  assertRefusal(suspendRefusal(h, undefined, RETRY), 'gone');
  assertRefusal(suspendRefusal(h, CALL, { ...RETRY, principal: 'mallory' }), 'other-principal');
  assertRefusal(suspendRefusal(h, CALL, { ...RETRY, principal: '' }), 'other-principal');
  assertRefusal(suspendRefusal(h, CALL, { ...RETRY, method: 'prompts/get' }), 'other-method');
  assertRefusal(suspendRefusal(h, CALL, { ...RETRY, params: { ...PARAMS, arguments: { a: 2 } } }), 'other-params');
  assertRefusal(suspendRefusal(h, CALL, { ...RETRY, params: undefined }), 'other-params');
  assertRefusal(suspendRefusal(handle({ round: 1 }), { ...CALL, round: 2 }, RETRY), 'stale-round');
  // In a fleet's replica: the state must name this replica, as the one it was given did.
  const mine = handle({ owner: 'replica-a' });
  assert.is(suspendRefusal(mine, CALL, { ...RETRY, owner: 'replica-a' }), undefined);
  assertRefusal(suspendRefusal(h, CALL, { ...RETRY, owner: 'replica-a' }), 'not-ours');
  assertRefusal(suspendRefusal(handle({ owner: 'replica-b' }), CALL, { ...RETRY, owner: 'replica-a' }), 'not-ours');
  assertRefusal(suspendRefusal(mine, CALL, RETRY), 'not-ours');
  assertRefusal(suspendRefusal(handle({ expiresAt: NOW + 1_001 }), CALL, RETRY), 'not-ours');
});

suspend.run();

const digests = suite('requestState digests');

digests('should give the same params digest whatever the member order, _meta or retry members', () => {
  assert.is(
    paramsDigest({ a: 1, b: { c: 2, d: 3 } }),
    paramsDigest({ b: { d: 3, c: 2 }, a: 1, _meta: { x: 1 }, inputResponses: {}, requestState: 's' }),
  );
  assert.is.not(paramsDigest({ a: 1 }), paramsDigest({ a: 2 }));
  assert.is(paramsDigest(undefined), paramsDigest({}));
});

digests('should tag a principal without keeping it', () => {
  assert.is(principalTag('alice'), principalTag('alice'));
  assert.is.not(principalTag('alice'), principalTag('bob'));
  assert.not.match(principalTag('alice'), /alice/);
  assert.is(principalTag('alice').length, 22);
});

digests('should digest a push by its method and params, not its id or _meta', () => {
  const push = { method: 'elicitation/create', params: { message: 'Name?', _meta: { a: 1 } } };
  assert.is(pushDigest(push), pushDigest({ method: 'elicitation/create', params: { message: 'Name?' } }));
  assert.is.not(pushDigest(push), pushDigest({ method: 'elicitation/create', params: { message: 'Age?' } }));
  assert.is.not(pushDigest(push), pushDigest({ method: 'sampling/createMessage', params: { message: 'Name?' } }));
});

digests('should build every refusal as -32602 with its message', () => {
  for (const reason of Object.keys(STATE_REFUSALS) as StateRefusalReason[]) {
    const refusal = stateRefusal(reason);
    assert.is(refusal.code, ErrorCode.InvalidParams);
    assert.match(refusal.message, /^Invalid params: requestState /);
  }
});

digests.run();
