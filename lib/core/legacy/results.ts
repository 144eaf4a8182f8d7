/**
 * Legacy results of the client→server methods, as loose schemas: only the members the adapter
 * reads are checked, everything else passes through untouched.
 */
import * as v from 'valibot';

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
