/**
 * Modern (2026-07-28) capability objects: the client's travel on every request, the server's in
 * `server/discover`. No `tasks` (it is the `io.modelcontextprotocol/tasks` extension); `roots` is `{}`.
 */
import * as v from 'valibot';
import { isRecord, notArray } from '../primitives.ts';

const Obj = v.record(v.string(), v.unknown());
/** Client capabilities arrive on every request, from anyone: no member that should be an object may be an array. */
const Strict = notArray(Obj);

/** Validates the capabilities a modern client declares in each request's `_meta`. */
export const ModernClientCapabilitiesSchema = notArray(
  v.looseObject({
    experimental: v.optional(notArray(v.record(v.string(), Strict))),
    roots: v.optional(Strict),
    sampling: v.optional(notArray(v.looseObject({ context: v.optional(Strict), tools: v.optional(Strict) }))),
    elicitation: v.optional(notArray(v.looseObject({ form: v.optional(Strict), url: v.optional(Strict) }))),
    extensions: v.optional(notArray(v.record(v.string(), Strict))),
  }),
);
/** The capabilities a modern client declares in each request's `_meta`. */
export type ModernClientCapabilities = v.InferOutput<typeof ModernClientCapabilitiesSchema>;

/**
 * True for client capabilities made of objects whose members are objects, the way clients declare
 * them: these pass `ModernClientCapabilitiesSchema` without running it (it is read on every
 * request). Anything else is for the schema to judge. A spec holds the two to the same verdicts.
 */
export function isPlainClientCapabilities(caps: unknown): boolean {
  if (!isRecord(caps)) return false;
  for (const key in caps) {
    const member = caps[key];
    if (member === undefined) continue;
    if (!isRecord(member)) return false;
    if (key === 'roots') continue;
    for (const inner in member) if (!isRecord(member[inner])) return false;
  }
  return true;
}

/** Validates the capabilities a modern server declares in `server/discover`. */
export const ModernServerCapabilitiesSchema = v.looseObject({
  experimental: v.optional(v.record(v.string(), Obj)),
  logging: v.optional(Obj),
  completions: v.optional(Obj),
  prompts: v.optional(v.looseObject({ listChanged: v.optional(v.boolean()) })),
  resources: v.optional(v.looseObject({ subscribe: v.optional(v.boolean()), listChanged: v.optional(v.boolean()) })),
  tools: v.optional(v.looseObject({ listChanged: v.optional(v.boolean()) })),
  extensions: v.optional(v.record(v.string(), Obj)),
});
/** The capabilities a modern server declares in `server/discover`. */
export type ModernServerCapabilities = v.InferOutput<typeof ModernServerCapabilitiesSchema>;

/** The tasks extension identifier (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Whether capabilities (a request's client capabilities, or a server's in discover) declare the tasks extension. */
export function declaresTasksExtension(capabilities: unknown): boolean {
  const extensions = isRecord(capabilities) ? capabilities['extensions'] : undefined;
  return isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
}
