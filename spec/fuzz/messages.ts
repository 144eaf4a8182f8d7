/**
 * The messages the front fuzz targets send: valid modern requests of every method the fixture
 * server serves (and some it does not), legacy-shaped and other messages, retries carrying a
 * `requestState` that must be refused (altered, expired, replayed, foreign, garbage), each with an
 * id of any kind, an optional progress token or log level, and mutations of its structure and
 * text. Shared by the HTTP and the stdio targets.
 */
import fc from 'fast-check';
import {
  applyMutations,
  applyTextMutation,
  invalidId,
  mutation,
  RAW_ID_MARKER,
  RAW_IDS,
  textMutation,
  textOf,
  validId,
  type Json,
  type Mutation,
  type TextMutation,
} from './arbitraries.ts';
import type { Id } from './httpOracle.ts';

export const PV = '2026-07-28';
export const CAPS = { elicitation: {} };
export const CLIENT = { name: 'fuzz-client', version: '1.0.0' };

/** A request body before its id and `_meta` are filled in. */
export interface Template {
  readonly method: string;
  readonly params?: Json;
  /** Modern `_meta` (with these client capabilities), or none (a legacy-shaped message). */
  readonly caps?: Json;
  /** When sent as is: the result is schema-valid, or this refusal comes. */
  readonly valid?: 'result' | { readonly status: number; readonly code: number };
  /** Sent whole or not at all: structural mutations would make the body something else entirely. */
  readonly fixed?: boolean;
  /** A message that is not a request: sent as it is (no id or `_meta` filled in). */
  readonly raw?: unknown;
}

const modern = (method: string, params: Json = {}, valid?: Template['valid'], caps: Json = CAPS): Template => ({
  method,
  params,
  caps,
  ...(valid ? { valid } : {}),
});

/** Valid modern requests of every method the fixture serves, and some it does not. */
const MODERN_TEMPLATES: Template[] = [
  modern('server/discover', {}, 'result'),
  modern('tools/list', {}, 'result'),
  modern('tools/call', { name: 'echo', arguments: { text: 'hi' } }, 'result'),
  modern('tools/call', { name: 'work', arguments: { steps: 3 } }, 'result'),
  modern('tools/call', { name: 'fail', arguments: {} }, 'result'),
  modern('tools/call', { name: 'ask_name', arguments: {} }, 'result'),
  // The v1 SDK checks the session's capabilities before it pushes: the tool fails (isError) instead.
  modern('tools/call', { name: 'ask_name', arguments: {} }, 'result', {}),
  modern('prompts/list', {}, 'result'),
  modern('prompts/get', { name: 'greet', arguments: { name: 'Ada' } }, 'result'),
  modern('resources/list', {}, 'result'),
  modern('resources/templates/list', {}, 'result'),
  modern('resources/read', { uri: 'fixture://readme' }, 'result'),
  modern('subscriptions/listen', { notifications: { resourcesListChanged: true, resourceSubscriptions: ['fixture://readme'] } }),
  modern('tools/call', { name: 'no_such_tool', arguments: {} }),
  modern('resources/read', { uri: 'fixture://missing' }),
  modern('completion/complete', { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'A' } }),
  modern('tasks/get', { taskId: 't-1' }),
  modern('ping', {}, { status: 404, code: -32601 }),
  modern('logging/setLevel', { level: 'info' }, { status: 404, code: -32601 }),
  modern('resources/subscribe', { uri: 'fixture://readme' }, { status: 404, code: -32601 }),
  modern('initialize', { protocolVersion: PV, capabilities: {}, clientInfo: CLIENT }, { status: 404, code: -32601 }),
  modern('tasks/list', {}, { status: 404, code: -32601 }),
  modern('tasks/update', { taskId: 't-1', inputResponses: {} }, { status: 404, code: -32601 }),
  modern('no/such/method', {}, { status: 404, code: -32601 }),
];

/** Legacy-shaped and other messages (no modern `_meta`). */
const LEGACY_TEMPLATES: Template[] = [
  { method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT } },
  { method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: { roots: { listChanged: true } }, clientInfo: CLIENT } },
  { method: 'tools/list' },
  { method: 'ping' },
  { method: 'notifications/initialized', raw: { jsonrpc: '2.0', method: 'notifications/initialized' } },
  { method: 'notifications/cancelled', raw: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'x' } } },
  { method: '', raw: { jsonrpc: '2.0', id: 1, result: {} } },
  { method: '', raw: { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'x' } } },
  {
    method: '',
    raw: [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    ],
  },
  { method: '', raw: [] },
];

/** The states a retry may carry here: none of them may resume anything. */
export interface States {
  /** The state of a call parked for the whole run; only ever sent altered or with other params. */
  readonly live: string;
  readonly expired: string;
  readonly replayed: string;
  readonly foreign: string;
}

type StateUse =
  | { readonly kind: 'live-altered'; readonly change: number }
  | { readonly kind: 'live-other-params' }
  | { readonly kind: 'expired' | 'replayed' | 'foreign' }
  | { readonly kind: 'garbage'; readonly text: string };

function stateTemplate(states: States, use: StateUse): Template {
  const retry = (state: string, args: Json = {}): Template => ({
    method: 'tools/call',
    params: {
      name: 'ask_name',
      arguments: args,
      inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Eve' } } },
      requestState: state,
    },
    caps: CAPS,
    valid: { status: 200, code: -32602 },
    fixed: true,
  });
  switch (use.kind) {
    case 'live-altered': {
      const s = states.live;
      const at = use.change % s.length;
      const altered = [
        s.slice(0, at),
        s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1),
        `${s}x`,
        s.slice(0, -2),
        s.replace('mds1', 'mds2'),
      ][use.change % 5]!;
      return retry(altered === s ? `${s}.` : altered);
    }
    case 'live-other-params':
      return retry(states.live, { extra: 'not the parked call' });
    case 'garbage':
      return retry(use.text);
    default:
      return retry(states[use.kind]);
  }
}

const stateUse: fc.Arbitrary<StateUse> = fc.oneof(
  fc.record({ kind: fc.constant('live-altered' as const), change: fc.nat() }),
  fc.constant({ kind: 'live-other-params' as const }),
  fc.constantFrom({ kind: 'expired' as const }, { kind: 'replayed' as const }, { kind: 'foreign' as const }),
  fc.record({
    kind: fc.constant('garbage' as const),
    text: fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom('', 'mde1', 'mde1..', 'mde1.x.AAAA', 'mds1', 'mds1.', 'mds1.AAAA', 'mds1.MS4xLng'),
    ),
  }),
);

/** One message of a case, as generated. */
export interface MessageSpec {
  readonly template: Template;
  readonly id:
    | { readonly kind: 'valid'; readonly value: Id }
    | { readonly kind: 'invalid'; readonly value: unknown }
    | { readonly kind: 'raw'; readonly index: number };
  readonly meta: { readonly progressToken?: string | number; readonly logLevel?: string };
  readonly mutations: readonly Mutation[];
  readonly text?: TextMutation | undefined;
}

export function messageSpec(states: States, options: { maxHuge: number }): fc.Arbitrary<MessageSpec> {
  const template = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...MODERN_TEMPLATES) },
    { weight: 2, arbitrary: fc.constantFrom(...LEGACY_TEMPLATES) },
    { weight: 2, arbitrary: stateUse.map((use) => stateTemplate(states, use)) },
  );
  return fc.record(
    {
      template,
      id: fc.oneof(
        { weight: 8, arbitrary: validId.map((value) => ({ kind: 'valid' as const, value })) },
        { weight: 1, arbitrary: invalidId.map((value) => ({ kind: 'invalid' as const, value })) },
        { weight: 1, arbitrary: fc.nat(RAW_IDS.length - 1).map((index) => ({ kind: 'raw' as const, index })) },
      ),
      meta: fc.record(
        { progressToken: fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), logLevel: fc.constantFrom('debug', 'info', 'error') },
        { requiredKeys: [] },
      ),
      mutations: fc.oneof(
        { weight: 1, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(mutation({ maxHuge: options.maxHuge }), { minLength: 1, maxLength: 3 }) },
      ),
      text: fc.option(textMutation, { nil: undefined, freq: 8 }),
    },
    { requiredKeys: ['template', 'id', 'meta', 'mutations'] },
  );
}

/** The message of a spec, before its text is written (`rawId`: the id token to write in place of its marker). */
export function compose(spec: MessageSpec): { message: unknown; rawId: string | undefined } {
  const t = spec.template;
  if (t.raw !== undefined)
    return { message: !t.fixed && spec.mutations.length > 0 ? applyMutations(t.raw, spec.mutations) : t.raw, rawId: undefined };
  const id = spec.id.kind === 'raw' ? RAW_ID_MARKER : spec.id.value;
  const rawId = spec.id.kind === 'raw' ? RAW_IDS[spec.id.index]![0] : undefined;
  const params: Json = { ...(t.params ?? {}) };
  if (t.caps) {
    params['_meta'] = {
      'io.modelcontextprotocol/protocolVersion': PV,
      'io.modelcontextprotocol/clientInfo': CLIENT,
      'io.modelcontextprotocol/clientCapabilities': t.caps,
      ...(spec.meta.progressToken !== undefined ? { progressToken: spec.meta.progressToken } : {}),
      ...(spec.meta.logLevel !== undefined ? { 'io.modelcontextprotocol/logLevel': spec.meta.logLevel } : {}),
    };
  }
  const message: unknown = { jsonrpc: '2.0', id, method: t.method, ...(t.params || t.caps ? { params } : {}) };
  return { message: !t.fixed && spec.mutations.length > 0 ? applyMutations(message, spec.mutations) : message, rawId };
}

/** The text of a message as it travels (UTF-8: a lone surrogate arrives as U+FFFD). */
export function textFor(spec: MessageSpec, message: unknown, rawId: string | undefined): string {
  let text = textOf(message, rawId);
  if (spec.text) text = applyTextMutation(text, spec.text);
  return Buffer.from(text, 'utf8').toString('utf8');
}

/** The message as a server decodes `text` (or `fallback` when it is not JSON). */
export function decoded(text: string, fallback: unknown): unknown {
  try {
    return JSON.parse(text.startsWith('\ufeff') ? text.slice(1) : text);
  } catch {
    return fallback;
  }
}

export function progressTokenOf(message: unknown): unknown {
  return ((message as { params?: { _meta?: Json } } | null)?.params?._meta ?? {})['progressToken'];
}

/** What a modern client answers each kind of input request with. */
export const INPUT_ANSWERS = {
  'elicitation/create': { action: 'accept', content: { name: 'Ada' } },
  'sampling/createMessage': { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' },
  'roots/list': { roots: [] },
};

/** A modern request with a full, valid envelope. */
export function modernMessage(id: Id, method: string, params: Json, caps: Json = CAPS): Json {
  return {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': PV,
        'io.modelcontextprotocol/clientInfo': CLIENT,
        'io.modelcontextprotocol/clientCapabilities': caps,
      },
    },
  };
}

/** The params of the retry a modern client sends for an `input_required` result, and the capabilities it declared. */
export function retryParams(sent: Json, result: Json): { params: Json; caps: Json } {
  const inputs = (result['inputRequests'] ?? {}) as Record<string, { method: keyof typeof INPUT_ANSWERS }>;
  const inputResponses = Object.fromEntries(Object.entries(inputs).map(([key, input]) => [key, INPUT_ANSWERS[input.method]]));
  const params = { ...(sent['params'] as Json) };
  const meta = params['_meta'] as Json;
  delete params['_meta'];
  return {
    params: { ...params, inputResponses, requestState: result['requestState'] },
    caps: meta['io.modelcontextprotocol/clientCapabilities'] as Json,
  };
}
