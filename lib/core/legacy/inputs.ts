/**
 * Legacy server→client requests that ask the client for input: `elicitation/create` (form; URL mode
 * with `elicitationId` in 2025-11-25), `sampling/createMessage`, `roots/list`, and what the client
 * answers. Also the `-32042` URL-elicitation-required error data.
 */
import * as v from 'valibot';

const Obj = v.record(v.string(), v.unknown());
const Meta = v.optional(Obj);
const TaskMeta = v.optional(v.looseObject({ ttl: v.optional(v.number()) }));

export const LegacyElicitFormParamsSchema = v.looseObject({
  mode: v.optional(v.literal('form')),
  message: v.string(),
  requestedSchema: v.looseObject({ type: v.literal('object'), properties: Obj }),
  task: TaskMeta,
  _meta: Meta,
});
export const LegacyElicitUrlParamsSchema = v.looseObject({
  mode: v.literal('url'),
  message: v.string(),
  url: v.string(),
  elicitationId: v.string(),
  task: TaskMeta,
  _meta: Meta,
});
/** Form or URL mode, chosen by `mode` (form is the default and the common case). */
export const LegacyElicitParamsSchema = v.variant('mode', [LegacyElicitUrlParamsSchema, LegacyElicitFormParamsSchema]);
export type LegacyElicitParams = v.InferOutput<typeof LegacyElicitParamsSchema>;

export const SamplingMessageSchema = v.looseObject({ role: v.picklist(['user', 'assistant']), content: v.union([Obj, v.array(Obj)]) });

export const LegacyCreateMessageParamsSchema = v.looseObject({
  messages: v.array(SamplingMessageSchema),
  maxTokens: v.number(),
  task: TaskMeta,
  _meta: Meta,
});

export const LegacyListRootsParamsSchema = v.optional(v.looseObject({ _meta: Meta }));

export const ElicitResultSchema = v.looseObject({
  action: v.picklist(['accept', 'decline', 'cancel']),
  content: v.optional(v.record(v.string(), v.union([v.string(), v.number(), v.boolean(), v.array(v.string())]))),
  _meta: Meta,
});
export type ElicitResult = v.InferOutput<typeof ElicitResultSchema>;

export const CreateMessageResultSchema = v.looseObject({
  role: v.picklist(['user', 'assistant']),
  content: v.union([Obj, v.array(Obj)]),
  model: v.string(),
  stopReason: v.optional(v.string()),
  _meta: Meta,
});
export type CreateMessageResult = v.InferOutput<typeof CreateMessageResultSchema>;

export const RootSchema = v.looseObject({ uri: v.string(), name: v.optional(v.string()), _meta: Meta });
export const ListRootsResultSchema = v.looseObject({ roots: v.array(RootSchema), _meta: Meta });
export type ListRootsResult = v.InferOutput<typeof ListRootsResultSchema>;

/** `-32042` data: the URL elicitations to complete before retrying. */
export const UrlElicitationRequiredDataSchema = v.looseObject({ elicitations: v.array(LegacyElicitUrlParamsSchema) });

/** The server→client input methods, legacy side, with the schema of their params and result. */
export const LEGACY_INPUT_METHODS = {
  'elicitation/create': { params: LegacyElicitParamsSchema, result: ElicitResultSchema },
  'sampling/createMessage': { params: LegacyCreateMessageParamsSchema, result: CreateMessageResultSchema },
  'roots/list': { params: LegacyListRootsParamsSchema, result: ListRootsResultSchema },
} as const;
/** A request a legacy server pushes for input: `elicitation/create`, `sampling/createMessage` or `roots/list`. */
export type InputMethod = keyof typeof LEGACY_INPUT_METHODS;

export function isInputMethod(method: unknown): method is InputMethod {
  return typeof method === 'string' && Object.hasOwn(LEGACY_INPUT_METHODS, method);
}
