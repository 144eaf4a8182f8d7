/**
 * Validates messages against the official MCP JSON Schemas of each revision
 * (`fixtures/schemas/<revision>/schema.json`, carried with their notice): the JSON-RPC envelope and,
 * where the method is known, the exact request, notification or result definition.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;
export type Revision = (typeof REVISIONS)[number];

export const SCHEMA_DIR = resolve(import.meta.dirname, '../../fixtures/schemas');

interface Loaded {
  readonly ajv: Ajv;
  readonly defs: Record<string, { properties?: Record<string, { const?: unknown }>; required?: string[] }>;
  readonly key: string;
  readonly defsKey: string;
}

const loaded = new Map<Revision, Loaded>();

function load(revision: Revision): Loaded {
  let l = loaded.get(revision);
  if (l) return l;
  const doc = JSON.parse(readFileSync(resolve(SCHEMA_DIR, revision, 'schema.json'), 'utf8')) as Record<string, unknown>;
  const is2020 = String(doc['$schema']).includes('2020-12');
  const ajv = is2020 ? new Ajv2020({ strict: false, allErrors: false }) : new Ajv({ strict: false, allErrors: false });
  addFormats(ajv as Ajv);
  const key = `mcp-${revision}`;
  const copy = { ...doc };
  delete copy['$id'];
  ajv.addSchema(copy, key);
  const defsKey = is2020 ? '$defs' : 'definitions';
  l = { ajv: ajv as Ajv, defs: doc[defsKey] as Loaded['defs'], key, defsKey };
  loaded.set(revision, l);
  return l;
}

const compiled = new Map<string, ValidateFunction>();

function validator(revision: Revision, def: string): ValidateFunction {
  const id = `${revision}#${def}`;
  let fn = compiled.get(id);
  if (!fn) {
    const l = load(revision);
    if (!l.defs[def]) throw new Error(`${revision} has no definition ${def}`);
    fn = l.ajv.getSchema(`${l.key}#/${l.defsKey}/${def}`);
    if (!fn) throw new Error(`cannot compile ${def} of ${revision}`);
    compiled.set(id, fn);
  }
  return fn;
}

/** True when the revision defines `def`. */
export function hasDef(revision: Revision, def: string): boolean {
  return Boolean(load(revision).defs[def]);
}

/** Validates `value` against one definition; returns the problems (empty when valid). */
export function check(revision: Revision, def: string, value: unknown): string[] {
  const fn = validator(revision, def);
  if (fn(value)) return [];
  return (fn.errors ?? []).map((e) => `${def}${e.instancePath} ${e.message ?? ''} ${e.params ? JSON.stringify(e.params) : ''}`.trim());
}

/** The definition name of the request or notification with this method (by its `method` const). */
export function defForMethod(revision: Revision, method: string, kind: 'request' | 'notification'): string | undefined {
  const l = load(revision);
  const candidates = Object.entries(l.defs).filter(([, d]) => d.properties?.['method']?.const === method);
  const wantId = kind === 'request';
  const pick = candidates.find(([name, d]) => {
    const isNotification = name.endsWith('Notification');
    if (wantId) return !isNotification && (d.required?.includes('id') ?? true);
    return isNotification;
  });
  return pick?.[0] ?? (candidates.length === 1 ? candidates[0]![0] : undefined);
}

const RESULT_DEFS: Record<string, string> = {
  initialize: 'InitializeResult',
  'server/discover': 'DiscoverResult',
  ping: 'EmptyResult',
  'logging/setLevel': 'EmptyResult',
  'resources/subscribe': 'EmptyResult',
  'resources/unsubscribe': 'EmptyResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  'prompts/list': 'ListPromptsResult',
  'prompts/get': 'GetPromptResult',
  'resources/list': 'ListResourcesResult',
  'resources/templates/list': 'ListResourceTemplatesResult',
  'resources/read': 'ReadResourceResult',
  'completion/complete': 'CompleteResult',
  'subscriptions/listen': 'SubscriptionsListenResult',
  'elicitation/create': 'ElicitResult',
  'sampling/createMessage': 'CreateMessageResult',
  'roots/list': 'ListRootsResult',
};

/** The result definition for a method's answer (and for `input_required`/task results in 2026-07-28). */
export function resultDef(revision: Revision, method: string, result: Record<string, unknown>): string | undefined {
  if (revision === '2026-07-28' && result['resultType'] === 'input_required') return 'InputRequiredResult';
  if (result['resultType'] === 'task') return 'Result';
  if ('task' in result && hasDef(revision, 'CreateTaskResult') && method === 'tools/call') return 'CreateTaskResult';
  const def = RESULT_DEFS[method];
  return def && hasDef(revision, def) ? def : undefined;
}

/**
 * Validates a whole JSON-RPC message of `revision`: the envelope, then the method-specific
 * definition (`method` names the request a response answers).
 */
export function validateMessage(revision: Revision, message: unknown, options: { method?: string } = {}): string[] {
  if (Array.isArray(message)) {
    const def = hasDef(revision, 'JSONRPCBatchRequest') ? 'JSONRPCBatchRequest' : undefined;
    if (!def) return [`${revision} has no JSON-RPC batches`];
    return [...check(revision, def, message), ...message.flatMap((m) => validateMessage(revision, m, options))];
  }
  const problems = check(revision, 'JSONRPCMessage', message);
  if (problems.length > 0) return problems;
  const msg = message as Record<string, unknown>;
  if (typeof msg['method'] === 'string') {
    const kind = 'id' in msg ? 'request' : 'notification';
    const def = defForMethod(revision, msg['method'], kind);
    if (!def) return [`${revision} has no ${kind} ${msg['method']}`];
    return check(revision, def, message);
  }
  if ('result' in msg) {
    if (!options.method) return [];
    const def = resultDef(revision, options.method, msg['result'] as Record<string, unknown>);
    if (!def) return [`${revision} has no result definition for ${options.method}`];
    return check(revision, def, msg['result']);
  }
  if ('error' in msg) {
    const code = (msg['error'] as { code?: number }).code;
    const specific: Record<number, string> = {
      [-32020]: 'HeaderMismatchError',
      [-32021]: 'MissingRequiredClientCapabilityError',
      [-32022]: 'UnsupportedProtocolVersionError',
      [-32042]: 'URLElicitationRequiredError',
    };
    const def = code === undefined ? undefined : specific[code];
    if (def && hasDef(revision, def)) return check(revision, def, message);
  }
  return [];
}
