/**
 * Legacy results of the client→server methods, as loose schemas: only the members the adapter
 * reads are checked, everything else passes through untouched.
 */
import * as v from 'valibot';
import { isRecord } from '../primitives.ts';

const Obj = v.record(v.string(), v.unknown());

export const ToolSchema = v.looseObject({ name: v.string(), inputSchema: Obj });
export type Tool = v.InferOutput<typeof ToolSchema>;

export const LEGACY_RESULT_SCHEMAS = {
  'tools/list': v.looseObject({ tools: v.array(ToolSchema), nextCursor: v.optional(v.string()) }),
  'tools/call': v.looseObject({ content: v.array(Obj), structuredContent: v.optional(v.unknown()), isError: v.optional(v.boolean()) }),
  'prompts/list': v.looseObject({ prompts: v.array(Obj), nextCursor: v.optional(v.string()) }),
  'prompts/get': v.looseObject({ messages: v.array(Obj), description: v.optional(v.string()) }),
  'resources/list': v.looseObject({ resources: v.array(Obj), nextCursor: v.optional(v.string()) }),
  'resources/templates/list': v.looseObject({ resourceTemplates: v.array(Obj), nextCursor: v.optional(v.string()) }),
  'resources/read': v.looseObject({ contents: v.array(Obj) }),
  'completion/complete': v.looseObject({ completion: v.looseObject({ values: v.array(v.string()) }) }),
} as const;
export type LegacyResultMethod = keyof typeof LEGACY_RESULT_SCHEMAS;

function arrayOf(value: unknown, item: (v: unknown) => boolean): boolean {
  if (!Array.isArray(value)) return false;
  for (const v of value) if (!item(v)) return false;
  return true;
}

function optional(value: unknown, type: 'string' | 'boolean'): boolean {
  return value === undefined || typeof value === type;
}

/**
 * The shapes of `LEGACY_RESULT_SCHEMAS` as direct checks, run on every result: a result that passes
 * is valid without running the schema (several microseconds a call); one that does not is checked
 * by the schema, which words the failure. A spec holds the two to the same verdicts.
 */
export const LEGACY_RESULT_SHAPES: { readonly [M in LegacyResultMethod]: (result: Record<string, unknown>) => boolean } = {
  'tools/list': (r) =>
    arrayOf(r['tools'], (t) => isRecord(t) && typeof t['name'] === 'string' && isRecord(t['inputSchema'])) &&
    optional(r['nextCursor'], 'string'),
  'tools/call': (r) => arrayOf(r['content'], isRecord) && optional(r['isError'], 'boolean'),
  'prompts/list': (r) => arrayOf(r['prompts'], isRecord) && optional(r['nextCursor'], 'string'),
  'prompts/get': (r) => arrayOf(r['messages'], isRecord) && optional(r['description'], 'string'),
  'resources/list': (r) => arrayOf(r['resources'], isRecord) && optional(r['nextCursor'], 'string'),
  'resources/templates/list': (r) => arrayOf(r['resourceTemplates'], isRecord) && optional(r['nextCursor'], 'string'),
  'resources/read': (r) => arrayOf(r['contents'], isRecord),
  'completion/complete': (r) => isRecord(r['completion']) && arrayOf(r['completion']['values'], (x) => typeof x === 'string'),
};
