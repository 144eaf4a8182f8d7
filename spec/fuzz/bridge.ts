/**
 * The other direction under bad input: a legacy client's messages into `LegacyClientBridge` (what
 * `wrapLegacyClient` and `wrapModernServer` put in front of a modern-only server), against the
 * real modern fixture (v2 SDK) in process. Each case is one legacy session: an `initialize` (or a
 * mutated one), then one to six messages, valid or mutated, requests of every kind with ids of
 * every kind, notifications, answers to nobody, batches. The client answers the requests the
 * bridge pushes to it (input rounds). Every request must get exactly one well-formed answer with
 * its id (`-32600` when its envelope is broken), a notification none, and nothing may be thrown
 * but `AdapterError`.
 */
import fc from 'fast-check';
import { NOTE_URI } from '../../fixtures/servers/modernServer.ts';
import { serveModernStdio } from '../../fixtures/servers/modernStdio.ts';
import { AdapterError } from '../../lib/core/errors.ts';
import { createMemoryPair } from '../../lib/transport/memory.ts';
import { ModernPipeUpstream } from '../../lib/transport/modernUpstream.ts';
import { LegacyClientBridge } from '../../lib/wrap/legacyClient/legacyClientBridge.ts';
import { clone, mutation, applyMutations, invalidId, validId, type Json, type Mutation } from './arbitraries.ts';
import { shapeOf } from './httpOracle.ts';
import { INPUT_ANSWERS } from './messages.ts';
import { bounded, checkProperty, settle, type RunOptions } from './runner.ts';

const CLIENT = { name: 'fuzz-legacy-client', version: '1.0.0' };
const INITIALIZE = {
  protocolVersion: '2025-11-25',
  capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } },
  clientInfo: CLIENT,
};

/** Legacy requests (method, params) a client of the modern fixture sends. */
const REQUESTS: Array<[string, Json | undefined]> = [
  ['tools/list', undefined],
  ['tools/call', { name: 'echo', arguments: { text: 'hi' } }],
  ['tools/call', { name: 'ask_name', arguments: {} }],
  ['tools/call', { name: 'consult', arguments: {} }],
  ['tools/call', { name: 'numbers', arguments: {} }],
  ['tools/call', { name: 'no_such_tool', arguments: {} }],
  ['prompts/list', {}],
  ['prompts/get', { name: 'greet', arguments: { name: 'Ada' } }],
  ['resources/list', {}],
  ['resources/read', { uri: NOTE_URI }],
  ['resources/read', { uri: 'note://missing' }],
  ['resources/subscribe', { uri: NOTE_URI }],
  ['resources/unsubscribe', { uri: NOTE_URI }],
  ['logging/setLevel', { level: 'info' }],
  ['ping', undefined],
  ['completion/complete', { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'A' } }],
  ['tasks/list', {}],
  ['no/such/method', {}],
];

const OTHERS: unknown[] = [
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'x' } },
  { jsonrpc: '2.0', id: 'nobody', result: {} },
  { jsonrpc: '2.0', id: 'nobody', error: { code: -32603, message: 'x' } },
];

interface MessageSpec {
  readonly kind: 'request' | 'other' | 'batch';
  readonly index: number;
  readonly id: { readonly valid: boolean; readonly value: unknown };
  readonly mutations: readonly Mutation[];
  readonly size: number;
}

const id = fc.oneof(
  { weight: 6, arbitrary: validId.map((value) => ({ valid: true, value })) },
  { weight: 1, arbitrary: invalidId.map((value) => ({ valid: false, value })) },
);
const messageSpec: fc.Arbitrary<MessageSpec> = fc.record({
  kind: fc.constantFrom('request', 'request', 'request', 'other', 'batch') as fc.Arbitrary<MessageSpec['kind']>,
  index: fc.nat(),
  id,
  mutations: fc.oneof(fc.constant([]), fc.array(mutation({ maxDepth: 64, maxHuge: 70_000 }), { minLength: 1, maxLength: 3 })),
  size: fc.integer({ min: 1, max: 3 }),
});

function build(spec: MessageSpec): unknown {
  const request = (i: number, idValue: unknown) => {
    const [method, params] = REQUESTS[i % REQUESTS.length]!;
    return { jsonrpc: '2.0', id: idValue, method, ...(params ? { params: clone(params) } : {}) };
  };
  let message: unknown;
  if (spec.kind === 'request') message = request(spec.index, spec.id.value);
  else if (spec.kind === 'other') message = clone(OTHERS[spec.index % OTHERS.length]);
  else message = Array.from({ length: spec.size }, (_, k) => request(spec.index + k, spec.id.value));
  return spec.mutations.length > 0 ? applyMutations(message, spec.mutations) : message;
}

/**
 * The answers a message is owed, by id (`none` for an error whose id could not be read): one per
 * request, one `-32600` per broken message (a batch's members each count on their own).
 */
function owed(message: unknown, cancelled: ReadonlySet<string>): Array<[string, number, number]> {
  const shape = shapeOf(message);
  if (shape.kind === 'batch')
    return (message as unknown[]).flatMap((m) => (Array.isArray(m) ? [['none', 1, 1] as [string, number, number]] : owed(m, cancelled)));
  if (shape.kind === 'broken') return [[shape.id === undefined ? 'none' : JSON.stringify(shape.id), 1, 1]];
  if (shape.kind !== 'request') return [];
  const key = JSON.stringify(shape.id);
  return [[key, cancelled.has(key) ? 0 : 1, 1]];
}

/** The upstream every case's session shares, as `wrapModernServer` does. */
export interface BridgeFixture {
  readonly upstream: ModernPipeUpstream;
  close(): Promise<void>;
}

export async function createBridgeFixture(): Promise<BridgeFixture> {
  const [client, server] = createMemoryPair();
  const served = serveModernStdio(server as never);
  const upstream = new ModernPipeUpstream(client);
  await upstream.start();
  return {
    upstream,
    async close() {
      await upstream.close();
      await served.close();
    },
  };
}

/** One legacy session; the problems. */
async function runSession(
  fixture: BridgeFixture,
  init: { mutations: readonly Mutation[] },
  specs: readonly MessageSpec[],
): Promise<string[]> {
  const problems: string[] = [];
  const out: Json[] = [];
  const bridge = new LegacyClientBridge(fixture.upstream, { ownsUpstream: false, requestTimeoutMs: 20_000, subscribeAckTimeoutMs: 1000 });
  bridge.onmessage = (message) => {
    const items = (Array.isArray(message) ? message : [message]) as Json[];
    for (const m of items) {
      out.push(m);
      // A request of the bridge to its client (an input round): answered as a client would.
      if (typeof m['method'] === 'string' && 'id' in m && m['method'] in INPUT_ANSWERS) {
        void bridge.send({ jsonrpc: '2.0', id: m['id'], result: INPUT_ANSWERS[m['method'] as keyof typeof INPUT_ANSWERS] }).catch(() => {});
      }
    }
  };
  const sent: unknown[] = [];
  const send = async (message: unknown) => {
    sent.push(message);
    try {
      await bridge.send(message as object);
    } catch (e) {
      if (!(e instanceof AdapterError)) problems.push(`send threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    }
  };
  await bridge.start();
  const initialize = applyMutations({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INITIALIZE }, init.mutations);
  await send(initialize);
  for (const spec of specs) await send(build(spec));

  // Every request answered exactly once (a cancelled one at most once); nothing else answered.
  const expected = new Map<string, { min: number; max: number }>();
  const cancelled = new Set(
    sent
      .filter((m) => shapeOf(m).kind === 'notification' && (m as Json)['method'] === 'notifications/cancelled')
      .map((m) => JSON.stringify(((m as Json)['params'] as Json | undefined)?.['requestId'])),
  );
  for (const message of sent) {
    for (const [key, min, max] of owed(message, cancelled)) {
      const e = expected.get(key) ?? { min: 0, max: 0 };
      expected.set(key, { min: e.min + min, max: e.max + max });
    }
  }
  const answers = (key: string) =>
    out.filter((m) => !('method' in m) && (key === 'none' ? m['id'] === undefined || m['id'] === null : JSON.stringify(m['id']) === key));
  await settle(() => [...expected].every(([key, e]) => answers(key).length >= e.min), 20_000);
  await bridge.close();
  for (const [key, e] of expected) {
    const got = answers(key);
    if (got.length < e.min || got.length > e.max) problems.push(`${got.length} answers for id ${key}, expected ${e.min}…${e.max}`);
  }
  for (const m of out) {
    if ('method' in m) continue;
    const key = m['id'] === undefined || m['id'] === null ? 'none' : JSON.stringify(m['id']);
    if (!expected.has(key)) problems.push(`an answer nobody asked for: ${JSON.stringify(m).slice(0, 300)}`);
    if (m['jsonrpc'] !== '2.0' || 'result' in m === 'error' in m)
      problems.push(`not a JSON-RPC response: ${JSON.stringify(m).slice(0, 300)}`);
    const error = m['error'] as Json | undefined;
    if (error && (typeof error['code'] !== 'number' || !Number.isInteger(error['code']) || typeof error['message'] !== 'string'))
      problems.push(`a malformed error: ${JSON.stringify(error).slice(0, 300)}`);
  }
  return problems.length > 0
    ? [...problems, `sent: ${JSON.stringify(sent).slice(0, 1500)}`, `received: ${JSON.stringify(out).slice(0, 1500)}`]
    : [];
}

/** Runs the bridge property; returns the messages sent. */
export async function fuzzBridge(fixture: BridgeFixture, options: RunOptions): Promise<number> {
  let messages = 0;
  const init = fc.record({
    mutations: fc.oneof(
      { weight: 5, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.array(mutation({ maxDepth: 64, maxHuge: 70_000 }), { minLength: 1, maxLength: 2 }) },
    ),
  });
  const property = fc.asyncProperty(init, fc.array(messageSpec, { minLength: 1, maxLength: 6 }), async (i, specs) => {
    messages += specs.length + 1;
    const problems = await bounded(runSession(fixture, i, specs), 60_000, 'the session');
    if (problems.length > 0) throw new Error(problems.join('\n'));
  });
  await checkProperty('bridge', property, { ...options, noShrink: true });
  return messages;
}
