/**
 * The pure translator under bad input: every entry point exported from `lib/core/index.ts` gets
 * valid messages of both eras (from the transcript corpus), the same messages varied in ways that
 * keep them valid (other ids, extra members), the same messages mutated anywhere, and arbitrary
 * values of the declared types. Whatever comes in: nothing is thrown but `AdapterError`, inputs are
 * not touched (they are deep-frozen), the output is plain JSON; for valid input the outcome is a
 * success and every message emitted validates against the official schema of its revision.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import * as core from '../../lib/core/index.ts';
import { AdapterError } from '../../lib/core/errors.ts';
import { LEGACY_INPUT_METHODS, type InputMethod } from '../../lib/core/legacy/inputs.ts';
import { LEGACY_CLIENT_REQUESTS, LEGACY_SERVER_NOTIFICATIONS } from '../../lib/core/legacy/methods.ts';
import { MODERN_SERVER_NOTIFICATIONS } from '../../lib/core/modern/methods.ts';
import { pickModernVersion } from '../../lib/core/era.ts';
import { eraOfDiscoverAnswer } from '../../lib/core/verdict.ts';
import { isRequestId, nestingDepth } from '../../lib/core/jsonrpc.ts';
import { check, validateMessage, type Revision } from '../helpers/schemas.ts';
import { loadScenario, scenarioNames, type Scenario } from '../helpers/transcripts.ts';
import { clone, jsonObject, mutated, smallJson, validId, type Json } from './arbitraries.ts';
import { checkProperty, type RunOptions } from './runner.ts';

const MODERN: Revision = '2026-07-28';
/** What a call may name: the core's entry points, every translator function, and helpers the core keeps to itself. */
const TRANSLATE_DIR = resolve(import.meta.dirname, '../../lib/core/translate');
/** Everything the translator's modules export (lib/core/translate/, one concept per file). */
const translate: Record<string, unknown> = Object.assign(
  {},
  ...(await Promise.all(
    readdirSync(TRANSLATE_DIR)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => import(join(TRANSLATE_DIR, f))),
  )),
);
const ENTRY_POINTS = { ...core, ...translate, isRequestId, nestingDepth, pickModernVersion, eraOfDiscoverAnswer };

/** A call of one entry point, and how to judge its outcome when the input was valid. */
interface Call {
  readonly fn: string;
  readonly args: readonly unknown[];
  /**
   * Set for a valid input: what the outcome must contain, each with its revision and the method a
   * result answers (or, for a bare value, `def:` and the schema definition it must match).
   */
  readonly expect?: (out: unknown) => Array<[Revision, unknown, (string | undefined)?]> | string;
}

/** Valid inputs of one kind, taken from the corpus, with the scenario they come from. */
interface Sample {
  readonly message: Json;
  readonly scenario: Scenario;
  readonly method?: string;
}

interface Pools {
  readonly [kind: string]: Sample[];
}

/** The corpus, sorted into pools by what each line is. */
function loadPools(): Pools {
  const pools: Record<string, Sample[]> = {};
  const add = (kind: string, message: unknown, scenario: Scenario, method?: string) => {
    (pools[kind] ??= []).push({ message: message as Json, scenario, ...(method === undefined ? {} : { method }) });
  };
  for (const name of scenarioNames()) {
    const s = loadScenario(name);
    for (const step of s.steps) {
      const legacy = s.legacy.get(step.label) ?? [];
      const modern = s.modern.get(step.label) ?? [];
      const method = typeof step['method'] === 'string' ? step['method'] : undefined;
      const kinds: Record<string, [string, string]> = {
        request: ['legacyRequest', 'modernRequest'],
        initialize: ['initializeRequest', 'discoverRequest'],
        initializeResult: ['initializeResult', 'discoverResult'],
        result: ['legacyResult', 'modernResult'],
        error: ['legacyError', 'modernError'],
        inputRequired: ['push', 'inputRequired'],
        inputResponses: ['pushAnswer', 'retry'],
        log: ['log', 'log'],
        progress: ['progress', 'progress'],
        cancel: ['cancel', 'cancel'],
        listenNotification: ['unsolicited', 'tagged'],
        urlElicitation: ['urlError', 'inputRequired'],
        task: ['legacyTask', 'modernTask'],
        batch: ['batch', 'modernRequest'],
      };
      const pair = kinds[step.kind];
      if (!pair) continue;
      for (const m of legacy) add(pair[0], m, s, method);
      for (const m of modern) add(pair[1], m, s, method);
      if (step.kind === 'inputResponses') {
        const pending = step['pending'] as Record<string, { id: unknown; method: string }>;
        for (const m of legacy) {
          const key = Object.keys(pending).find((k) => pending[k]!.id === (m as Json)['id']);
          if (key) add('pushAnswerKeyed', { key, method: pending[key]!.method, result: (m as Json)['result'] }, s);
        }
      }
    }
  }
  return pools;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Json)[key]);
  }
  return value;
}

/** Why `value` is not plain JSON data (functions, cycles, non-finite numbers, `undefined` members), if it is not. */
function jsonProblem(value: unknown, seen = new Set<object>(), path = '$'): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${path} is ${value}`;
  if (typeof value !== 'object') return `${path} is a ${typeof value}`;
  if (seen.has(value)) return `${path} is a cycle`;
  seen.add(value);
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) return `${path} is not a plain object`;
  for (const key of Object.keys(value)) {
    const member = (value as Json)[key];
    if (member === undefined) return `${path}.${key} is undefined`;
    const problem = jsonProblem(member, seen, `${path}.${key}`);
    if (problem) return problem;
  }
  seen.delete(value);
  return undefined;
}

/** Emitted messages of a successful outcome, checked against the schema: the problems. */
function schemaProblems(out: unknown, expect: NonNullable<Call['expect']>): string[] {
  const outcome = out as { ok?: boolean; value?: unknown; error?: unknown };
  if (outcome && typeof outcome === 'object' && outcome.ok === false) return [`a valid input failed: ${JSON.stringify(outcome.error)}`];
  const messages = expect(outcome && typeof outcome === 'object' && 'ok' in outcome ? outcome.value : out);
  if (typeof messages === 'string') return [messages];
  return messages.flatMap(([revision, message, method]) => {
    const problems = method?.startsWith('def:')
      ? check(revision, method.slice(4), message)
      : validateMessage(revision, message, method === undefined ? {} : { method });
    return problems.map((p) => `${revision}: ${p} in ${JSON.stringify(message).slice(0, 300)}`);
  });
}

/** The schema definition of each input response (they are bare values, not results). */
const INPUT_RESPONSE_DEFS: Record<InputMethod, string> = {
  'elicitation/create': 'ElicitResult',
  'sampling/createMessage': 'CreateMessageResult',
  'roots/list': 'ListRootsResult',
};

const pick = <T>(list: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...list);

/** Variations that keep a message valid: another id, an extra member on the message, its params or its result. */
function validVariant(message: Json): fc.Arbitrary<Json> {
  return fc
    .record({ id: fc.option(validId, { nil: undefined }), extra: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }) })
    .map(({ id, extra }) => {
      const out = clone(message);
      if (id !== undefined && 'id' in out) out['id'] = id;
      if (extra !== undefined) {
        const into = (out['params'] ?? out['result']) as Json | undefined;
        if (into && typeof into === 'object' && !Array.isArray(into)) into['x-fuzz'] = extra;
      }
      return out;
    });
}

/**
 * A message mutated inside its payload (`params`, `result`, or the error's `data`): the envelope
 * keeps the shape its declared type promises (what `classify` lets through), everything under it
 * may be anything.
 */
function payloadMutated(message: Json, options: { maxDepth: number }): fc.Arbitrary<Json> {
  const key = 'result' in message ? 'result' : 'error' in message ? 'error' : 'params';
  const payload = message[key] ?? {};
  return mutated(payload, { maxDepth: options.maxDepth, maxHuge: 70_000 }).map((m) => {
    const out = clone(message);
    const isObject = m !== null && typeof m === 'object' && !Array.isArray(m);
    if (key === 'error') {
      const error = objectOr(payload);
      out['error'] = { code: error['code'], message: error['message'], ...(isObject ? { data: m } : m === undefined ? {} : { data: m }) };
    } else if (isObject) out[key] = m;
    else if (key === 'result') out[key] = {};
    else delete out[key];
    return out;
  });
}

/** A sample as given or varied (valid), or mutated (invalid). */
function sample(pool: readonly Sample[], maxDepth = 64): fc.Arbitrary<{ s: Sample; message: Json; valid: boolean }> {
  return pick(pool).chain((s) =>
    fc.oneof(
      validVariant(s.message).map((message) => ({ s, message, valid: true })),
      (Array.isArray(s.message)
        ? mutated(s.message, { maxDepth, maxHuge: 70_000 }).map((m) => (Array.isArray(m) ? m : [m]))
        : payloadMutated(s.message, { maxDepth })
      ).map((m) => ({ s, message: m as Json, valid: false })),
    ),
  );
}

const objectOr = (value: unknown): Json => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});

/** A JSON-RPC request of the declared shape (what `classify` lets through), any params. */
const anyRequest = fc.record(
  {
    jsonrpc: fc.constant('2.0' as const),
    id: validId,
    method: fc.oneof(
      fc.string({ maxLength: 12 }),
      pick([
        ...LEGACY_CLIENT_REQUESTS,
        'server/discover',
        'subscriptions/listen',
        'tasks/update',
        'elicitation/create',
        'sampling/createMessage',
        'roots/list',
      ]),
    ),
    params: jsonObject,
  },
  { requiredKeys: ['jsonrpc', 'id', 'method'] },
);
const anyNotification = fc.record(
  {
    jsonrpc: fc.constant('2.0' as const),
    method: fc.oneof(fc.string({ maxLength: 12 }), pick([...LEGACY_SERVER_NOTIFICATIONS, ...MODERN_SERVER_NOTIFICATIONS])),
    params: jsonObject,
  },
  { requiredKeys: ['jsonrpc', 'method'] },
);
const anyError = fc.record(
  {
    code: fc.oneof(fc.integer(), pick([-32002, -32020, -32021, -32022, -32042, -32601, -32602, -32603, -32099, -32000])),
    message: fc.string({ maxLength: 20 }),
    data: smallJson,
  },
  { requiredKeys: ['code', 'message'] },
);
const anyMethod = fc.oneof(
  fc.string({ maxLength: 12 }),
  pick([
    'tools/list',
    'tools/call',
    'prompts/list',
    'prompts/get',
    'resources/list',
    'resources/templates/list',
    'resources/read',
    'completion/complete',
    'initialize',
    'server/discover',
  ]),
);
const inputMethod = pick(Object.keys(LEGACY_INPUT_METHODS) as InputMethod[]);
const implementation = fc.record({ name: fc.string({ maxLength: 8 }), version: fc.string({ maxLength: 8 }) });
const level = pick(core.LOGGING_LEVELS);
const filter = fc.record(
  {
    toolsListChanged: fc.boolean(),
    promptsListChanged: fc.boolean(),
    resourcesListChanged: fc.boolean(),
    resourceSubscriptions: fc.array(fc.string({ maxLength: 12 }), { maxLength: 3 }),
    taskIds: fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }),
  },
  { requiredKeys: [] },
);
const session = fc.record(
  { clientInfo: implementation, capabilities: jsonObject, logLevel: level },
  { requiredKeys: ['clientInfo', 'capabilities'] },
);
const headerLookup = fc.dictionary(
  fc.constantFrom('MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name', 'Mcp-Param-Region', 'Mcp-Param-x'),
  fc.oneof(fc.string({ maxLength: 12 }), pick(['2026-07-28', 'tools/call', '=?base64?AA==?=', '=?base64?x?='])),
  { noNullPrototype: true },
);

/** Every entry point with the arbitrary of its calls. */
function targets(p: Pools): Array<[string, fc.Arbitrary<Call>]> {
  const lv = (s: Sample): Revision => s.scenario.legacyVersion;
  const sessionOf = (s: Sample) => s.scenario.context['session'] ?? { clientInfo: { name: 'c', version: '1' }, capabilities: {} };
  const serverInfo = (s: Sample) => s.scenario.context['serverInfo'];
  const ok = (valid: boolean, expect: NonNullable<Call['expect']>) => (valid ? { expect } : {});
  const request =
    (revision: Revision) =>
    (value: unknown): Array<[Revision, unknown, (string | undefined)?]> => [[revision, value]];
  const t: Array<[string, fc.Arbitrary<Call>]> = [
    [
      'requestToLegacy',
      fc.oneof(
        sample(p['modernRequest']!).map(({ s, message, valid }) => ({
          fn: 'requestToLegacy',
          args: [message],
          ...ok(valid, (v) => [[lv(s), (v as { request: unknown }).request]]),
        })),
        anyRequest.map((r) => ({ fn: 'requestToLegacy', args: [r] })),
      ),
    ],
    [
      'requestToModern',
      fc.oneof(
        sample(p['legacyRequest']!).map(({ s, message, valid }) => ({
          fn: 'requestToModern',
          args: [message, sessionOf(s)],
          ...ok(valid, request(MODERN)),
        })),
        fc.tuple(anyRequest, session).map(([r, se]) => ({ fn: 'requestToModern', args: [r, se] })),
      ),
    ],
    [
      'readEnvelope',
      fc.oneof(
        sample(p['modernRequest']!).map(({ message }) => ({ fn: 'readEnvelope', args: [message] })),
        anyRequest.map((r) => ({ fn: 'readEnvelope', args: [r] })),
      ),
    ],
    [
      'initializeToDiscoverRequest',
      fc.oneof(
        sample(p['initializeRequest']!).map(({ message, valid }) => ({
          fn: 'initializeToDiscoverRequest',
          args: [message],
          ...ok(valid, request(MODERN)),
        })),
        anyRequest.map((r) => ({ fn: 'initializeToDiscoverRequest', args: [{ ...r, method: 'initialize' }] })),
      ),
    ],
    [
      'discoverToInitializeRequest',
      fc.oneof(
        sample(p['discoverRequest']!).map(({ s, message, valid }) => ({
          fn: 'discoverToInitializeRequest',
          args: [message, { legacyVersion: lv(s) }],
          ...ok(valid, request(lv(s))),
        })),
        anyRequest.map((r) => ({ fn: 'discoverToInitializeRequest', args: [{ ...r, method: 'server/discover' }] })),
      ),
    ],
    [
      'initializeResultToDiscover',
      fc.oneof(
        sample(p['initializeResult']!).map(({ message, valid }) => ({
          fn: 'initializeResultToDiscover',
          args: [objectOr(message['result'])],
          ...ok(valid, (v) => [[MODERN, { jsonrpc: '2.0', id: 1, result: v }, 'server/discover']]),
        })),
        jsonObject.map((r) => ({ fn: 'initializeResultToDiscover', args: [r] })),
      ),
    ],
    [
      'discoverToInitializeResult',
      fc.oneof(
        sample(p['discoverResult']!).map(({ s, message, valid }) => ({
          fn: 'discoverToInitializeResult',
          args: [objectOr(message['result']), { requestedVersion: lv(s) }],
          ...ok(valid, (v) => [[lv(s), { jsonrpc: '2.0', id: 1, result: v }, 'initialize']]),
        })),
        fc
          .tuple(jsonObject, fc.string({ maxLength: 12 }))
          .map(([r, version]) => ({ fn: 'discoverToInitializeResult', args: [r, { requestedVersion: version }] })),
      ),
    ],
    [
      'resultToModern',
      fc.oneof(
        sample(p['legacyResult']!).map(({ s, message, valid }) => ({
          fn: 'resultToModern',
          args: [s.method!, objectOr(message['result']), { serverInfo: serverInfo(s) }],
          ...ok(valid, (v) => [[MODERN, { jsonrpc: '2.0', id: 1, result: (v as { result: unknown }).result }, s.method]]),
        })),
        fc.tuple(anyMethod, jsonObject, fc.boolean()).map(([m, r, retry]) => ({ fn: 'resultToModern', args: [m, r, { retry }] })),
      ),
    ],
    [
      'resultToLegacy',
      fc.oneof(
        sample(p['modernResult']!).map(({ s, message, valid }) => ({
          fn: 'resultToLegacy',
          args: [s.method!, objectOr(message['result'])],
          ...ok(valid, (v) => [[lv(s), { jsonrpc: '2.0', id: 1, result: (v as { result: unknown }).result }, s.method]]),
        })),
        fc.tuple(anyMethod, jsonObject).map(([m, r]) => ({ fn: 'resultToLegacy', args: [m, r] })),
      ),
    ],
    [
      'errorToModern',
      fc.oneof(
        sample(p['legacyError']!).map(({ s, message, valid }) => ({
          fn: 'errorToModern',
          args: [message['error'], { method: s.method }],
          ...ok(valid, (v) => [[MODERN, { jsonrpc: '2.0', id: 1, error: v }]]),
        })),
        fc.tuple(anyError, jsonObject).map(([e, params]) => ({ fn: 'errorToModern', args: [e, { method: 'resources/read', params }] })),
      ),
    ],
    [
      'errorToLegacy',
      fc.oneof(
        sample(p['modernError']!).map(({ s, message, valid }) => ({
          fn: 'errorToLegacy',
          args: [message['error'], { method: s.method }],
          ...ok(valid, (v) => [[lv(s), { jsonrpc: '2.0', id: 1, error: v }]]),
        })),
        fc.tuple(anyError, anyMethod).map(([e, method]) => ({ fn: 'errorToLegacy', args: [e, { method }] })),
      ),
    ],
    [
      'inputRequiredResult',
      fc.oneof(
        fc.array(sample(p['push']!), { minLength: 1, maxLength: 3 }).map((list) => ({
          fn: 'inputRequiredResult',
          args: [
            list.map(({ message }, i) => ({ key: core.inputKeyOf(message as never, i + 1), request: message })),
            { requestState: 'state' },
          ],
          // Keys chosen by the servers of different samples may collide: only distinct keys make a valid round.
          ...ok(
            list.every((x) => x.valid) &&
              new Set(list.map(({ message }, i) => core.inputKeyOf(message as never, i + 1))).size === list.length,
            (v) => [[MODERN, { jsonrpc: '2.0', id: 1, result: v }, 'tools/call']],
          ),
        })),
        fc
          .array(
            fc.record({
              key: fc.string({ maxLength: 6 }),
              request: fc.record({ method: fc.oneof(inputMethod, fc.string({ maxLength: 6 })), params: jsonObject }),
            }),
            { maxLength: 3 },
          )
          .map((pushes) => ({ fn: 'inputRequiredResult', args: [pushes] })),
      ),
    ],
    [
      'pushToInputRequest',
      fc.oneof(
        sample(p['push']!).map(({ message }) => ({ fn: 'pushToInputRequest', args: [message] })),
        anyRequest.map((r) => ({ fn: 'pushToInputRequest', args: [r] })),
      ),
    ],
    [
      'readInputRequired',
      fc.oneof(
        sample(p['inputRequired']!).map(({ message }) => ({ fn: 'readInputRequired', args: [objectOr(message['result'])] })),
        jsonObject.map((r) => ({ fn: 'readInputRequired', args: [{ ...r, resultType: 'input_required' }] })),
      ),
    ],
    [
      'inputRequestToPush',
      fc.oneof(
        sample(p['inputRequired']!).chain(({ s, message, valid }) => {
          const requests = objectOr(objectOr(message['result'])['inputRequests']);
          const keys = Object.keys(requests);
          if (keys.length === 0) return fc.constant({ fn: 'inputRequestToPush', args: ['k', {}, { id: 1 }] } as Call);
          return pick(keys).map((key) => ({
            fn: 'inputRequestToPush',
            args: [key, requests[key], { id: 'push-1', elicitationId: 'e-1' }],
            ...ok(valid, request(lv(s))),
          }));
        }),
        fc
          .tuple(
            fc.string({ maxLength: 6 }),
            fc.record({ method: fc.oneof(inputMethod, fc.string({ maxLength: 6 })), params: smallJson }),
            validId,
          )
          .map(([key, input, id]) => ({ fn: 'inputRequestToPush', args: [key, input, { id }] })),
      ),
    ],
    [
      'resultToInputResponse',
      fc.oneof(
        pick(p['pushAnswerKeyed']!).chain((s) =>
          fc.oneof(
            fc.constant({
              fn: 'resultToInputResponse',
              args: [s.message['method'], s.message['key'], s.message['result']],
              expect: (v: unknown) =>
                [[MODERN, v, `def:${INPUT_RESPONSE_DEFS[s.message['method'] as InputMethod]}`]] as Array<
                  [Revision, unknown, (string | undefined)?]
                >,
            }),
            mutated(s.message['result'], { maxDepth: 64, maxHuge: 70_000 }).map((r) => ({
              fn: 'resultToInputResponse',
              args: [s.message['method'], s.message['key'], r],
            })),
          ),
        ),
        fc.tuple(inputMethod, smallJson).map(([m, r]) => ({ fn: 'resultToInputResponse', args: [m, 'k', r] })),
      ),
    ],
    [
      'inputResponseToResult',
      fc.oneof(
        sample(p['retry']!).map(({ message }) => ({
          fn: 'inputResponseToResult',
          args: ['elicitation/create', 'k', objectOr(objectOr(message['params'])['inputResponses'])['elicitation-1']],
        })),
        fc.tuple(inputMethod, smallJson).map(([m, r]) => ({ fn: 'inputResponseToResult', args: [m, 'k', r] })),
      ),
    ],
    [
      'checkInputCapability',
      fc.tuple(sample(p['push']!), jsonObject).map(([{ message }, caps]) => ({ fn: 'checkInputCapability', args: [message, caps] })),
    ],
    [
      'legacyClientAllows',
      fc
        .tuple(fc.record({ method: inputMethod, params: jsonObject }), jsonObject)
        .map(([input, caps]) => ({ fn: 'legacyClientAllows', args: [input, caps] })),
    ],
    [
      'requiredCapabilities',
      fc
        .record({ method: inputMethod, params: jsonObject }, { requiredKeys: ['method'] })
        .map((input) => ({ fn: 'requiredCapabilities', args: [input] })),
    ],
    [
      'inputKeyOf',
      fc
        .tuple(
          fc.oneof(
            sample(p['push']!).map((x) => x.message),
            anyRequest,
          ),
          fc.nat(),
        )
        .map(([push, n]) => ({ fn: 'inputKeyOf', args: [{ ...push, method: 'roots/list' }, n] })),
    ],
    [
      'urlElicitationToInputRequired',
      fc.oneof(
        sample(p['urlError']!).map(({ message, valid }) => ({
          fn: 'urlElicitationToInputRequired',
          args: [message['error'], { requestState: 's' }],
          ...ok(valid, (v) => [[MODERN, { jsonrpc: '2.0', id: 1, result: (v as { result: unknown }).result }, 'tools/call']]),
        })),
        anyError.map((e) => ({ fn: 'urlElicitationToInputRequired', args: [{ ...e, code: -32042 }] })),
      ),
    ],
    [
      'inputRequiredToUrlElicitation',
      fc.oneof(
        sample(p['inputRequired']!).map(({ message }) => ({
          fn: 'inputRequiredToUrlElicitation',
          args: [objectOr(objectOr(message['result'])['inputRequests']), (key: string) => `id-${key}`],
        })),
        fc
          .dictionary(fc.string({ maxLength: 5 }), fc.record({ method: fc.oneof(inputMethod, fc.string()), params: smallJson }), {
            maxKeys: 3,
            noNullPrototype: true,
          })
          .map((inputs) => ({ fn: 'inputRequiredToUrlElicitation', args: [inputs, (key: string) => key] })),
      ),
    ],
    [
      'retryRequest',
      fc
        .tuple(
          fc.oneof(
            sample(p['modernRequest']!).map((x) => x.message),
            anyRequest,
          ),
          validId,
          fc.dictionary(fc.string({ maxLength: 5 }), jsonObject, { maxKeys: 2, noNullPrototype: true }),
          fc.option(fc.string(), { nil: undefined }),
        )
        .map(([original, id, inputResponses, requestState]) => ({
          fn: 'retryRequest',
          args: [original, requestState === undefined ? { id, inputResponses } : { id, inputResponses, requestState }],
        })),
    ],
    ...(['logToModern', 'logToLegacy', 'progressToModern', 'progressToLegacy', 'cancelToModern', 'cancelToLegacy'] as const).map(
      (fn): [string, fc.Arbitrary<Call>] => {
        const pool = fn.startsWith('log') ? p['log']! : fn.startsWith('progress') ? p['progress']! : p['cancel']!;
        const extra: fc.Arbitrary<unknown>[] =
          fn === 'logToModern'
            ? [pick(core.LOGGING_LEVELS)]
            : fn === 'progressToLegacy'
              ? [pick(core.LEGACY_VERSIONS).map((legacyVersion) => ({ legacyVersion }))]
              : [];
        return [
          fn,
          fc.oneof(
            fc.tuple(sample(pool), ...extra).map(([{ s, message, valid }, ...rest]) => ({
              fn,
              args: [message, ...rest],
              ...ok(valid && fn !== 'cancelToModern', (v) => (v === undefined ? [] : [[fn.endsWith('Modern') ? MODERN : lv(s), v]])),
            })),
            fc.tuple(anyNotification, ...extra).map(([n, ...rest]) => ({ fn, args: [n, ...rest] })),
          ),
        ];
      },
    ),
    [
      'notificationToListen',
      fc
        .tuple(
          fc.oneof(
            sample(p['unsolicited']!).map((x) => x.message),
            anyNotification,
          ),
          validId,
          filter,
        )
        .map(([n, subscriptionId, f]) => ({ fn: 'notificationToListen', args: [n, { subscriptionId, filter: f }] })),
    ],
    [
      'notificationFromListen',
      fc.oneof(
        sample(p['tagged']!).map((x) => ({ fn: 'notificationFromListen', args: [x.message] })),
        anyNotification.map((n) => ({ fn: 'notificationFromListen', args: [n] })),
      ),
    ],
    ['readListenFilter', fc.oneof(jsonObject, smallJson).map((params) => ({ fn: 'readListenFilter', args: [params] }))],
    ['honouredFilter', fc.tuple(filter, jsonObject).map(([f, caps]) => ({ fn: 'honouredFilter', args: [f, caps] }))],
    ['acknowledgement', fc.tuple(validId, filter).map(([id, f]) => ({ fn: 'acknowledgement', args: [id, f] }))],
    [
      'listenResult',
      fc
        .tuple(validId, fc.option(implementation, { nil: undefined }))
        .map(([id, info]) => ({ fn: 'listenResult', args: [id, info ? { serverInfo: info } : {}] })),
    ],
    ['filterAccepts', fc.tuple(anyNotification, filter).map(([n, f]) => ({ fn: 'filterAccepts', args: [n, f] }))],
    [
      'legacySubscriptionsToFilter',
      fc
        .tuple(fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), jsonObject)
        .map(([uris, caps]) => ({ fn: 'legacySubscriptionsToFilter', args: [uris, caps] })),
    ],
    [
      'filterToLegacySubscriptions',
      fc.tuple(filter, jsonObject).map(([f, caps]) => ({ fn: 'filterToLegacySubscriptions', args: [f, caps] })),
    ],
    [
      'uriMatches',
      fc
        .tuple(fc.string({ maxLength: 10 }), fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }))
        .map(([uri, list]) => ({ fn: 'uriMatches', args: [uri, list] })),
    ],
    [
      'computeHeaders',
      fc
        .tuple(
          fc.oneof(
            sample(p['modernRequest']!).map((x) => x.message),
            anyRequest,
          ),
          fc.option(smallJson, { nil: undefined }),
        )
        .map(([r, schema]) => ({ fn: 'computeHeaders', args: [r, schema === undefined ? {} : { tool: { inputSchema: schema } }] })),
    ],
    [
      'verifyHeaders',
      fc
        .tuple(
          fc.oneof(
            sample(p['modernRequest']!).map((x) => x.message),
            anyRequest,
          ),
          headerLookup,
          fc.option(smallJson, { nil: undefined }),
        )
        .map(([r, h, schema]) => ({
          fn: 'verifyHeaders',
          args: [
            r,
            (name: string) => Object.entries(h).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1] ?? null,
            schema === undefined ? {} : { tool: { inputSchema: schema } },
          ],
        })),
    ],
    [
      'verifyParamHeaders',
      fc
        .tuple(
          fc.oneof(
            sample(p['modernRequest']!).map((x) => x.message),
            anyRequest,
          ),
          headerLookup,
          smallJson,
        )
        .map(([r, h, schema]) => ({
          fn: 'verifyParamHeaders',
          args: [
            r,
            (name: string) => Object.entries(h).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1] ?? null,
            { inputSchema: schema },
          ],
        })),
    ],
    [
      'paramHeaders',
      fc
        .oneof(
          smallJson,
          fc.record({
            type: fc.constant('object'),
            properties: fc.dictionary(
              fc.string({ maxLength: 5 }),
              fc.record({
                type: fc.oneof(pick(['string', 'integer', 'boolean', 'number', 'object']), smallJson),
                'x-mcp-header': fc.oneof(fc.string({ maxLength: 6 }), smallJson),
              }),
              { maxKeys: 3, noNullPrototype: true },
            ),
          }),
        )
        .map((schema) => ({ fn: 'paramHeaders', args: [schema] })),
    ],
    [
      'encodeHeaderValue',
      fc
        .oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.integer(), fc.boolean())
        .map((value) => ({ fn: 'encodeHeaderValue', args: [value] })),
    ],
    [
      'decodeHeaderValue',
      fc
        .oneof(
          fc.string({ maxLength: 30 }),
          fc.string({ maxLength: 20 }).map((s) => `=?base64?${s}?=`),
        )
        .map((raw) => ({ fn: 'decodeHeaderValue', args: [raw] })),
    ],
    [
      'splitBatch',
      fc
        .oneof(
          sample(p['batch']!).map((x) => x.message as unknown),
          fc.array(smallJson, { maxLength: 4 }),
        )
        .map((items) => ({ fn: 'splitBatch', args: [Array.isArray(items) ? items : [items]] })),
    ],
    [
      'createTaskResultToModern',
      fc.oneof(
        sample(p['legacyTask']!).map(({ s, message, valid }) => ({
          fn: 'createTaskResultToModern',
          args: [objectOr(message['result']), { serverInfo: serverInfo(s) }],
          ...ok(valid, (v) => [[MODERN, { jsonrpc: '2.0', id: 1, result: v }, 'tools/call']]),
        })),
        jsonObject.map((r) => ({ fn: 'createTaskResultToModern', args: [r] })),
      ),
    ],
    [
      'createTaskResultToLegacy',
      fc.oneof(
        sample(p['modernTask']!).map(({ s, message, valid }) => ({
          fn: 'createTaskResultToLegacy',
          args: [objectOr(message['result'])],
          ...ok(valid, (v) => [[lv(s), { jsonrpc: '2.0', id: 1, result: v }, 'tools/call']]),
        })),
        jsonObject.map((r) => ({ fn: 'createTaskResultToLegacy', args: [{ ...r, resultType: 'task' }] })),
      ),
    ],
    ...(
      [
        'taskToModern',
        'taskToLegacy',
        'readLegacyTask',
        'toolToModern',
        'clientCapabilitiesToModern',
        'clientCapabilitiesToLegacy',
        'serverCapabilitiesToModern',
        'serverCapabilitiesToLegacy',
        'runsToolTasks',
        'sessionFromInitialize',
      ] as const
    ).map((fn): [string, fc.Arbitrary<Call>] => [
      fn,
      jsonObject.map((o) => ({
        fn,
        args: fn === 'sessionFromInitialize' ? [{ clientInfo: { name: 'c', version: '1' }, capabilities: o }] : [o],
      })),
    ]),
    ...(['detailedTaskToLegacy', 'detailedTaskPayload'] as const).map((fn): [string, fc.Arbitrary<Call>] => [
      fn,
      fc
        .oneof(
          jsonObject,
          jsonObject.map((o) => ({ ...o, taskId: 't', status: 'completed', createdAt: '2026-01-01T00:00:00Z', result: o })),
          jsonObject.map((o) => ({ ...o, taskId: 't', status: 'failed', error: o })),
        )
        .map((o) => ({ fn, args: [o] })),
    ]),
    ['isTerminalStatus', fc.string({ maxLength: 20 }).map((status) => ({ fn: 'isTerminalStatus', args: [status] }))],
    ['relatedTaskMeta', fc.string({ maxLength: 40 }).map((id) => ({ fn: 'relatedTaskMeta', args: [id] }))],
    [
      'withRelatedTask',
      fc.tuple(jsonObject, fc.string({ maxLength: 40 })).map(([result, id]) => ({ fn: 'withRelatedTask', args: [result, id] })),
    ],
    [
      'declareTasksExtension',
      fc.tuple(fc.option(jsonObject, { nil: undefined }), fc.boolean()).map(([params, on]) => ({
        fn: 'declareTasksExtension',
        args: [{ jsonrpc: '2.0', id: 1, method: 'tools/call', ...(params ? { params } : {}) }, on],
      })),
    ],
    [
      'envelopeToInitializeParams',
      fc.tuple(jsonObject, fc.option(implementation, { nil: undefined })).map(([caps, info]) => ({
        fn: 'envelopeToInitializeParams',
        args: [info ? { clientCapabilities: caps, clientInfo: info } : { clientCapabilities: caps }],
      })),
    ],
    [
      'sessionMeta',
      fc.tuple(session, fc.option(jsonObject, { nil: undefined })).map(([se, own]) => ({ fn: 'sessionMeta', args: [se, own] })),
    ],
    [
      'stampServerInfo',
      fc
        .tuple(smallJson, fc.option(implementation, { nil: undefined }))
        .map(([meta, info]) => ({ fn: 'stampServerInfo', args: [meta, info] })),
    ],
    [
      'eraOfDiscoverAnswer',
      fc
        .tuple(
          fc.oneof(
            fc
              .tuple(smallJson, fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }))
              .map(([result, status]) => ({ kind: 'result', result, ...(status === undefined ? {} : { status }) })),
            fc
              .tuple(anyError, fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }))
              .map(([error, status]) => ({ kind: 'error', error, ...(status === undefined ? {} : { status }) })),
            fc.integer({ min: 100, max: 599 }).map((status) => ({ kind: 'status', status })),
            fc.tuple(fc.boolean(), fc.nat()).map(([spoken, ms]) => ({ kind: 'silence', spoken, ms })),
            fc.constant({ kind: 'exit' }),
          ),
          fc.boolean(),
        )
        .map(([answer, retried]) => ({ fn: 'eraOfDiscoverAnswer', args: [answer, { sent: '2026-07-28', retried }] })),
    ],
    [
      'refusalToInitializeError',
      fc
        .oneof(
          anyError.map((error) => ({ error })),
          fc.record({ status: fc.integer({ min: 100, max: 599 }), detail: fc.string({ maxLength: 10 }) }),
        )
        .map((refusal) => ({ fn: 'refusalToInitializeError', args: [refusal] })),
    ],
    [
      'unanswerableInputs',
      fc
        .tuple(
          fc.dictionary(fc.string({ maxLength: 5 }), fc.record({ method: inputMethod, params: jsonObject }), {
            maxKeys: 3,
            noNullPrototype: true,
          }),
          jsonObject,
        )
        .map(([inputs, caps]) => ({ fn: 'unanswerableInputs', args: [inputs, caps] })),
    ],
    ['inputFailure', fc.tuple(anyMethod, fc.string({ maxLength: 10 })).map(([m, why]) => ({ fn: 'inputFailure', args: [m, why] }))],
    ['upstreamErrorToLegacy', fc.tuple(anyMethod, anyError).map(([m, e]) => ({ fn: 'upstreamErrorToLegacy', args: [m, e] }))],
    [
      'parseMessage',
      fc
        .oneof(
          fc.string({ maxLength: 40 }),
          fc.jsonValue().map((j) => JSON.stringify(j)),
          fc.constantFrom(1, 64, 65, 10_000, 200_000).map((n) => '['.repeat(n) + ']'.repeat(n)),
        )
        .map((text) => ({ fn: 'parseMessage', args: [text] })),
    ],
    ...(['classify', 'claimedEra', 'classifyVersion', 'isRequestId'] as const).map((fn): [string, fc.Arbitrary<Call>] => [
      fn,
      fc.oneof(smallJson, anyRequest, anyNotification).map((value) => ({ fn, args: [value] })),
    ]),
    [
      'nestingDepth',
      fc
        .tuple(fc.constantFrom(0, 1, 65, 10_000, 100_000), fc.boolean())
        .map(([depth, objects]) => ({ fn: 'nestingDepth', args: [awkwardNested(depth, objects), 64] })),
    ],
    ['negotiateLegacyVersion', smallJson.map((v) => ({ fn: 'negotiateLegacyVersion', args: [v] }))],
    ['pickModernVersion', fc.array(smallJson, { maxLength: 3 }).map((list) => ({ fn: 'pickModernVersion', args: [list] }))],
    ['httpStatusForError', anyError.map((e) => ({ fn: 'httpStatusForError', args: [e] }))],
    [
      'cachePolicyFor',
      fc
        .tuple(
          pick(['server/discover', 'tools/list', 'resources/read'] as const),
          fc.option(
            fc.dictionary(
              fc.string({ maxLength: 12 }),
              fc.record({ ttlMs: fc.integer(), cacheScope: pick(['public', 'private'] as const) }),
              { maxKeys: 2, noNullPrototype: true },
            ),
            { nil: undefined },
          ),
        )
        .map(([m, d]) => ({ fn: 'cachePolicyFor', args: [m, d] })),
    ],
    ['defaultInputKey', fc.tuple(inputMethod, fc.integer()).map(([m, n]) => ({ fn: 'defaultInputKey', args: [m, n] }))],
    [
      'logAllowed',
      fc.tuple(level, fc.option(level, { nil: undefined })).map(([l, threshold]) => ({ fn: 'logAllowed', args: [l, threshold] })),
    ],
    ['isLegacyOnlyNotification', anyMethod.map((m) => ({ fn: 'isLegacyOnlyNotification', args: [m] }))],
    [
      'assembleBatch',
      fc.tuple(fc.array(smallJson, { maxLength: 4 }), fc.array(fc.tuple(validId, smallJson), { maxLength: 4 })).map(([items, answers]) => ({
        fn: 'assembleBatch',
        args: [core.splitBatch(items), new Map(answers.map(([id, result]) => [id, { jsonrpc: '2.0', id, result: { value: result } }]))],
      })),
    ],
    ['errorResponse', fc.tuple(fc.option(validId, { nil: null }), anyError).map(([id, e]) => ({ fn: 'errorResponse', args: [id, e] }))],
  ];
  return t;
}

function awkwardNested(depth: number, objects: boolean): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = objects ? { a: v } : [v];
  return v;
}

/** Calls one entry point; the failure, if any. */
function judge(call: Call): string | undefined {
  const fn = (ENTRY_POINTS as unknown as Record<string, (...args: unknown[]) => unknown>)[call.fn];
  if (typeof fn !== 'function') return `${call.fn} is not exported from lib/core`;
  // A value nested deeper than any decoder lets through is only given to the functions that bound nesting.
  const raw = call.fn === 'nestingDepth';
  const args = call.args.map((a) => (typeof a === 'function' || raw ? a : deepFreeze(clone(a))));
  const before = raw ? '' : JSON.stringify(args);
  let out: unknown;
  try {
    out = fn(...args);
  } catch (e) {
    if (e instanceof AdapterError) return undefined;
    // retryRequest refuses an id that is neither a string nor an integer: a programmer error it documents.
    if (call.fn === 'retryRequest' && e instanceof TypeError && e.message.startsWith('retryRequest:')) return undefined;
    return `${call.fn} threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
  }
  if (!raw && JSON.stringify(args) !== before) return `${call.fn} changed its input`;
  // `undefined` is a value some functions return (no answer, nothing to send), on its own or as an outcome's value.
  const outcome = out as { ok?: unknown; value?: unknown } | undefined;
  const shown = outcome !== null && typeof outcome === 'object' && outcome.ok === true && outcome.value === undefined ? undefined : out;
  const problem = shown === undefined ? undefined : jsonProblem(shown);
  if (problem) return `${call.fn} returned something that is not JSON: ${problem}`;
  if (call.expect) {
    const problems = schemaProblems(out, call.expect);
    if (problems.length > 0) return `${call.fn} (valid input): ${problems.slice(0, 3).join('; ')}`;
  }
  return undefined;
}

/** The translator's exported functions (every module of `lib/core/translate/`), for the coverage check. */
export function translatorFunctions(): string[] {
  return Object.entries(translate)
    .filter(([, v]) => typeof v === 'function')
    .map(([k]) => k)
    .sort();
}

let pools: Pools | undefined;

/** The translator entry points this target calls. */
export function translatorTargets(): string[] {
  pools ??= loadPools();
  return targets(pools).map(([name]) => name);
}

/** Runs the translator property `options.runs` times; returns the cases run. */
export async function fuzzTranslators(options: RunOptions): Promise<number> {
  pools ??= loadPools();
  const all = targets(pools);
  const call = fc.oneof(...all.map(([, arb]) => arb));
  const property = fc.property(call, (c) => {
    const failure = judge(c);
    if (failure) throw new Error(failure);
  });
  return checkProperty('translators', property, options);
}
