/**
 * What a POST (or any request) to the Streamable HTTP front must get, worked out from the request
 * alone by the rules of the spec digest (§4, §5): the status, the JSON-RPC code, the id echoed,
 * and whether the body is JSON, an event stream or nothing. Written from the rules, not from the
 * front's code, so that the two can disagree. Where the answer depends on the legacy server behind
 * (an ordinary call), the oracle says which outcomes are allowed.
 */
import type { Json } from './arbitraries.ts';

export type Id = string | number;

/** What one HTTP request must be answered with. */
export type Expected =
  /** No body at all (202 for a notification, 405 for GET/DELETE). */
  | { readonly kind: 'empty'; readonly status: readonly number[] }
  /** A JSON body holding one JSON-RPC error (`id` absent when it could not be read); `or`: another status equally right. */
  | { readonly kind: 'error'; readonly status: number; readonly code: number; readonly id: Id | undefined; readonly or?: number }
  /** The legacy server answers (through the translator): a result, or an allowed error; as JSON or as an event stream. */
  | {
      readonly kind: 'answer';
      readonly id: Id;
      readonly stream: boolean;
      readonly method: string;
      readonly refusal?: { readonly status: number; readonly code: number };
    }
  /** A `subscriptions/listen` stream: its acknowledgement first. */
  | { readonly kind: 'listen'; readonly id: Id }
  /** An `initialize` without modern `_meta`: a legacy session (the SDK's own transport answers). */
  | { readonly kind: 'legacy-open'; readonly id: Id };

const PV = 'io.modelcontextprotocol/protocolVersion';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const INFO = 'io.modelcontextprotocol/clientInfo';
const LEVEL = 'io.modelcontextprotocol/logLevel';
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const NAME_PARAM: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};
/** Removed in 2026-07-28, or with no form a legacy server could serve: -32601, HTTP 404. */
const REFUSED_METHODS = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'tasks/result',
  'tasks/list',
  'tasks/update',
]);
const MRTR = new Set(['tools/call', 'prompts/get', 'resources/read']);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is Id => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
const optionalObject = (o: Json, key: string) => !Object.hasOwn(o, key) || isObject(o[key]);
const optionalString = (o: Json, key: string) => !Object.hasOwn(o, key) || typeof o[key] === 'string';
/** Keys a schema library ignores in a record (`__proto__`, `prototype`, `constructor`): they carry no meaning. */
const IGNORED_KEYS = new Set(['__proto__', 'prototype', 'constructor']);
const everyMemberObject = (v: unknown) => isObject(v) && Object.keys(v).every((k) => IGNORED_KEYS.has(k) || isObject(v[k]));

/** Client capabilities as the 2026-07-28 schema shapes them (members that are present must be objects of objects). */
function capabilitiesValid(caps: unknown): boolean {
  if (!isObject(caps)) return false;
  if (Object.hasOwn(caps, 'experimental') && !everyMemberObject(caps['experimental'])) return false;
  if (Object.hasOwn(caps, 'extensions') && !everyMemberObject(caps['extensions'])) return false;
  if (!optionalObject(caps, 'roots')) return false;
  for (const [key, inner] of [
    ['sampling', ['context', 'tools']],
    ['elicitation', ['form', 'url']],
  ] as const) {
    if (!Object.hasOwn(caps, key)) continue;
    const member = caps[key];
    if (!isObject(member) || !inner.every((k) => optionalObject(member, k))) return false;
  }
  return true;
}

function implementationValid(info: unknown): boolean {
  if (!isObject(info) || typeof info['name'] !== 'string' || typeof info['version'] !== 'string') return false;
  if (!['title', 'description', 'websiteUrl'].every((k) => optionalString(info, k))) return false;
  const icons = info['icons'];
  return !Object.hasOwn(info, 'icons') || (Array.isArray(icons) && icons.every((i) => isObject(i) && typeof i['src'] === 'string'));
}

function listenFilterValid(params: Json): boolean {
  const filter = params['notifications'];
  if (!isObject(filter) || !isObject(params['_meta'])) return false;
  for (const k of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'])
    if (Object.hasOwn(filter, k) && typeof filter[k] !== 'boolean') return false;
  for (const k of ['resourceSubscriptions', 'taskIds']) {
    if (!Object.hasOwn(filter, k)) continue;
    const list = filter[k];
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) return false;
  }
  return true;
}

/** Undoes the `=?base64?…?=` sentinel (strict padded base64, UTF-8); plain values must be visible ASCII. */
function headerText(raw: string): string | undefined {
  if (raw.startsWith('=?base64?') && raw.endsWith('?=') && raw.length >= 11) {
    const b64 = raw.slice(9, -2);
    if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(b64)) return undefined;
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(b64, 'base64'));
    } catch {
      return undefined;
    }
  }
  for (const ch of raw) {
    const c = ch.charCodeAt(0);
    if (c !== 9 && (c < 0x20 || c > 0x7e)) return undefined;
  }
  return raw;
}

/** True when a decoded value nests deeper than `limit` (iterative: any depth). */
/** A JSON string token or a number token of a text, in order (a number is never read inside a string). */
const TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** Whether a JSON number written as `text` is an integer, judged exactly on its digits (`1.50e2` is, `5e-1541` is not). */
function writtenInteger(text: string): boolean {
  const [, whole = '', fraction = '', exponent = '0'] = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text) ?? [];
  const digits = (whole + fraction).replace(/^0+/, '');
  if (/^0*$/.test(digits)) return true;
  const shift = Number(exponent) - fraction.length;
  return shift >= 0 || digits.length - digits.replace(/0+$/, '').length >= -shift;
}

/**
 * `text` decoded as JSON, with a message's `id` that its text writes as a fraction (`0.5`,
 * `6.8e-1541`, which a double rounds to 0) read as no integer: MCP ids are integers as written,
 * whatever a double makes of them. Throws as `JSON.parse` does.
 */
export function decodeAsWritten(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!isObject(value) || typeof value['id'] !== 'number') return value;
  const numbers: string[] = [];
  const marked = text.replace(TOKEN, (token) => (token.startsWith('"') ? token : `"#${numbers.push(token) - 1}"`));
  const id = (JSON.parse(marked) as Json)['id'];
  const written = typeof id === 'string' ? numbers[Number(id.slice(1))] : undefined;
  return written !== undefined && !writtenInteger(written) ? { ...value, id: Number.NaN } : value;
}

export function deeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

function hostAllowed(host: string): boolean {
  const name = host.startsWith('[')
    ? host.slice(0, host.indexOf(']') + 1)
    : (host.lastIndexOf(':') === -1 ? host : host.slice(0, host.lastIndexOf(':'))).toLowerCase();
  return LOOPBACK.has(name);
}

function originAllowed(origin: string): boolean {
  try {
    const name = new URL(origin).hostname;
    return LOOPBACK.has(name) || LOOPBACK.has(`[${name}]`);
  } catch {
    return false;
  }
}

export interface HttpInput {
  readonly method: string;
  readonly path: string;
  /** Header lookup with the values as the server reads them. */
  readonly header: (name: string) => string | null;
  readonly body: string;
  readonly maxBodyBytes: number;
}

const invalid = (id: Id | undefined): Expected => ({ kind: 'error', status: 400, code: -32600, id });

/** The answer the front owes `input`. */
export function expectHttp(input: HttpInput): Expected {
  const header = input.header;
  if (input.path !== '/mcp') return { kind: 'error', status: 404, code: -32601, id: undefined };
  const origin = header('origin');
  if ((origin !== null && !originAllowed(origin)) || (header('host') !== null && !hostAllowed(header('host')!)))
    return { kind: 'error', status: 403, code: -32600, id: undefined };
  const session = header('mcp-session-id');
  // A session named (held or not) is looked up, and one not held is 404; none named is 405.
  if (input.method === 'GET' || input.method === 'DELETE')
    return session ? { kind: 'empty', status: [404] } : { kind: 'empty', status: [405] };
  if (input.method !== 'POST') return { kind: 'empty', status: [405] };
  const tooLarge = Buffer.byteLength(input.body) > input.maxBodyBytes;
  // Both wrong: which is found first depends on whether the length was declared (then the size is known at once).
  if (!(header('content-type') ?? '').toLowerCase().includes('application/json'))
    return { kind: 'error', status: 415, code: -32600, id: undefined, ...(tooLarge ? { or: 413 } : {}) };
  if (tooLarge) return { kind: 'error', status: 413, code: -32600, id: undefined };
  let value: unknown;
  try {
    // UTF-8 decoding of a body skips a byte order mark (RFC 8259 lets a parser ignore it).
    value = decodeAsWritten(input.body.startsWith('\ufeff') ? input.body.slice(1) : input.body);
  } catch {
    return { kind: 'error', status: 400, code: -32700, id: undefined };
  }
  if (deeperThan(value, 64)) return { kind: 'error', status: 400, code: -32700, id: undefined };
  return expectMessage(value, { header, session });
}

/** What a decoded JSON value is, as far as the oracle cares. */
export type Shape =
  | { readonly kind: 'broken'; readonly id: Id | undefined }
  | { readonly kind: 'batch' | 'response' }
  | { readonly kind: 'notification'; readonly method: string }
  | { readonly kind: 'request'; readonly id: Id; readonly method: string };

/** Sorts a decoded value by the JSON-RPC 2.0 envelope rules (a broken one yields -32600, with the id when it can be read). */
export function shapeOf(value: unknown): Shape {
  if (Array.isArray(value)) return value.length > 0 ? { kind: 'batch' } : { kind: 'broken', id: undefined };
  if (!isObject(value)) return { kind: 'broken', id: undefined };
  const readId = isId(value['id']) ? value['id'] : undefined;
  if (value['jsonrpc'] !== '2.0') return { kind: 'broken', id: readId };
  const method = value['method'];
  if (typeof method === 'string') {
    if (Object.hasOwn(value, 'params') && !isObject(value['params'])) return { kind: 'broken', id: readId };
    if (!Object.hasOwn(value, 'id')) return { kind: 'notification', method };
    return readId === undefined ? { kind: 'broken', id: undefined } : { kind: 'request', id: readId, method };
  }
  if (Object.hasOwn(value, 'method')) return { kind: 'broken', id: readId };
  const hasResult = Object.hasOwn(value, 'result');
  const hasError = Object.hasOwn(value, 'error');
  if (hasResult && hasError) return { kind: 'broken', id: readId };
  if (hasResult) return isObject(value['result']) && readId !== undefined ? { kind: 'response' } : { kind: 'broken', id: readId };
  if (!hasError) return { kind: 'broken', id: readId };
  const e = value['error'];
  const idOk = !Object.hasOwn(value, 'id') || value['id'] === null || readId !== undefined;
  const eOk = isObject(e) && typeof e['code'] === 'number' && Number.isInteger(e['code']) && typeof e['message'] === 'string';
  return idOk && eOk ? { kind: 'response' } : { kind: 'broken', id: readId };
}

/** True when a request claims the modern era (its `_meta` names a protocol version). */
export function claimsModern(value: unknown): boolean {
  const params = isObject(value) && isObject(value['params']) ? value['params'] : undefined;
  return params !== undefined && isObject(params['_meta']) && PV in params['_meta'];
}

/**
 * What a decoded message must get. `header` is the HTTP request's header lookup (routing headers
 * are checked only over HTTP); `session`, the `Mcp-Session-Id` it carried.
 */
export function expectMessage(value: unknown, options: { header?: (name: string) => string | null; session?: string | null }): Expected {
  const header = options.header;
  const session = options.session ?? null;
  const shape = shapeOf(value);
  if (shape.kind === 'broken') return invalid(shape.id);
  if (shape.kind === 'batch') return session ? { kind: 'error', status: 404, code: -32001, id: undefined } : invalid(undefined);
  if (!isObject(value)) return invalid(undefined);
  const readId = isId(value['id']) ? value['id'] : undefined;
  const method = value['method'];
  const kind = shape.kind;

  const params = isObject(value['params']) ? value['params'] : undefined;
  const meta = params && isObject(params['_meta']) ? params['_meta'] : undefined;
  const modern = kind === 'request' && meta !== undefined && PV in meta;
  if (session && !modern) return { kind: 'error', status: 404, code: -32001, id: undefined };
  if (kind === 'request' && method === 'initialize' && !modern) return { kind: 'legacy-open', id: readId! };
  if (kind === 'notification') return { kind: 'empty', status: [202] };
  if (kind !== 'request') return invalid(undefined);
  const id = readId!;
  const name = method as string;
  const error = (status: number, code: number): Expected => ({ kind: 'error', status, code, id });

  // Over HTTP, a request that claims the modern era: its routing headers must match its body (-32020).
  if (modern && header) {
    const version = header('mcp-protocol-version');
    if (version === null || version !== meta![PV]) return error(400, -32020);
    if (header('mcp-method') !== name) return error(400, -32020);
    const nameParam = NAME_PARAM[name];
    if (nameParam) {
      const raw = header('mcp-name');
      if (raw === null) return error(400, -32020);
      const decoded = headerText(raw);
      if (decoded === undefined || decoded !== params![nameParam]) return error(400, -32020);
    }
  }
  // The per-request envelope in _meta: -32602 (HTTP 400) when required parts are missing or malformed, -32022 for another version.
  if (!params || !meta) return error(400, -32602);
  const version = meta[PV];
  if (!Object.hasOwn(meta, PV) || typeof version !== 'string') return error(400, -32602);
  if (version !== '2026-07-28') return error(400, -32022);
  if (!Object.hasOwn(meta, CAPS) || !capabilitiesValid(meta[CAPS])) return error(400, -32602);
  if (Object.hasOwn(meta, INFO) && !implementationValid(meta[INFO])) return error(400, -32602);
  if (Object.hasOwn(meta, LEVEL) && !LEVELS.includes(meta[LEVEL] as string)) return error(200, -32602);
  if (Object.hasOwn(meta, 'progressToken') && typeof meta['progressToken'] !== 'string' && typeof meta['progressToken'] !== 'number')
    return error(200, -32602);

  // Methods a modern server refuses whatever the server behind can do.
  if (REFUSED_METHODS.has(name)) return error(404, -32601);
  const stream = name === 'subscriptions/listen' || Object.hasOwn(meta, 'progressToken') || Object.hasOwn(meta, LEVEL);
  if (name === 'subscriptions/listen') {
    if (!listenFilterValid(params)) return { kind: 'answer', id, stream, method: name, refusal: { status: 200, code: -32602 } };
    // Task notifications need the tasks extension declared; with it, tasks not the caller's are only not granted.
    const taskIds = (params['notifications'] as Json)['taskIds'];
    const extensions = (meta[CAPS] as Json)['extensions'];
    if (Array.isArray(taskIds) && taskIds.length > 0 && !(isObject(extensions) && Object.hasOwn(extensions, TASKS_EXTENSION)))
      return error(400, -32021);
    return { kind: 'listen', id };
  }
  if (MRTR.has(name)) {
    const refusal = { status: 200, code: -32602 };
    // A retry's members of the wrong type are refused with the envelope, before any stream opens.
    if (Object.hasOwn(params, 'inputResponses') && !isObject(params['inputResponses'])) return error(200, -32602);
    if (Object.hasOwn(params, 'requestState') && typeof params['requestState'] !== 'string') return error(200, -32602);
    // No state this front has sealed for the request ever reaches it here: a state is refused.
    if (Object.hasOwn(params, 'requestState')) return stream ? { kind: 'answer', id, stream, method: name, refusal } : error(200, -32602);
  }
  return { kind: 'answer', id, stream, method: name };
}
