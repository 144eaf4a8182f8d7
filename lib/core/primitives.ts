/**
 * Building blocks that both eras share unchanged: implementation info, log levels, progress
 * tokens, and small record helpers. Era-specific shapes live in `legacy/` and `modern/`.
 */
import * as v from 'valibot';

/** Validates a client's or server's info (`name`, `version`, optional title and icons). */
export const ImplementationSchema = v.looseObject({
  name: v.string(),
  version: v.string(),
  title: v.optional(v.string()),
  description: v.optional(v.string()),
  websiteUrl: v.optional(v.string()),
  icons: v.optional(v.array(v.looseObject({ src: v.string() }))),
});
/** A client's or server's info: `name`, `version`, optional title and icons. */
export type Implementation = v.InferOutput<typeof ImplementationSchema>;

/**
 * True for an `Implementation` of plain strings and no icons: it passes `ImplementationSchema`
 * without running it (client info is read on every request). Anything else is for the schema.
 */
export function isPlainImplementation(info: unknown): boolean {
  if (!isRecord(info)) return false;
  const i = info;
  if (typeof i['name'] !== 'string' || typeof i['version'] !== 'string' || i['icons'] !== undefined) return false;
  for (const key of ['title', 'description', 'websiteUrl']) if (i[key] !== undefined && typeof i[key] !== 'string') return false;
  return true;
}

/** The log levels, least severe first. */
export const LOGGING_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
/** Validates a log level. */
export const LoggingLevelSchema = v.picklist(LOGGING_LEVELS);
/** A log level (`debug` … `emergency`). */
export type LoggingLevel = v.InferOutput<typeof LoggingLevelSchema>;

export const ProgressTokenSchema = v.union([v.string(), v.number()]);
/** The token a request names for its progress notifications. */
export type ProgressToken = v.InferOutput<typeof ProgressTokenSchema>;

/** A JSON object with unknown members (what `params`, `result` and `_meta` are). */
export type JsonObject = Record<string, unknown>;

/**
 * A valibot object or record schema that also refuses arrays (valibot takes an array for an
 * object; a JSON object in the protocol never is one).
 */
export function notArray<S extends v.GenericSchema>(schema: S) {
  return v.pipe(
    v.custom<v.InferInput<S>>((value) => !Array.isArray(value), 'expected an object, not an array'),
    schema,
  );
}

export const JsonObjectSchema = v.record(v.string(), v.unknown());

/** True for a plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether two decoded JSON values are equal (object member order aside); values nested deeper than
 * `maxDepth` (16 by default) count as different.
 */
export function sameJson(a: unknown, b: unknown, depth = 0, maxDepth = 16): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || depth > maxDepth) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i], depth + 1, maxDepth)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  let count = 0;
  for (const k in a) {
    if (!Object.hasOwn(b, k) || !sameJson((a as JsonObject)[k], (b as JsonObject)[k], depth + 1, maxDepth)) return false;
    count++;
  }
  for (const _ in b) count--;
  return count === 0;
}

/** The object at `value[key]` if it is one. */
export function recordAt(value: JsonObject | undefined, key: string): JsonObject | undefined {
  const inner = value?.[key];
  return isRecord(inner) ? inner : undefined;
}

/**
 * Sets `obj[key]` as an own member. A JSON member named `__proto__` is data like any other, but
 * assigning it would replace the object's prototype instead (and drop the member).
 */
export function setMember(obj: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** A shallow copy of `obj` without `keys`; `undefined` when nothing is left and `dropEmpty` is set. */
export function omitKeys(obj: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const k in obj) if (!keys.includes(k)) setMember(out, k, obj[k]);
  return out;
}

/**
 * A shallow copy of `base` with `entries` set on it. (Copy-then-assign: on V8 this is an order of
 * magnitude cheaper than adding keys to a spread copy, and translation runs on every message.)
 */
export function extend(base: JsonObject | undefined, entries: JsonObject): JsonObject {
  const out: JsonObject = base === undefined ? {} : Object.hasOwn(base, '__proto__') ? omitKeys(base, []) : Object.assign({}, base);
  for (const k in entries) setMember(out, k, entries[k]);
  return out;
}

/**
 * A value as text for a message: a string as it is, anything else as JSON. (`String(value)` can
 * throw for decoded JSON: an object whose `toString` member is not a function cannot be converted.)
 */
export function shown(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** True when an object has no own enumerable keys. */
export function isEmpty(obj: JsonObject): boolean {
  for (const _ in obj) return false;
  return true;
}

/** Severity rank of a log level: higher is more severe. */
export function levelRank(level: LoggingLevel): number {
  return LOGGING_LEVELS.indexOf(level);
}

/** A stable text for a JSON value: object keys sorted, so equal capability sets share a key. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as JsonObject)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
