/**
 * Server-initiated requests ⇄ MRTR (translation table rows 15, 17, 18, 31): a legacy push
 * (`elicitation/create`, `sampling/createMessage`, `roots/list`) ⇄ a bare `inputRequests` entry, the
 * `input_required` result, input responses ⇄ the results owed upstream, capability gating (`-32021`),
 * and `-32042` URL elicitation ⇄ URL-mode entries. Parking calls and minting `requestState` is not
 * here: the state layer does that and hands the sealed string in.
 */
import * as v from 'valibot';
import { ErrorCode, invalidParams, missingCapability, type WireError } from '../errors.ts';
import { describe, isRequestId, type JsonRpcRequest, type RequestId } from '../jsonrpc.ts';
import { LEGACY_INPUT_METHODS, UrlElicitationRequiredDataSchema, isInputMethod, type InputMethod } from '../legacy/inputs.ts';
import type { LegacyClientCapabilities } from '../legacy/capabilities.ts';
import type { ModernClientCapabilities } from '../modern/capabilities.ts';
import {
  INPUT_RESPONSE_SCHEMAS,
  InputRequestSchema,
  InputRequiredResultSchema,
  type InputRequest,
  type InputRequests,
} from '../modern/inputs.ts';
import { isRecord, omitKeys, setMember, type Implementation, type JsonObject } from '../primitives.ts';
import { fail, ok, type Outcome } from '../outcome.ts';
import { stampServerInfo } from './meta.ts';

/**
 * The reserved `_meta` key through which a legacy server names the input key of a pushed request
 * (e.g. `"user_name"`); without it keys are `elicitation-1`, `sampling-2`, … in push order.
 */
export const INPUT_KEY_META = 'mcp-dual-era/inputKey';

const SHORT: Record<InputMethod, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** The deterministic key of the `ordinal`-th push (1-based) of a call. */
export function defaultInputKey(method: InputMethod, ordinal: number): string {
  return `${SHORT[method]}-${ordinal}`;
}

/** The key a push goes under: the server's own choice through `_meta`, else the default. */
export function inputKeyOf(push: Pick<JsonRpcRequest, 'method' | 'params'>, ordinal: number): string {
  const meta = isRecord(push.params) && isRecord(push.params['_meta']) ? push.params['_meta'] : undefined;
  const chosen = meta?.[INPUT_KEY_META];
  if (typeof chosen === 'string' && chosen.length > 0) return chosen;
  return defaultInputKey(push.method as InputMethod, ordinal);
}

/**
 * A legacy server→client request → a bare input request: no id, no `jsonrpc`, and `_meta`, `task`
 * and `elicitationId` stripped from params.
 */
export function pushToInputRequest(push: Pick<JsonRpcRequest, 'method' | 'params'>): Outcome<InputRequest> {
  const method = push.method;
  if (!isInputMethod(method)) return fail(invalidParams(`${method} cannot be carried by an input_required result`));
  const parsed = v.safeParse(LEGACY_INPUT_METHODS[method].params, push.params);
  if (!parsed.success) return fail(invalidParams(`${method}: ${describe(parsed.issues)}`));
  const params = isRecord(push.params) ? omitKeys(push.params, ['_meta', 'task', 'elicitationId']) : {};
  if (method === 'roots/list')
    return ok(Object.keys(params).length > 0 ? ({ method, params } as InputRequest) : ({ method } as InputRequest));
  return ok({ method, params } as InputRequest);
}

/**
 * A bare input request → the legacy server→client request an adapter sends to a legacy client:
 * a fresh `id`, the key recorded in `_meta`, and for URL mode the `elicitationId` legacy requires.
 */
export function inputRequestToPush(
  key: string,
  input: InputRequest,
  options: { id: RequestId; elicitationId?: string },
): Outcome<JsonRpcRequest> {
  const parsed = v.safeParse(InputRequestSchema, input);
  if (!parsed.success) return fail(invalidParams(`inputRequests.${key}: ${describe(parsed.issues)}`));
  const params: JsonObject = { ...(isRecord(input.params) ? omitKeys(input.params, ['_meta']) : {}), _meta: { [INPUT_KEY_META]: key } };
  if (input.method === 'elicitation/create' && params['mode'] === 'url') {
    if (!options.elicitationId)
      return fail(invalidParams(`inputRequests.${key}: URL-mode elicitation needs an elicitationId for a legacy client`));
    params['elicitationId'] = options.elicitationId;
  }
  return ok({ jsonrpc: '2.0', id: options.id, method: input.method, params });
}

/** One push of a round, with the key it goes under. */
export interface KeyedPush {
  readonly key: string;
  readonly request: Pick<JsonRpcRequest, 'method' | 'params'>;
}

/**
 * The `input_required` result for the pushes pending in one round. `requestState` is the sealed
 * state minted by the caller; server info is stamped when given.
 */
export function inputRequiredResult(
  pushes: readonly KeyedPush[],
  options: { requestState?: string; serverInfo?: Implementation } = {},
): Outcome<JsonObject> {
  const inputRequests: InputRequests = {};
  for (const { key, request } of pushes) {
    if (Object.hasOwn(inputRequests, key)) return fail(invalidParams(`input key ${key} is used twice in one round`));
    const entry = pushToInputRequest(request);
    if (!entry.ok) return entry;
    setMember(inputRequests, key, entry.value);
  }
  const result: JsonObject = { resultType: 'input_required' };
  if (pushes.length > 0) result['inputRequests'] = inputRequests;
  if (options.requestState !== undefined) result['requestState'] = options.requestState;
  if (!('inputRequests' in result) && !('requestState' in result))
    return fail(invalidParams('input_required needs inputRequests or requestState'));
  const meta = stampServerInfo(undefined, options.serverInfo);
  if (meta) result['_meta'] = meta;
  return ok(result);
}

/** Reads an `input_required` result from a modern server; bad shapes fail with `-32603`-free `-32602`. */
export function readInputRequired(result: JsonObject): Outcome<{ inputRequests: InputRequests; requestState?: string }> {
  const parsed = v.safeParse(InputRequiredResultSchema, result);
  if (!parsed.success) return fail(invalidParams(`input_required result: ${describe(parsed.issues)}`));
  const inputRequests = (isRecord(result['inputRequests']) ? result['inputRequests'] : {}) as InputRequests;
  return ok(typeof result['requestState'] === 'string' ? { inputRequests, requestState: result['requestState'] } : { inputRequests });
}

/**
 * A modern input response → the result owed to the upstream push. The shape is checked for the
 * push's method (`-32602` naming the key); `resultType` is dropped if a client added one.
 */
export function inputResponseToResult(method: InputMethod, key: string, response: unknown): Outcome<JsonObject> {
  const parsed = v.safeParse(INPUT_RESPONSE_SCHEMAS[method], response);
  if (!parsed.success) return fail(invalidParams(`inputResponses.${key}: not a valid ${method} result (${describe(parsed.issues)})`));
  return ok(omitKeys(response as JsonObject, ['resultType']));
}

/** A legacy client's result for a push → the modern input response (its `_meta` stripped). */
export function resultToInputResponse(method: InputMethod, key: string, result: unknown): Outcome<JsonObject> {
  const parsed = v.safeParse(LEGACY_INPUT_METHODS[method].result, result);
  if (!parsed.success) return fail(invalidParams(`result for ${key}: not a valid ${method} result (${describe(parsed.issues)})`));
  return ok(omitKeys(result as JsonObject, ['_meta']));
}

/** The modern client capabilities an input request needs (mode, sampling tools and context included). */
export function requiredCapabilities(input: Pick<InputRequest, 'method' | 'params'>): ModernClientCapabilities {
  const params = isRecord(input.params) ? input.params : {};
  switch (input.method) {
    case 'elicitation/create':
      return { elicitation: params['mode'] === 'url' ? { url: {} } : { form: {} } };
    case 'sampling/createMessage': {
      const sampling: JsonObject = {};
      if (params['tools'] !== undefined || params['toolChoice'] !== undefined) sampling['tools'] = {};
      if (params['includeContext'] !== undefined && params['includeContext'] !== 'none') sampling['context'] = {};
      return { sampling };
    }
    default:
      return { roots: {} };
  }
}

function declares(caps: JsonObject, required: ModernClientCapabilities): boolean {
  for (const [name, need] of Object.entries(required)) {
    const have = caps[name];
    if (!isRecord(have)) return false;
    if (name === 'elicitation') {
      // `elicitation: {}` declares form mode only (2025-06-18 compatibility).
      const wantsUrl = isRecord(need) && 'url' in need;
      if (wantsUrl && !isRecord(have['url'])) return false;
      if (!wantsUrl && Object.keys(have).length > 0 && !isRecord(have['form'])) return false;
      continue;
    }
    if (isRecord(need)) for (const sub of Object.keys(need)) if (!isRecord(have[sub])) return false;
  }
  return true;
}

/**
 * Checks that this request's client capabilities allow an input request; otherwise `-32021`
 * with `requiredCapabilities`.
 */
export function checkInputCapability(
  input: Pick<InputRequest, 'method' | 'params'>,
  caps: ModernClientCapabilities | JsonObject,
): Outcome<void> {
  const required = requiredCapabilities(input);
  if (declares(caps, required)) return ok(undefined);
  return fail(missingCapability(required as JsonObject, missingCapabilityText(input.method, required)));
}

/**
 * Why a call cannot go on, in words a person reading the host's log understands: what the server
 * asked the client to do, and the capability it did not declare (the exact need is in `data`).
 */
function missingCapabilityText(method: string, required: ModernClientCapabilities): string {
  const need = required as Record<string, unknown>;
  const parts = (name: string) => Object.keys(isRecord(need[name]) ? (need[name] as JsonObject) : {});
  let asked: string;
  let declared: string;
  switch (method) {
    case 'sampling/createMessage': {
      const extra = parts('sampling');
      asked = `write a reply with its language model${extra.includes('tools') ? ', with tools' : ''}${extra.includes('context') ? ', with context from its other servers' : ''}`;
      declared = ['sampling', ...extra.map((e) => `sampling.${e}`)].join(' and ');
      break;
    }
    case 'elicitation/create': {
      const url = parts('elicitation').includes('url');
      asked = url ? 'send the user to a web page' : 'ask the user to fill in a form';
      declared = url ? 'elicitation.url' : 'elicitation';
      break;
    }
    default:
      asked = 'list its roots (the folders or files it lets servers work on)';
      declared = 'roots';
  }
  return `The client cannot do what this call needs: the server asked it to ${asked} (${method}), and the client did not declare the ${declared} capability`;
}

/** True when a legacy client declared what an input request needs (checked before pushing to it). */
export function legacyClientAllows(input: Pick<InputRequest, 'method' | 'params'>, caps: LegacyClientCapabilities | JsonObject): boolean {
  return declares(caps, requiredCapabilities(input));
}

/**
 * `-32042 URLElicitationRequired` from a legacy server → an `input_required` result with URL-mode
 * entries (no `elicitationId`); the ids are returned so the adapter can keep them in its state.
 */
export function urlElicitationToInputRequired(
  error: WireError,
  options: { requestState?: string; serverInfo?: Implementation; firstOrdinal?: number } = {},
): Outcome<{ result: JsonObject; elicitationIds: Record<string, string> }> {
  if (error.code !== ErrorCode.UrlElicitationRequired) return fail(invalidParams(`expected -32042, got ${error.code}`));
  const parsed = v.safeParse(UrlElicitationRequiredDataSchema, error.data);
  if (!parsed.success) return fail(invalidParams(`-32042 data: ${describe(parsed.issues)}`));
  const elicitationIds: Record<string, string> = {};
  const pushes: KeyedPush[] = parsed.output.elicitations.map((params, i) => {
    const key = inputKeyOf({ method: 'elicitation/create', params }, (options.firstOrdinal ?? 1) + i);
    setMember(elicitationIds, key, params.elicitationId);
    return { key, request: { method: 'elicitation/create', params } };
  });
  const result = inputRequiredResult(pushes, options);
  return result.ok ? ok({ result: result.value, elicitationIds }) : result;
}

/**
 * An `input_required` result holding only URL-mode elicitations → the `-32042` error a 2025-11-25
 * client understands, each entry with the `elicitationId` the caller assigns.
 */
export function inputRequiredToUrlElicitation(
  inputRequests: InputRequests,
  elicitationIdFor: (key: string) => string,
  message = 'URL elicitation required',
): Outcome<WireError> {
  const elicitations: JsonObject[] = [];
  for (const [key, input] of Object.entries(inputRequests)) {
    if (!isRecord(input) || input.method !== 'elicitation/create' || !isRecord(input.params) || input.params['mode'] !== 'url') {
      return fail(invalidParams(`inputRequests.${key} is not a URL-mode elicitation`));
    }
    elicitations.push({ ...input.params, elicitationId: elicitationIdFor(key) });
  }
  return ok({ code: ErrorCode.UrlElicitationRequired, message, data: { elicitations } });
}

/**
 * The retry of a modern MRTR request: a new id, the original params with `inputResponses` and the
 * `requestState` echoed byte for byte (omitted when the server sent none).
 */
export function retryRequest(
  original: JsonRpcRequest,
  options: { id: RequestId; inputResponses: Record<string, JsonObject>; requestState?: string },
): JsonRpcRequest {
  if (!isRequestId(options.id)) throw new TypeError('retryRequest: id must be a string or an integer');
  const params: JsonObject = omitKeys(isRecord(original.params) ? original.params : {}, ['inputResponses', 'requestState']);
  params['inputResponses'] = options.inputResponses;
  if (options.requestState !== undefined) params['requestState'] = options.requestState;
  return { jsonrpc: '2.0', id: options.id, method: original.method, params };
}

/** The keys of input requests a legacy client did not declare the capability for. */
export function unanswerableInputs(inputRequests: InputRequests, capabilities: LegacyClientCapabilities | JsonObject): string[] {
  return Object.entries(inputRequests)
    .filter(([, input]) => !legacyClientAllows(input, capabilities))
    .map(([key]) => key);
}

/**
 * How a call ends when an input round cannot complete: `tools/call` gets an `isError` result a
 * model can read; other methods a JSON-RPC error.
 */
export function inputFailure(method: string, reason: string): { result: JsonObject } | { error: WireError } {
  if (method === 'tools/call') return { result: { content: [{ type: 'text', text: reason }], isError: true } };
  return { error: { code: ErrorCode.InternalError, message: reason } };
}
