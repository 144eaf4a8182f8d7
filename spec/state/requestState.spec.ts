import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ErrorCode } from '../../lib/core/errors.ts';
import { Keyring } from '../../lib/state/keyring.ts';
import {
  openState,
  paramsDigest,
  principalTag,
  pushDigest,
  sealState,
  STATE_REFUSALS,
  stateRefusal,
  type ReplayState,
  type StateExpectation,
  type StateKind,
  type StateRefusalReason,
  type SuspendState,
} from '../../lib/state/requestState.ts';
import { InProcessUsedStates } from '../../lib/state/usedStates.ts';

const NOW = 1_000_000;
const PARAMS = { name: 'ask_name', arguments: { a: 1 } };

function suspendState(overrides: Partial<SuspendState> = {}): SuspendState {
  return {
    kind: 'suspend',
    callId: 'call-1',
    principalTag: principalTag('alice'),
    method: 'tools/call',
    paramsDigest: paramsDigest(PARAMS),
    round: 1,
    expiresAt: NOW + 1_000,
    ...overrides,
  };
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

function expecting<K extends StateKind>(kind: K, overrides: Partial<StateExpectation<K>> = {}): StateExpectation<K> {
  return { kind, principal: 'alice', method: 'tools/call', params: PARAMS, now: NOW, ...overrides };
}

/** Flips one bit of the decoded binary part of a sealed state and re-encodes it. */
function flipByte(sealed: string, index: (length: number) => number): string {
  const [prefix, id, body] = sealed.split('.') as [string, string, string];
  const raw = Buffer.from(body, 'base64url');
  raw[index(raw.length)]! ^= 0x01;
  return `${prefix}.${id}.${raw.toString('base64url')}`;
}

async function assertRefused(
  opening: Promise<{ ok: boolean; error?: { reason: StateRefusalReason; code: number; message: string } }>,
  reason: StateRefusalReason,
): Promise<void> {
  const opened = await opening;
  assert.not.ok(opened.ok, `expected a refusal (${reason})`);
  assert.is(opened.error!.reason, reason);
  assert.is(opened.error!.code, ErrorCode.InvalidParams);
  assert.is(opened.error!.message, `Invalid params: requestState ${STATE_REFUSALS[reason]}`);
}

const state = suite('openState');

state('should open what it sealed, for the same caller and request', async () => {
  const keyring = new Keyring();
  const opened = await openState(keyring, sealState(keyring, suspendState()), expecting('suspend'));
  assert.ok(opened.ok);
  if (opened.ok) assert.equal(opened.value, suspendState());
  const replay = await openState(keyring, sealState(keyring, replayState()), expecting('replay'));
  assert.ok(replay.ok);
  if (replay.ok) assert.equal(replay.value, replayState());
});

state('should read a state it sealed lately exactly as deciphering it reads it, and forget the oldest', async () => {
  const key = Keyring.generate('k1');
  const keyring = new Keyring([key]);
  /** The same key in a ring that sealed nothing: it can only decipher. */
  const twin = new Keyring([key]);
  for (const sealedState of [
    suspendState({ owner: 'replica-a', trace: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01' }),
    { ...suspendState(), owner: undefined },
    replayState(),
  ]) {
    const sealed = sealState(keyring, sealedState as SuspendState);
    const remembered = await openState(keyring, sealed, expecting(sealedState.kind));
    const deciphered = await openState(twin, sealed, expecting(sealedState.kind));
    assert.ok(remembered.ok && deciphered.ok);
    assert.equal(remembered, deciphered);
    assert.is.not(remembered.ok && remembered.value, deciphered.ok && deciphered.value, 'the twin read its own copy');
  }
  const first = sealState(keyring, suspendState({ callId: 'first' }));
  for (let i = 0; i < 300; i++) sealState(keyring, suspendState({ callId: `later-${i}` }));
  const opened = await openState(keyring, first, expecting('suspend'));
  assert.ok(opened.ok, 'a state no longer remembered still opens, deciphered');
  if (opened.ok) assert.is(opened.value.callId, 'first');
});

state('should refuse a state with any byte flipped', async () => {
  const keyring = new Keyring();
  const sealed = sealState(keyring, suspendState());
  for (const at of [() => 0, () => 20, (n: number) => n >> 1, (n: number) => n - 1]) {
    await assertRefused(openState(keyring, flipByte(sealed, at), expecting('suspend')), 'not-ours');
  }
  for (const garbage of ['', 'garbage', `${sealed}x`, sealed.slice(0, -4)]) {
    await assertRefused(openState(keyring, garbage, expecting('suspend')), 'not-ours');
  }
});

state('should refuse a state sealed by another keyring, or of the other kind', async () => {
  const keyring = new Keyring([Keyring.generate('k1')]);
  const other = new Keyring([Keyring.generate('k1')]);
  await assertRefused(openState(keyring, sealState(other, suspendState()), expecting('suspend')), 'not-ours');
  await assertRefused(openState(keyring, sealState(keyring, replayState()), expecting('suspend')), 'not-ours');
  await assertRefused(openState(keyring, sealState(keyring, suspendState()), expecting('replay')), 'not-ours');
});

state('should refuse a sealed payload that is not a state', async () => {
  const keyring = new Keyring();
  const sealed = keyring.seal(
    new TextEncoder().encode(JSON.stringify({ c: 'x', p: 'alice', m: 'tools/call', d: '', r: 1, e: NOW + 1e6 })),
    'requestState',
  );
  await assertRefused(openState(keyring, sealed, expecting('suspend')), 'unreadable');
  const notJson = keyring.seal(new TextEncoder().encode('{'), 'requestState');
  await assertRefused(openState(keyring, notJson, expecting('suspend')), 'unreadable');
});

state('should refuse a state sealed under a key id the ring does not hold', async () => {
  const keyring = new Keyring([Keyring.generate('old')]);
  const sealed = sealState(keyring, suspendState());
  await assertRefused(openState(new Keyring([Keyring.generate('new')]), sealed, expecting('suspend')), 'unknown-key');
});

state('should still open a state sealed under the previous key after a rotation, and not once it retired', async () => {
  const keyring = new Keyring([], { maxKeys: 2 });
  const sealed = sealState(keyring, suspendState());
  keyring.rotate();
  assert.ok((await openState(keyring, sealed, expecting('suspend'))).ok, 'the previous key still opens');
  const after = sealState(keyring, suspendState());
  assert.is.not(after.split('.')[1], sealed.split('.')[1], 'the newest key seals');
  keyring.rotate();
  await assertRefused(openState(keyring, sealed, expecting('suspend')), 'unknown-key');
  assert.ok((await openState(keyring, after, expecting('suspend'))).ok);
});

state('should refuse a state past its expiry', async () => {
  const keyring = new Keyring();
  const sealed = sealState(keyring, suspendState({ expiresAt: NOW + 100 }));
  assert.ok((await openState(keyring, sealed, expecting('suspend', { now: NOW + 100 }))).ok, 'still open at its expiry');
  await assertRefused(openState(keyring, sealed, expecting('suspend', { now: NOW + 101 })), 'expired');
});

state('should refuse a state brought back by another caller', async () => {
  const keyring = new Keyring();
  const sealed = sealState(keyring, suspendState());
  await assertRefused(openState(keyring, sealed, expecting('suspend', { principal: 'mallory' })), 'other-principal');
  await assertRefused(openState(keyring, sealed, expecting('suspend', { principal: '' })), 'other-principal');
});

state('should refuse a state carried by another method', async () => {
  const keyring = new Keyring();
  await assertRefused(
    openState(keyring, sealState(keyring, suspendState()), expecting('suspend', { method: 'prompts/get' })),
    'other-method',
  );
});

state('should refuse a state carried with other params, whatever the retry adds of its own', async () => {
  const keyring = new Keyring();
  const sealed = sealState(keyring, suspendState());
  await assertRefused(openState(keyring, sealed, expecting('suspend', { params: { ...PARAMS, arguments: { a: 2 } } })), 'other-params');
  await assertRefused(openState(keyring, sealed, expecting('suspend', { params: undefined })), 'other-params');
  const retry = { arguments: { a: 1 }, _meta: { x: 1 }, inputResponses: {}, requestState: sealed, name: 'ask_name' };
  assert.ok(
    (await openState(keyring, sealed, expecting('suspend', { params: retry }))).ok,
    'member order, _meta and the retry members do not count',
  );
});

state('should refuse a state of another round, and one whose call no longer waits', async () => {
  const keyring = new Keyring();
  const sealed = sealState(keyring, suspendState({ round: 2 }));
  const asked: string[] = [];
  const opened = await openState(keyring, sealed, expecting('suspend', { round: (s) => (asked.push(s.callId), 2) }));
  assert.ok(opened.ok);
  assert.equal(asked, ['call-1'], 'the call is looked up by the id the state names');
  await assertRefused(openState(keyring, sealed, expecting('suspend', { round: () => 3 })), 'stale-round');
  await assertRefused(openState(keyring, sealed, expecting('suspend', { round: async () => undefined })), 'gone');
});

state('should refuse a single-use state the second time', async () => {
  const keyring = new Keyring();
  const used = new InProcessUsedStates({ now: () => NOW });
  const sealed = sealState(keyring, replayState());
  assert.ok((await openState(keyring, sealed, expecting('replay', { used }))).ok);
  await assertRefused(openState(keyring, sealed, expecting('replay', { used })), 'used');
  const next = sealState(keyring, replayState({ stateId: 'state-2' }));
  assert.ok((await openState(keyring, next, expecting('replay', { used }))).ok, 'another state opens');
  const suspend = sealState(keyring, suspendState());
  assert.ok((await openState(keyring, suspend, expecting('suspend', { used }))).ok);
  await assertRefused(openState(keyring, suspend, expecting('suspend', { used })), 'used');
});

state('should not use up a state refused for another reason', async () => {
  const keyring = new Keyring();
  const used = new InProcessUsedStates({ now: () => NOW });
  const sealed = sealState(keyring, replayState());
  await assertRefused(openState(keyring, sealed, expecting('replay', { used, principal: 'mallory' })), 'other-principal');
  assert.ok((await openState(keyring, sealed, expecting('replay', { used }))).ok);
});

state.run();

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
