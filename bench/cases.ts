/**
 * What is measured: for each case, the work the adapter adds on top of parsing and serialising a
 * message — `classify` of the decoded value, then the translate function (which validates what it
 * needs). Each case also says how to check that a translation came out right.
 */
import {
  LATEST_MODERN_VERSION,
  MetaKey,
  classify,
  inputKeyOf,
  inputRequiredResult,
  requestToLegacy,
  requestToModern,
  resultToLegacy,
  resultToModern,
  type Classified,
  type LegacySessionView,
} from '../lib/core/index.ts';
import {
  SERVER_INFO,
  SESSION,
  legacyElicitationPush,
  legacyToolsCallRequest,
  legacyToolsCallResult,
  legacyToolsListResult,
  modernToolsCallRequest,
  modernToolsCallResult,
  type Json,
} from './messages.ts';

/** A translation's outcome as the harness sees it: the translator's own value, or what went wrong. */
export type Translated = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export interface BenchCase {
  /** Short name, e.g. `tools/call request`. */
  readonly name: string;
  readonly direction: 'legacy→modern' | 'modern→legacy';
  /** The message (decoded) of about `targetBytes` bytes of JSON text. */
  readonly build: (targetBytes: number) => Json;
  /** classify + validate + translate, on an already-decoded message. Must not mutate its input. */
  readonly translate: (decoded: unknown) => Translated;
  /** A one-off check that a successful translation is what it should be; a string says what is wrong. */
  readonly check: (input: Json, output: unknown) => string | undefined;
}

const session: LegacySessionView = SESSION;
const serverInfo = { ...SERVER_INFO };
const REQUEST_STATE = 'AEAD.v1.eyJjYWxsIjoiNDIiLCJyb3VuZCI6MX0.c2VhbGVk';

function wrongKind(c: Classified, want: string): Translated {
  return { ok: false, error: `classified as ${c.kind}, expected ${want}` };
}

function get(value: unknown, ...path: string[]): unknown {
  let node = value;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

function lengthAt(value: unknown, ...path: string[]): number {
  const arr = get(value, ...path);
  return Array.isArray(arr) ? arr.length : -1;
}

export const CASES: readonly BenchCase[] = [
  {
    name: 'tools/call request',
    direction: 'legacy→modern',
    build: legacyToolsCallRequest,
    translate(decoded) {
      const c = classify(decoded);
      if (!c.ok) return c;
      if (c.value.kind !== 'request') return wrongKind(c.value, 'request');
      return requestToModern(c.value.message, session);
    },
    check(input, out) {
      if (get(out, 'params', '_meta', MetaKey.protocolVersion) !== LATEST_MODERN_VERSION) return 'no modern protocolVersion in _meta';
      if (get(out, 'params', '_meta', MetaKey.clientCapabilities) === undefined) return 'no clientCapabilities in _meta';
      if (get(out, 'params', 'arguments') !== get(input, 'params', 'arguments')) return 'arguments not carried over';
      return undefined;
    },
  },
  {
    name: 'tools/call request',
    direction: 'modern→legacy',
    build: modernToolsCallRequest,
    translate(decoded) {
      const c = classify(decoded);
      if (!c.ok) return c;
      if (c.value.kind !== 'request') return wrongKind(c.value, 'request');
      return requestToLegacy(c.value.message);
    },
    check(input, out) {
      const meta = get(out, 'request', 'params', '_meta');
      if (get(meta, MetaKey.protocolVersion) !== undefined || get(meta, MetaKey.clientInfo) !== undefined)
        return 'envelope keys left in _meta';
      if (get(meta, 'progressToken') !== 'p-42') return 'progressToken lost';
      if (get(out, 'request', 'params', 'arguments') !== get(input, 'params', 'arguments')) return 'arguments not carried over';
      return undefined;
    },
  },
  {
    name: 'tools/call result',
    direction: 'legacy→modern',
    build: legacyToolsCallResult,
    translate(decoded) {
      const c = classify(decoded);
      if (!c.ok) return c;
      if (c.value.kind !== 'result') return wrongKind(c.value, 'result');
      return resultToModern('tools/call', c.value.message.result, { serverInfo });
    },
    check(input, out) {
      if (get(out, 'result', 'resultType') !== 'complete') return 'resultType is not complete';
      if (get(out, 'result', '_meta', MetaKey.serverInfo) === undefined) return 'no serverInfo in _meta';
      if (lengthAt(out, 'result', 'content') !== lengthAt(input, 'result', 'content')) return 'content blocks lost';
      return undefined;
    },
  },
  {
    name: 'tools/call result',
    direction: 'modern→legacy',
    build: modernToolsCallResult,
    translate(decoded) {
      const c = classify(decoded);
      if (!c.ok) return c;
      if (c.value.kind !== 'result') return wrongKind(c.value, 'result');
      return resultToLegacy('tools/call', c.value.message.result);
    },
    check(input, out) {
      if (get(out, 'result', 'resultType') !== undefined) return 'resultType left on a legacy result';
      if (get(out, 'result', '_meta') !== undefined) return 'serverInfo left in _meta';
      if (lengthAt(out, 'result', 'content') !== lengthAt(input, 'result', 'content')) return 'content blocks lost';
      return undefined;
    },
  },
  {
    name: 'tools/list result',
    direction: 'legacy→modern',
    build: legacyToolsListResult,
    translate(decoded) {
      const c = classify(decoded);
      if (!c.ok) return c;
      if (c.value.kind !== 'result') return wrongKind(c.value, 'result');
      return resultToModern('tools/list', c.value.message.result, { serverInfo });
    },
    check(input, out) {
      if (get(out, 'result', 'resultType') !== 'complete') return 'resultType is not complete';
      if (typeof get(out, 'result', 'ttlMs') !== 'number') return 'no ttlMs on a cacheable result';
      if (lengthAt(out, 'result', 'tools') !== lengthAt(input, 'result', 'tools')) return 'tools lost';
      if (lengthAt(out, 'invalidTools') !== 0) return 'tools reported invalid';
      const tools = get(out, 'result', 'tools') as Json[];
      if (tools.some((t) => get(t, 'execution', 'taskSupport') !== undefined)) return 'execution.taskSupport left on a tool';
      return undefined;
    },
  },
  {
    name: 'elicitation/create push',
    direction: 'legacy→modern',
    build: legacyElicitationPush,
    translate(decoded) {
      const c = classify(decoded);
      if (!c.ok) return c;
      if (c.value.kind !== 'request') return wrongKind(c.value, 'request');
      const push = c.value.message;
      return inputRequiredResult([{ key: inputKeyOf(push, 1), request: push }], { requestState: REQUEST_STATE, serverInfo });
    },
    check(input, out) {
      if (get(out, 'resultType') !== 'input_required') return 'resultType is not input_required';
      if (get(out, 'requestState') !== REQUEST_STATE) return 'requestState lost';
      const entry = get(out, 'inputRequests', 'elicitation-1');
      if (get(entry, 'method') !== 'elicitation/create') return 'no elicitation-1 input request';
      if (get(entry, 'params', 'requestedSchema') !== get(input, 'params', 'requestedSchema')) return 'requestedSchema not carried over';
      return undefined;
    },
  },
];
