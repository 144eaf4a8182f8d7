/**
 * Realistic benchmark inputs: JSON-RPC messages of both eras, grown to a target size in bytes.
 * Everything is deterministic (a seeded generator), so runs compare like with like.
 */
import { LATEST_MODERN_VERSION, MetaKey } from '../lib/core/index.ts';

/** A JSON object as the builders produce it. */
export type Json = Record<string, unknown>;

/** The sizes measured, with their target length of the message text in bytes. */
export const SIZES = [
  { name: 'small', bytes: 200 },
  { name: 'medium', bytes: 10 * 1024 },
  { name: 'large', bytes: 1024 * 1024 },
] as const;
export type SizeName = (typeof SIZES)[number]['name'];

/** A small deterministic generator (LCG), so message content is varied but identical every run. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 0x1_0000_0000;
  };
}

const WORDS = (
  'the a of to and in is for on with that by this be are from or as at it an was which can not we ' +
  'server client request result tool resource prompt schema value field error token session region ' +
  'revenue quarter report customer order invoice shipment forecast budget latency cache query index ' +
  'document section summary table metric growth decline increase average total percent weekly monthly ' +
  'returns configuration deployment cluster service endpoint timeout retry policy version migration'
).split(' ');

/** English-looking prose of about `chars` characters, with the odd quote, newline and number. */
export function prose(rand: () => number, chars: number): string {
  let out = '';
  let sentence = 0;
  while (out.length < chars) {
    let word = WORDS[Math.floor(rand() * WORDS.length)] ?? 'value';
    if (sentence === 0) word = word.charAt(0).toUpperCase() + word.slice(1);
    const r = rand();
    if (r < 0.03) word = `"${word}"`;
    else if (r < 0.06) word = String(Math.floor(rand() * 10_000));
    out += word;
    sentence++;
    if (sentence > 6 && rand() < 0.15) {
      out += rand() < 0.2 ? '.\n' : '. ';
      sentence = 0;
    } else out += ' ';
  }
  return out.slice(0, chars).trimEnd();
}

/**
 * Builds a message with `n` repeated items, choosing `n` so that its JSON text is close to
 * `target` bytes (never fewer than `min` items).
 */
function fit(target: number, build: (n: number) => Json, min = 0): Json {
  const size = (n: number): number => Buffer.byteLength(JSON.stringify(build(n)));
  const base = size(min);
  if (base >= target) return build(min);
  const probe = min + 8;
  const perItem = (size(probe) - base) / 8;
  let n = min + Math.max(0, Math.round((target - base) / perItem));
  // One correction step: items vary in size.
  const got = size(n);
  n = Math.max(min, n + Math.round((target - got) / perItem));
  return build(n);
}

/** The legacy client session whose requests are stamped modern. */
export const SESSION = {
  clientInfo: { name: 'claude-desktop', version: '0.9.1' },
  capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } },
  logLevel: 'info',
} as const;

/** The server identity stamped on modern results. */
export const SERVER_INFO = { name: 'docs-server', version: '2.3.0' } as const;

/** The modern envelope a modern client puts on every request. */
function modernMeta(progressToken: string): Json {
  return {
    [MetaKey.protocolVersion]: LATEST_MODERN_VERSION,
    [MetaKey.clientInfo]: { name: 'ExampleClient', version: '1.4.2' },
    [MetaKey.clientCapabilities]: { elicitation: { form: {} }, sampling: {} },
    [MetaKey.logLevel]: 'info',
    progressToken,
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01',
  };
}

/** `tools/call` arguments: a few scalars, plus `n` documents to index for the larger sizes. */
function callArguments(n: number, target: number): Json {
  const rand = seeded(1);
  if (n === 0) return { collection: 'kb', query: 'quarterly revenue by region', limit: 10 };
  const bodyChars = target < 4096 ? 80 : 900;
  const documents = Array.from({ length: n }, (_, i) => ({
    id: `doc-${String(i).padStart(5, '0')}`,
    title: prose(rand, 40),
    tags: ['finance', i % 2 ? 'emea' : 'apac'],
    body: prose(rand, bodyChars),
  }));
  return { collection: 'kb', documents, upsert: true };
}

/** A legacy client's `tools/call` request (no envelope; the session carries it). */
export function legacyToolsCallRequest(target: number): Json {
  return fit(target, (n) => ({
    jsonrpc: '2.0',
    id: 42,
    method: 'tools/call',
    params: {
      name: n === 0 ? 'search_documents' : 'index_documents',
      arguments: callArguments(n, target),
      _meta: { progressToken: 'p-42' },
    },
  }));
}

/** A modern client's `tools/call` request, with the full per-request `_meta` envelope. */
export function modernToolsCallRequest(target: number): Json {
  return fit(target, (n) => ({
    jsonrpc: '2.0',
    id: 42,
    method: 'tools/call',
    params: { name: n === 0 ? 'search_documents' : 'index_documents', arguments: callArguments(n, target), _meta: modernMeta('p-42') },
  }));
}

/** Text content blocks; their number and length set the size. */
function textBlocks(n: number, target: number): Json[] {
  const rand = seeded(2);
  const chars = target < 4096 ? 110 : 1000;
  return Array.from({ length: n }, () => ({ type: 'text', text: prose(rand, chars) }));
}

/** A legacy server's `tools/call` result: text blocks. */
export function legacyToolsCallResult(target: number): Json {
  return fit(target, (n) => ({ jsonrpc: '2.0', id: 42, result: { content: textBlocks(n, target), isError: false } }), 1);
}

/** A modern server's complete `tools/call` result: text blocks, server info in `_meta`. */
export function modernToolsCallResult(target: number): Json {
  return fit(
    target,
    (n) => ({
      jsonrpc: '2.0',
      id: 42,
      result: { resultType: 'complete', content: textBlocks(n, target), isError: false, _meta: { [MetaKey.serverInfo]: SERVER_INFO } },
    }),
    1,
  );
}

const PROPERTY_KINDS = ['string', 'integer', 'boolean', 'enum', 'array', 'object'] as const;

/** A JSON Schema property of a tool's input, of one of a few common kinds. */
function schemaProperty(rand: () => number, i: number): Json {
  const description = prose(rand, 50 + Math.floor(rand() * 60));
  switch (PROPERTY_KINDS[i % PROPERTY_KINDS.length]) {
    case 'string':
      return { type: 'string', description, minLength: 1, maxLength: 256 };
    case 'integer':
      return { type: 'integer', description, minimum: 0, maximum: 1000, default: 10 };
    case 'boolean':
      return { type: 'boolean', description, default: false };
    case 'enum':
      return { type: 'string', description, enum: ['asc', 'desc', 'relevance'] };
    case 'array':
      return { type: 'array', description, items: { type: 'string' }, maxItems: 50 };
    default:
      return {
        type: 'object',
        description,
        properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } },
        required: ['from'],
      };
  }
}

/** A tool definition as 2025-11-25 servers list them (some with `execution.taskSupport`). */
function tool(rand: () => number, i: number): Json {
  const names = ['query', 'limit', 'verbose', 'order', 'fields', 'range', 'region', 'offset'];
  const count = 3 + (i % 5);
  const properties: Json = {};
  for (let p = 0; p < count; p++) properties[names[p] ?? `p${p}`] = schemaProperty(rand, i + p);
  const out: Json = {
    name: `tool_${String(i).padStart(4, '0')}`,
    title: prose(rand, 24),
    description: prose(rand, 120 + Math.floor(rand() * 120)),
    inputSchema: { type: 'object', properties, required: ['query'], additionalProperties: false },
    annotations: { readOnlyHint: i % 3 !== 0, openWorldHint: false },
  };
  if (i % 4 === 0) out['execution'] = { taskSupport: 'optional' };
  return out;
}

/** A legacy server's `tools/list` result. The small one is a single minimal tool. */
export function legacyToolsListResult(target: number): Json {
  if (target < 1024) {
    return {
      jsonrpc: '2.0',
      id: 2,
      result: {
        tools: [
          {
            name: 'get_weather',
            description: 'Current weather for a location',
            inputSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
          },
        ],
      },
    };
  }
  return fit(target, (n) => {
    const rand = seeded(3);
    return { jsonrpc: '2.0', id: 2, result: { tools: Array.from({ length: n }, (_, i) => tool(rand, i)), nextCursor: 'eyJwYWdlIjoyfQ' } };
  }, 1);
}

/** An elicitation form field. */
function formField(rand: () => number, i: number): Json {
  const title = prose(rand, 18);
  const description = prose(rand, 40 + Math.floor(rand() * 40));
  switch (i % 4) {
    case 0:
      return { type: 'string', title, description, minLength: 1, maxLength: 100 };
    case 1:
      return { type: 'string', title, description, format: 'email' };
    case 2:
      return { type: 'integer', title, description, minimum: 1, maximum: 99 };
    default:
      return { type: 'string', title, description, enum: ['small', 'medium', 'large'] };
  }
}

/** A legacy server's pushed form-mode `elicitation/create`; the number of fields sets the size. */
export function legacyElicitationPush(target: number): Json {
  if (target < 1024) {
    return {
      jsonrpc: '2.0',
      id: 7,
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: 'Please provide your GitHub username',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
    };
  }
  return fit(target, (n) => {
    const rand = seeded(4);
    const properties: Json = {};
    for (let i = 0; i < n; i++) properties[`field_${i}`] = formField(rand, i);
    return {
      jsonrpc: '2.0',
      id: 7,
      method: 'elicitation/create',
      params: { mode: 'form', message: prose(rand, 200), requestedSchema: { type: 'object', properties, required: ['field_0'] } },
    };
  }, 1);
}
