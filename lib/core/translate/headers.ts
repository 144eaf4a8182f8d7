/**
 * Streamable HTTP routing headers of 2026-07-28 (translation table rows 8, 32): computing
 * `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` for a request, checking received
 * headers against the body (`-32020`), the base64 sentinel encoding, and the `x-mcp-header` keyword.
 */
import { MetaKey } from '../era.ts';
import { headerMismatch, invalidParams, type WireError } from '../errors.ts';
import type { JsonRpcRequest } from '../jsonrpc.ts';
import { modernMethod } from '../modern/methods.ts';
import { isRecord, shown, type JsonObject } from '../primitives.ts';
import { fail, ok, type Outcome } from '../outcome.ts';

/** The HTTP header names of the modern wire (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, the `Mcp-Param-` prefix). */
export const HEADER = {
  protocolVersion: 'MCP-Protocol-Version',
  method: 'Mcp-Method',
  name: 'Mcp-Name',
  paramPrefix: 'Mcp-Param-',
} as const;

const SENTINEL_START = '=?base64?';
const SENTINEL_END = '?=';
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function isPlainHeaderSafe(value: string): boolean {
  if (value.length === 0) return true;
  if (/^[ \t]|[ \t]$/.test(value)) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== 0x09 && (c < 0x20 || c > 0x7e)) return false;
  }
  return !(value.startsWith(SENTINEL_START) && value.endsWith(SENTINEL_END));
}

function toBase64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function fromBase64(b64: string): string | undefined {
  // Strict: padding required, standard alphabet only (SEP-2243 rejects unpadded or foreign characters).
  if (!STRICT_BASE64.test(b64)) return undefined;
  try {
    const binary = atob(b64);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Encodes a header value: as-is when header-safe, else `=?base64?…?=` of its UTF-8 bytes. */
export function encodeHeaderValue(value: string | number | boolean): string {
  const text = typeof value === 'string' ? value : String(value);
  return isPlainHeaderSafe(text) ? text : `${SENTINEL_START}${toBase64(text)}${SENTINEL_END}`;
}

/** Decodes a received header value (undoing the sentinel); fails on bad characters or bad base64. */
export function decodeHeaderValue(raw: string): Outcome<string> {
  if (raw.startsWith(SENTINEL_START) && raw.endsWith(SENTINEL_END) && raw.length >= SENTINEL_START.length + SENTINEL_END.length) {
    const decoded = fromBase64(raw.slice(SENTINEL_START.length, raw.length - SENTINEL_END.length));
    return decoded === undefined ? fail(headerMismatch('invalid base64 in header value')) : ok(decoded);
  }
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c !== 0x09 && (c < 0x20 || c > 0x7e)) return fail(headerMismatch('header value has invalid characters'));
  }
  return ok(raw);
}

/** A tool argument mirrored into an `Mcp-Param-{name}` header. */
export interface ParamHeader {
  readonly name: string;
  readonly path: readonly string[];
  readonly type: 'string' | 'integer' | 'boolean';
}

const ALLOWED_TYPES = new Set(['string', 'integer', 'boolean']);
const NONE: Outcome<readonly ParamHeader[], string> = ok([]);
const CHECKED: Outcome<void> = ok(undefined);

/** A walk that allocates nothing: most schemas have no annotation and need no full check. */
function mentionsHeaderKeyword(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) {
    for (const item of node) if (mentionsHeaderKeyword(item)) return true;
    return false;
  }
  for (const key in node) {
    if (key === 'x-mcp-header') return true;
    if (mentionsHeaderKeyword((node as JsonObject)[key])) return true;
  }
  return false;
}

/**
 * The `x-mcp-header` annotations of a tool's `inputSchema`, checked against the 2026-07-28 rules
 * (token name, unique ignoring case, only on string/integer/boolean properties reachable through
 * `properties` alone). Any violation makes the whole tool's annotations invalid.
 */
export function paramHeaders(inputSchema: unknown): Outcome<readonly ParamHeader[], string> {
  if (typeof inputSchema !== 'object' || inputSchema === null) return NONE;
  // Tool schemas are asked about on every call of the tool: the answer is kept per schema object
  // (schemas are decoded values nobody modifies).
  let known = PARAM_HEADERS.get(inputSchema);
  if (!known) {
    known = readParamHeaders(inputSchema);
    PARAM_HEADERS.set(inputSchema, known);
  }
  return known;
}

const PARAM_HEADERS = new WeakMap<object, Outcome<readonly ParamHeader[], string>>();

function readParamHeaders(inputSchema: object): Outcome<readonly ParamHeader[], string> {
  if (!mentionsHeaderKeyword(inputSchema)) return NONE;
  const found: ParamHeader[] = [];
  const seen = new Set<string>();
  let problem: string | undefined;
  const visit = (node: unknown, path: string[] | undefined): void => {
    if (problem || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, undefined);
      return;
    }
    const obj = node as JsonObject;
    if ('x-mcp-header' in obj) {
      const name = obj['x-mcp-header'];
      if (path === undefined || path.length === 0) problem = 'x-mcp-header is only allowed on properties reachable through "properties"';
      else if (typeof name !== 'string' || !TOKEN.test(name)) problem = `x-mcp-header ${JSON.stringify(name)} is not a header token`;
      else if (seen.has(name.toLowerCase())) problem = `x-mcp-header ${name} is not unique`;
      else if (typeof obj['type'] !== 'string' || !ALLOWED_TYPES.has(obj['type']))
        problem = `x-mcp-header ${name} is on a property that is not string, integer or boolean`;
      else {
        seen.add(name.toLowerCase());
        found.push({ name, path, type: obj['type'] as ParamHeader['type'] });
      }
    }
    for (const key in obj) {
      const child = obj[key];
      if (key === 'properties' && path !== undefined && isRecord(child)) {
        for (const prop in child) visit(child[prop], [...path, prop]);
      } else if (key !== 'x-mcp-header') visit(child, undefined);
    }
  };
  visit(inputSchema, []);
  return problem ? fail(problem) : ok(found);
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let node = args;
  for (const key of path) {
    if (!isRecord(node)) return undefined;
    node = node[key];
  }
  return node;
}

function paramValue(header: ParamHeader, value: unknown): Outcome<string> {
  if (header.type === 'integer') {
    if (typeof value !== 'number' || !Number.isSafeInteger(value))
      return fail(invalidParams(`argument for ${HEADER.paramPrefix}${header.name} must be an integer within ±(2^53−1)`));
    return ok(String(value));
  }
  if (header.type === 'boolean') {
    if (typeof value !== 'boolean') return fail(invalidParams(`argument for ${HEADER.paramPrefix}${header.name} must be a boolean`));
    return ok(String(value));
  }
  if (typeof value !== 'string') return fail(invalidParams(`argument for ${HEADER.paramPrefix}${header.name} must be a string`));
  return ok(encodeHeaderValue(value));
}

/** The tool definition a `tools/call` is checked against (from `tools/list`). */
export interface ToolHeaderInfo {
  readonly inputSchema: unknown;
}

/**
 * The routing headers a modern request must carry over Streamable HTTP. `tool` (from `tools/list`)
 * supplies `Mcp-Param-*` for `tools/call`.
 */
export function computeHeaders(request: JsonRpcRequest, options: { tool?: ToolHeaderInfo } = {}): Outcome<Record<string, string>> {
  const params = isRecord(request.params) ? request.params : {};
  const meta = isRecord(params['_meta']) ? params['_meta'] : {};
  const version = meta[MetaKey.protocolVersion];
  if (typeof version !== 'string') return fail(invalidParams('the request has no protocol version in _meta'));
  const headers: Record<string, string> = { [HEADER.protocolVersion]: version, [HEADER.method]: request.method };
  const nameParam = modernMethod(request.method)?.nameParam;
  if (nameParam) {
    const name = params[nameParam];
    if (typeof name !== 'string') return fail(invalidParams(`params.${nameParam} must be a string`));
    headers[HEADER.name] = encodeHeaderValue(name);
  }
  if (request.method === 'tools/call' && options.tool) {
    const defs = paramHeaders(options.tool.inputSchema);
    if (!defs.ok) return fail(invalidParams(`tool ${shown(params['name'])}: ${defs.error}`));
    for (const def of defs.value) {
      const value = valueAt(params['arguments'], def.path);
      if (value === undefined || value === null) continue;
      const encoded = paramValue(def, value);
      if (!encoded.ok) return encoded;
      headers[`${HEADER.paramPrefix}${def.name}`] = encoded.value;
    }
  }
  return ok(headers);
}

/** Reads a header by name, case-insensitively (a `Headers` object's `get` fits). */
export type HeaderLookup = (name: string) => string | null | undefined;

function mismatch(name: string, got: string, want: unknown): WireError {
  return headerMismatch(`${name} header value '${got}' does not match body value '${shown(want)}'`);
}

/**
 * Checks a modern request's routing headers against its body: missing, malformed or differing
 * headers → `-32020` (HTTP 400). Integers compare numerically; base64 values are decoded first.
 */
export function verifyHeaders(request: JsonRpcRequest, header: HeaderLookup, options: { tool?: ToolHeaderInfo } = {}): Outcome<void> {
  const params = isRecord(request.params) ? request.params : {};
  const meta = isRecord(params['_meta']) ? params['_meta'] : {};
  const version = header(HEADER.protocolVersion);
  if (version == null) return fail(headerMismatch(`missing ${HEADER.protocolVersion} header`));
  if (meta[MetaKey.protocolVersion] !== undefined && version !== meta[MetaKey.protocolVersion])
    return fail(mismatch(HEADER.protocolVersion, version, meta[MetaKey.protocolVersion]));
  const method = header(HEADER.method);
  if (method == null) return fail(headerMismatch(`missing ${HEADER.method} header`));
  if (method !== request.method) return fail(mismatch(HEADER.method, method, request.method));
  const nameParam = modernMethod(request.method)?.nameParam;
  if (nameParam) {
    const raw = header(HEADER.name);
    if (raw == null) return fail(headerMismatch(`missing ${HEADER.name} header for ${request.method}`));
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok) return decoded;
    if (decoded.value !== params[nameParam]) return fail(mismatch(HEADER.name, decoded.value, params[nameParam]));
  }
  return request.method === 'tools/call' && options.tool ? verifyParamHeaders(request, header, options.tool) : CHECKED;
}

/**
 * Checks only the `Mcp-Param-*` headers of a `tools/call` against its arguments, for a tool whose
 * definition became known after the other routing headers were checked (`verifyHeaders` does both).
 */
export function verifyParamHeaders(request: JsonRpcRequest, header: HeaderLookup, tool: ToolHeaderInfo): Outcome<void> {
  const defs = paramHeaders(tool.inputSchema);
  if (!defs.ok || defs.value.length === 0) return CHECKED;
  const params = isRecord(request.params) ? request.params : {};
  for (const def of defs.value) {
    const headerName = `${HEADER.paramPrefix}${def.name}`;
    const raw = header(headerName);
    const value = valueAt(params['arguments'], def.path);
    if (raw == null) {
      if (value === undefined || value === null) continue;
      return fail(headerMismatch(`missing ${headerName} header`));
    }
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok) return fail(headerMismatch(`${headerName}: ${decoded.error.message}`));
    if (value === undefined || value === null) return fail(mismatch(headerName, decoded.value, value));
    const same = def.type === 'integer' ? Number(decoded.value) === value && decoded.value.trim() !== '' : decoded.value === shown(value);
    if (!same) return fail(mismatch(headerName, decoded.value, value));
  }
  return CHECKED;
}
