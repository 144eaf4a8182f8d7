/**
 * Legacy (2024-11-05 … 2025-11-25) capability objects, as exchanged once in `initialize`.
 * Open objects: unknown keys (e.g. SEP-2133 `extensions`) are kept.
 */
import * as v from 'valibot';
import { notArray } from '../primitives.ts';

/** An object member: a record, never an array (valibot alone takes one for an object). */
const Obj = notArray(v.record(v.string(), v.unknown()));

/** Validates the capabilities a legacy client declares in `initialize`. */
export const LegacyClientCapabilitiesSchema = notArray(
  v.looseObject({
    experimental: v.optional(notArray(v.record(v.string(), Obj))),
    roots: v.optional(notArray(v.looseObject({ listChanged: v.optional(v.boolean()) }))),
    sampling: v.optional(notArray(v.looseObject({ context: v.optional(Obj), tools: v.optional(Obj) }))),
    elicitation: v.optional(notArray(v.looseObject({ form: v.optional(Obj), url: v.optional(Obj) }))),
    tasks: v.optional(
      notArray(
        v.looseObject({
          list: v.optional(Obj),
          cancel: v.optional(Obj),
          requests: v.optional(notArray(v.looseObject({ sampling: v.optional(Obj), elicitation: v.optional(Obj) }))),
        }),
      ),
    ),
    extensions: v.optional(notArray(v.record(v.string(), Obj))),
  }),
);
/** The capabilities a legacy client declares in `initialize`. */
export type LegacyClientCapabilities = v.InferOutput<typeof LegacyClientCapabilitiesSchema>;

/** Validates the capabilities a legacy server declares in its `initialize` result. */
export const LegacyServerCapabilitiesSchema = v.looseObject({
  experimental: v.optional(v.record(v.string(), Obj)),
  logging: v.optional(Obj),
  completions: v.optional(Obj),
  prompts: v.optional(v.looseObject({ listChanged: v.optional(v.boolean()) })),
  resources: v.optional(v.looseObject({ subscribe: v.optional(v.boolean()), listChanged: v.optional(v.boolean()) })),
  tools: v.optional(v.looseObject({ listChanged: v.optional(v.boolean()) })),
  tasks: v.optional(
    v.looseObject({
      list: v.optional(Obj),
      cancel: v.optional(Obj),
      requests: v.optional(v.looseObject({ tools: v.optional(v.looseObject({ call: v.optional(Obj) })) })),
    }),
  ),
  extensions: v.optional(v.record(v.string(), Obj)),
});
/** The capabilities a legacy server declares in its `initialize` result. */
export type LegacyServerCapabilities = v.InferOutput<typeof LegacyServerCapabilitiesSchema>;
