/**
 * `requestState`: what a state names, how it is protected, and every check made when a retry
 * brings it back (key, integrity, principal, method, params, round, expiry, single use), with the
 * one set of refusals those checks answer with. A suspend state names a call parked in this
 * process, which keeps all the rest: the text is only a handle (the call's random id), and every
 * check is made against that call. A replay state carries the answers given so far, and whatever
 * it is checked against: it is sealed. Not here: what a parked call is or how a round is run.
 */
import { hash } from 'node:crypto';
import * as v from 'valibot';
import { invalidParams, type WireError } from '../core/errors.ts';
import type { JsonRpcRequest } from '../core/jsonrpc.ts';
import { fail, ok, type Outcome } from '../core/outcome.ts';
import { canonicalJson, isRecord, omitKeys, sameJson, type JsonObject } from '../core/primitives.ts';
import { isLabel, type Keyring } from './keyring.ts';
import type { UsedStates } from './usedStates.ts';

/** A base64url SHA-256 of `text`, whole (`size` 43) or cut to `size` characters. */
function digest(text: string, size = 43): string {
  return hash('sha256', text, 'base64url').slice(0, size);
}

/** The last principal tagged, and its tag: most states are sealed and opened for the caller before. */
let lastTagged: { principal: string; tag: string } | undefined;

/** What a state keeps of the caller: a tag of its principal, never the principal itself. */
export function principalTag(principal: string): string {
  if (lastTagged?.principal === principal) return lastTagged.tag;
  const tag = digest(principal, 22);
  lastTagged = { principal, tag };
  return tag;
}

/** What of a request's params is not the request's own: `_meta` and the retry's members. */
const NOT_THE_REQUEST = ['_meta', 'inputResponses', 'requestState'];

/** What a replay state keeps of the request's params: a digest, without `_meta` and the retry's own members. */
export function paramsDigest(params: JsonObject | undefined): string {
  return digest(canonicalJson(params ? omitKeys(params, NOT_THE_REQUEST) : {}));
}

/**
 * Whether a retry's params are the parked call's (`_meta` and the retry's own members aside, and
 * the order of members): compared as they are, to the depth the decoder let in.
 */
export function sameParams(call: JsonObject | undefined, retry: JsonObject | undefined): boolean {
  return sameJson(omitKeys(call ?? {}, NOT_THE_REQUEST), omitKeys(retry ?? {}, NOT_THE_REQUEST), 0, Number.POSITIVE_INFINITY);
}

/** What identifies a push across runs of a call (replay mode): its method and params, without `_meta`. */
export function pushDigest(push: Pick<JsonRpcRequest, 'method' | 'params'>): string {
  const params = isRecord(push.params) ? omitKeys(push.params, ['_meta']) : {};
  return digest(`${push.method}\u0000${canonicalJson(params)}`, 22);
}

/**
 * A suspend state: the call it names (parked in the process that wrote it), the round it answers,
 * when it stops opening, and the replica the call is parked in (in a fleet: a retry that lands
 * elsewhere is forwarded there, by the owner the text names). Everything else a retry must match
 * (principal, method, params) is kept by the parked call, not in the text.
 */
export interface SuspendHandle {
  readonly callId: string;
  readonly round: number;
  /** When the state stops opening (ms since the epoch). */
  readonly expiresAt: number;
  readonly owner?: string;
}

/** What a parked call keeps of its first request, for a retry to match. */
export interface SuspendedCall {
  readonly principal: string;
  readonly method: string;
  /** The first request's params. */
  readonly params: JsonObject | undefined;
  /** The round it waits on (the last one it answered). */
  readonly round: number;
  /** When that round stops, as its state says. */
  readonly expiresAt: number;
}

/** One push answered in replay mode: its input key, the digest of the push, the result given upstream. */
export const RecordedAnswerSchema = v.object({
  key: v.string(),
  pushDigest: v.string(),
  result: v.record(v.string(), v.unknown()),
});
export type RecordedAnswer = v.InferOutput<typeof RecordedAnswerSchema>;

/** The state of a replayed call: the answers given so far and the pushes the last round asked. */
export const ReplayStateSchema = v.object({
  /** In the sealed JSON, as replicas of earlier versions read it. */
  kind: v.literal('replay'),
  /** `principalTag` of the caller the state was minted for. */
  principalTag: v.string(),
  method: v.string(),
  /** `paramsDigest` of the request's params. */
  paramsDigest: v.string(),
  /** The round the state answers: 1 for the first `input_required`. */
  round: v.pipe(v.number(), v.integer(), v.minValue(1)),
  /** When the state stops opening (ms since the epoch). */
  expiresAt: v.number(),
  /** The `traceparent` of the call's first round, when it was traced: a retry without trace context of its own continues that trace. */
  trace: v.optional(v.string()),
  /** This state's own id, so that it can be used once. */
  stateId: v.string(),
  answers: v.array(RecordedAnswerSchema),
  /** The pushes asked in the last round: input key → `pushDigest`. */
  asked: v.record(v.string(), v.string()),
});
export type ReplayState = v.InferOutput<typeof ReplayStateSchema>;

/** Bound into a replay state's seal, so that no other text a keyring seals opens as one. */
const REPLAY_AAD = 'replayState';

/** Every reason a state is refused, and what the client is told (after `requestState `). */
export const STATE_REFUSALS = {
  'unknown-key': 'was sealed under a key this server no longer holds',
  'not-ours': 'is not valid: it was altered or is not ours',
  unreadable: 'is not valid',
  expired: 'has expired; start the request again without it',
  'other-principal': 'belongs to another caller',
  'other-method': 'was issued for a different request',
  'other-params': 'was issued for a different request',
  gone: 'refers to a call that is no longer waiting (finished, released or on another server)',
  'stale-round': 'was already used',
  used: 'was already used',
} as const;
export type StateRefusalReason = keyof typeof STATE_REFUSALS;

/** A refused state: the wire error to answer with (`-32602`), and why. */
export interface StateRefusal extends WireError {
  readonly reason: StateRefusalReason;
}

/** The refusal for `reason`. */
export function stateRefusal(reason: StateRefusalReason): StateRefusal {
  return { ...invalidParams(`requestState ${STATE_REFUSALS[reason]}`), reason };
}

/**
 * What a replay state sealed by this process reads back as (its JSON, checked against the schema),
 * by the bytes sealed: a keyring gives those very bytes back when it opens a text it sealed lately,
 * and the state is then not read again.
 */
const readBack = new WeakMap<Uint8Array, ReplayState>();

/** Seals a replay state under the keyring's newest key; the text is what the client carries back. */
export function sealReplay(keyring: Keyring, state: ReplayState): string {
  const json = JSON.stringify(state);
  const bytes = Buffer.from(json);
  const read = v.safeParse(ReplayStateSchema, JSON.parse(json));
  if (read.success) readBack.set(bytes, Object.freeze(read.output));
  return keyring.seal(bytes, REPLAY_AAD);
}

/**
 * What begins a suspend state's text. A keyring's sealed texts begin `mde1.`: neither opens as the
 * other.
 */
const SUSPEND_PREFIX = 'mds1';
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * A suspend state's text for `handle`: `mds1.`, then `round.expiresAt.callId` in base64url, then
 * `.owner` when the call is parked in a fleet's replica. Nothing in it is sealed or signed, and
 * nothing needs to be: it is a handle, as a session id is. The call id is random (122 bits), so
 * only the caller it was given to can name the call, and every check is made against the parked
 * call itself (caller, method, params, round, and the expiry and owner its round was given): a text
 * altered anywhere is refused (`suspendRefusal`).
 */
export function suspendState(handle: SuspendHandle): string {
  const body = Buffer.from(`${handle.round}.${handle.expiresAt}.${handle.callId}`).toString('base64url');
  // A fleet's retry is routed by its call's owner, read from the text.
  const owner = writtenOwner(handle.owner);
  return owner !== undefined ? `${SUSPEND_PREFIX}.${body}.${owner}` : `${SUSPEND_PREFIX}.${body}`;
}

/** The owner a suspend state names for a call parked in replica `replica`: none unless it can be written in the text. */
function writtenOwner(replica: string | undefined): string | undefined {
  return replica !== undefined && isLabel(replica) ? replica : undefined;
}

/** The parts of a suspend state's text (`mds1`, body[, owner]), or undefined when it is not one. */
function suspendParts(text: string): string[] | undefined {
  const parts = text.split('.');
  return (parts.length === 2 || (parts.length === 3 && isLabel(parts[2]!))) && parts[0] === SUSPEND_PREFIX && BASE64URL.test(parts[1]!)
    ? parts
    : undefined;
}

/**
 * A suspend state's handle, read from its text: or why not (not a suspend state, no call named,
 * expired at `now`). Whether it names a call of the caller's is known only from the parked call
 * (`suspendRefusal`).
 */
export function openSuspend(text: string, now: number): Outcome<SuspendHandle, StateRefusal> {
  const parts = suspendParts(text);
  if (!parts) return fail(stateRefusal('not-ours'));
  const body = parts[1]!;
  const bytes = Buffer.from(body, 'base64url');
  // Only the exact text we wrote: base64url tails with spare bits set decode to the same bytes.
  if (bytes.toString('base64url') !== body) return fail(stateRefusal('not-ours'));
  const [round, expiresAt, callId] = splitHandle(bytes.toString('utf8'));
  if (!Number.isSafeInteger(round) || round < 1 || !Number.isFinite(expiresAt) || !callId) return fail(stateRefusal('unreadable'));
  if (expiresAt < now) return fail(stateRefusal('expired'));
  const owner = parts[2];
  return ok(owner !== undefined ? { callId, round, expiresAt, owner } : { callId, round, expiresAt });
}

/** `round.expiresAt.callId` read back (the call id may hold anything). */
function splitHandle(payload: string): [number, number, string] {
  const first = payload.indexOf('.');
  const second = payload.indexOf('.', first + 1);
  if (first < 0 || second < 0) return [Number.NaN, Number.NaN, ''];
  return [Number(payload.slice(0, first)), Number(payload.slice(first + 1, second)), payload.slice(second + 1)];
}

/**
 * Whether a retry that brought `handle` may resume `call` (the call it names, undefined when none
 * is parked under that id): the same caller, method and params, the round it waits on, and the
 * very state that round was given (its expiry, and the replica `owner` it names: the retry's
 * `owner` is this process's replica id in a fleet). The refusal, or undefined when it may.
 */
export function suspendRefusal(
  handle: SuspendHandle,
  call: SuspendedCall | undefined,
  retry: {
    readonly principal: string;
    readonly method: string;
    readonly params: JsonObject | undefined;
    readonly owner?: string | undefined;
  },
): StateRefusal | undefined {
  if (!call) return stateRefusal('gone');
  if (call.principal !== retry.principal) return stateRefusal('other-principal');
  if (call.method !== retry.method) return stateRefusal('other-method');
  if (!sameParams(call.params, retry.params)) return stateRefusal('other-params');
  if (call.round !== handle.round) return stateRefusal('stale-round');
  // Only the text written for the round: an expiry moved, or the owner changed or taken off.
  if (call.expiresAt !== handle.expiresAt || handle.owner !== writtenOwner(retry.owner)) return stateRefusal('not-ours');
  return undefined;
}

/** A sealed replay state opened and read, or why it is refused (key, integrity, shape). */
function decodeReplay(keyring: Keyring, sealed: string): Outcome<ReplayState, StateRefusal> {
  const opened = keyring.open(sealed, REPLAY_AAD);
  if (!opened.ok) return fail(stateRefusal(opened.error === 'unknown-key' ? 'unknown-key' : 'not-ours'));
  const known = readBack.get(opened.value);
  if (known) return ok(known);
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(opened.value.buffer, opened.value.byteOffset, opened.value.byteLength).toString('utf8'));
  } catch {
    return fail(stateRefusal('unreadable'));
  }
  const parsed = v.safeParse(ReplayStateSchema, json);
  return parsed.success ? ok(parsed.output) : fail(stateRefusal('unreadable'));
}

/**
 * The replica a suspend state names as the owner of its call (`undefined` without one): what a
 * fleet routes a retry by. No other check is made here; the owner makes them all when the retry
 * reaches it. A state written by a replica of an earlier version (signed, in a keyring's format
 * with the owner as its label) is routed by that label, so a fleet can be upgraded one replica at
 * a time with rounds in flight.
 */
export function stateOwner(keyring: Keyring, text: string): string | undefined {
  const parts = suspendParts(text);
  return parts ? parts[2] : keyring.labelOf(text);
}

/**
 * The `traceparent` a sealed replay state keeps of its call's first round, when it opens with
 * `keyring`. No other check is made: the span of a retry is started before its state is.
 */
export function replayTrace(keyring: Keyring, sealed: string): string | undefined {
  const replay = decodeReplay(keyring, sealed);
  return replay.ok ? replay.value.trace : undefined;
}

/** What the retry that brings a replay state back must match. */
export interface ReplayExpectation {
  readonly principal: string;
  readonly method: string;
  readonly params: JsonObject | undefined;
  /** The time now (ms). */
  readonly now: number;
  /** Takes each state once (nothing on the server remembers a replay state). */
  readonly used?: UsedStates;
}

/** Opens a sealed replay state and makes every check on it, in order; the first that fails refuses it. */
export async function openReplay(keyring: Keyring, sealed: string, expect: ReplayExpectation): Promise<Outcome<ReplayState, StateRefusal>> {
  const decoded = decodeReplay(keyring, sealed);
  if (!decoded.ok) return decoded;
  const state = decoded.value;
  if (state.expiresAt < expect.now) return fail(stateRefusal('expired'));
  if (state.principalTag !== principalTag(expect.principal)) return fail(stateRefusal('other-principal'));
  if (state.method !== expect.method) return fail(stateRefusal('other-method'));
  if (state.paramsDigest !== paramsDigest(expect.params)) return fail(stateRefusal('other-params'));
  // Last, so that a state refused for another reason is not used up.
  if (expect.used && !(await expect.used.claim(state.stateId, state.expiresAt))) return fail(stateRefusal('used'));
  return ok(state);
}
