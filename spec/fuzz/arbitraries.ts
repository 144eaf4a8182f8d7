/**
 * fast-check arbitraries for bad input of both eras: request ids of every kind, JSON values with
 * the awkward corners (reserved key names, lone surrogates, huge strings, deep nesting), and
 * mutations of a valid message (drop or retype a member anywhere, add keys, grow a string, nest a
 * value) plus mutations of its text (truncate, splice, garbage). Shared by every fuzz target.
 */
import fc from 'fast-check';

export type Json = Record<string, unknown>;

/** Ids a JSON-RPC request may carry (strings, integers, including negative and beyond 2^53). */
export const validId: fc.Arbitrary<string | number> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 60, -(2 ** 63)),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', ' ', 'req-1', '\u0000', '\ud800', '😀'.repeat(3), 'a'.repeat(300)),
);

/** Ids that are not valid request ids: floats, null, booleans, objects, arrays. */
export const invalidId: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 1.5, -0.25, 1e-9, [], {}, [1], { id: 1 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
);

/**
 * Ids written straight into the message text (so that they are exactly what a peer may send):
 * exponents, a trailing `.0`, numbers beyond a double, `-0`. Each with what it decodes to.
 */
export const RAW_IDS: ReadonlyArray<readonly [text: string, decoded: unknown]> = [
  ['1e3', 1000],
  ['1.0', 1],
  ['-0', -0],
  ['1e400', Infinity],
  ['-1e400', -Infinity],
  ['9007199254740993', 9007199254740992],
  ['0.5', 0.5],
  ['"\\ud800"', '\ud800'],
  ['"\\u0000"', '\u0000'],
];

/** The marker a message carries in place of a raw id until its text is written. */
export const RAW_ID_MARKER = '__fuzz_raw_id__';

/**
 * Nesting deeper than this is carried as a marker and written straight into the text: V8's
 * `JSON.stringify` (and any recursive copy) runs out of stack long before 10,000 levels, while a
 * peer can send them in a few kilobytes.
 */
const DEEP = 1000;
const NEST_MARKER = '__fuzz_nest__';

/** Keys with a meaning somewhere: to JavaScript, to JSON-RPC, to MCP. */
const AWKWARD_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'jsonrpc',
  'id',
  'method',
  'params',
  'result',
  'error',
  '_meta',
  'resultType',
  'x-mcp-header',
  'task',
  'inputResponses',
  'requestState',
  'progressToken',
  '',
];

export const awkwardKey: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...AWKWARD_KEYS), fc.string({ maxLength: 10 }));

const awkwardString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ maxLength: 8, unit: 'binary' }),
  fc.constantFrom('\ud800', '\udfff', '\u0000', '\n', '\r\n', '\u2028', '=?base64?', '=?base64?PT8=?=', '?=', '\u202e', 'null', '{}', '"'),
);

/** Small JSON values, leaning on the awkward corners. */
export const smallJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53 + 2, -1e308, 1e-300),
    fc.integer(),
    awkwardString,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(awkwardKey, tie('value'), { maxKeys: 3, noNullPrototype: true }),
  ),
})).value;

/** A JSON object (what `params`, `result` and `_meta` are) with arbitrary members. */
export const jsonObject: fc.Arbitrary<Json> = fc.dictionary(awkwardKey, smallJson, { maxKeys: 4, noNullPrototype: true });

/** Sets `key` on `obj` as an own data property (plain assignment of `__proto__` would not). */
export function setOwn(obj: Json, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A deep copy of a JSON value that keeps own `__proto__` keys. */
export function clone<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clone) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const key of Object.keys(value)) setOwn(out, key, clone((value as Json)[key]));
  return out as T;
}

/** Arrays (or objects) nested `depth` deep around `inner`, built without recursion. */
export function nested(depth: number, inner: unknown = 0, objects = false): unknown {
  let v = inner;
  for (let i = 0; i < depth; i++) v = objects ? { a: v } : [v];
  return v;
}

type Path = ReadonlyArray<string | number>;

/** Every path into a JSON value (the root included), depth-first, bounded. */
function paths(value: unknown, limit = 400): Path[] {
  const out: Path[] = [[]];
  const stack: Array<[unknown, Path]> = [[value, []]];
  while (stack.length > 0 && out.length < limit) {
    const [node, path] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const keys: Array<string | number> = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    for (const k of keys) {
      const p = [...path, k];
      out.push(p);
      stack.push([(node as Json)[k as string], p]);
    }
  }
  return out;
}

function parentOf(root: unknown, path: Path): { parent: Json | unknown[]; key: string | number } | undefined {
  if (path.length === 0) return undefined;
  let node = root;
  for (const k of path.slice(0, -1)) node = (node as Json)[k as string];
  return { parent: node as Json, key: path[path.length - 1]! };
}

/** One structural change to a JSON value. */
export type Mutation =
  | { readonly kind: 'drop'; readonly at: number }
  | { readonly kind: 'retype'; readonly at: number; readonly value: unknown }
  | { readonly kind: 'addKey'; readonly at: number; readonly key: string; readonly value: unknown }
  | { readonly kind: 'huge'; readonly at: number; readonly size: number }
  | { readonly kind: 'nest'; readonly at: number; readonly depth: number; readonly objects: boolean }
  | { readonly kind: 'duplicate'; readonly at: number }
  | { readonly kind: 'stringify'; readonly at: number };

/** Mutations; `maxDepth` bounds `nest`, `maxHuge` bounds `huge`. */
export function mutation(options: { maxDepth?: number; maxHuge?: number } = {}): fc.Arbitrary<Mutation> {
  const at = fc.nat();
  const depths = [2, 10, 63, 64, 65, 200, 10_000].filter((d) => d <= (options.maxDepth ?? 10_000));
  const sizes = [1_000, 70_000, 300_000, 2_000_000].filter((s) => s <= (options.maxHuge ?? 2_000_000));
  return fc.oneof(
    fc.record({ kind: fc.constant('drop' as const), at }),
    fc.record({ kind: fc.constant('retype' as const), at, value: smallJson }),
    fc.record({ kind: fc.constant('addKey' as const), at, key: awkwardKey, value: smallJson }),
    fc.record({ kind: fc.constant('huge' as const), at, size: fc.constantFrom(...sizes) }),
    fc.record({ kind: fc.constant('nest' as const), at, depth: fc.constantFrom(...depths), objects: fc.boolean() }),
    fc.record({ kind: fc.constant('duplicate' as const), at }),
    fc.record({ kind: fc.constant('stringify' as const), at }),
  );
}

/** Applies mutations to a copy of `value` (the original is left alone). */
export function applyMutations(value: unknown, mutations: readonly Mutation[]): unknown {
  let root = clone(value);
  for (const m of mutations) {
    const all = paths(root);
    const path = all[m.at % all.length]!;
    const place = parentOf(root, path);
    const set = (v: unknown): void => {
      if (!place) root = v;
      else if (Array.isArray(place.parent)) place.parent[place.key as number] = v;
      else setOwn(place.parent, place.key as string, v);
    };
    const current = place ? (place.parent as Json)[place.key as string] : root;
    switch (m.kind) {
      case 'drop':
        if (!place) root = undefined;
        else if (Array.isArray(place.parent)) place.parent.splice(place.key as number, 1);
        else delete (place.parent as Json)[place.key as string];
        break;
      case 'retype':
        set(clone(m.value));
        break;
      case 'addKey':
        if (current !== null && typeof current === 'object' && !Array.isArray(current)) setOwn(current as Json, m.key, clone(m.value));
        else if (Array.isArray(current)) current.push(clone(m.value));
        else set({ [m.key === '__proto__' ? 'k' : m.key]: clone(m.value) });
        break;
      case 'huge':
        set('x'.repeat(m.size - 1) + '\u00e9');
        break;
      case 'nest':
        set(
          m.depth > DEEP
            ? `${NEST_MARKER}${m.depth}:${m.objects ? 'o' : 'a'}`
            : nested(m.depth, typeof current === 'object' ? 0 : current, m.objects),
        );
        break;
      case 'duplicate':
        if (Array.isArray(current)) {
          if (current.length > 0) current.push(clone(current[0]));
        } else if (place && Array.isArray(place.parent)) place.parent.push(clone(current));
        break;
      case 'stringify':
        set(current === undefined ? 'undefined' : JSON.stringify(current));
        break;
    }
  }
  return root;
}

/** A value, mutated 1–3 times. */
export function mutated(value: unknown, options: { maxDepth?: number; maxHuge?: number } = {}): fc.Arbitrary<unknown> {
  return fc.array(mutation(options), { minLength: 1, maxLength: 3 }).map((ms) => applyMutations(value, ms));
}

/**
 * Writes a message as text: a raw id token in place of its marker when it carries one, and deep
 * nesting in place of nesting markers.
 */
export function textOf(message: unknown, rawId?: string): string {
  let text = JSON.stringify(message) ?? '';
  if (rawId !== undefined) text = text.replace(`"${RAW_ID_MARKER}"`, rawId);
  if (text.includes(NEST_MARKER)) {
    text = text.replace(new RegExp(`"${NEST_MARKER}(\\d+):([ao])"`, 'g'), (_, depth: string, kind: string) => {
      const n = Number(depth);
      return kind === 'a' ? `${'['.repeat(n)}0${']'.repeat(n)}` : `${'{"a":'.repeat(n)}0${'}'.repeat(n)}`;
    });
  }
  return text;
}

/** One change to a message's text. */
export type TextMutation =
  | { readonly kind: 'truncate'; readonly at: number }
  | { readonly kind: 'splice'; readonly at: number; readonly insert: string }
  | { readonly kind: 'garbage'; readonly text: string }
  | { readonly kind: 'wrap'; readonly before: string; readonly after: string };

export const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('splice' as const),
    at: fc.nat(),
    insert: fc.oneof(fc.constantFrom('"', '{', '}', ']', ',', '\\', '\u0000', '\ud800', 'NaN', ' ', '\n'), fc.string({ maxLength: 4 })),
  }),
  fc.record({
    kind: fc.constant('garbage' as const),
    text: fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ maxLength: 40, unit: 'binary' }),
      fc.constantFrom('', ' ', 'null', '1', '"x"', '[]', '[[]]', '{}', 'true', '\ufeff{}', '{"jsonrpc":"2.0"'),
    ),
  }),
  fc.record({
    kind: fc.constant('wrap' as const),
    before: fc.constantFrom('[', ' ', '\ufeff', '{"a":'),
    after: fc.constantFrom(']', ' ', '}', ',', 'x'),
  }),
);

export function applyTextMutation(text: string, m: TextMutation): string {
  switch (m.kind) {
    case 'truncate':
      return text.slice(0, text.length === 0 ? 0 : m.at % text.length);
    case 'splice': {
      const at = text.length === 0 ? 0 : m.at % text.length;
      return text.slice(0, at) + m.insert + text.slice(at);
    }
    case 'garbage':
      return m.text;
    case 'wrap':
      return m.before + text + m.after;
  }
}
