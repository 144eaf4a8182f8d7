/**
 * Modern multi round-trip requests (MRTR): bare input requests (`{method, params}`, no id, no
 * `_meta`), the `input_required` result, and the input responses a retry carries.
 */
import * as v from 'valibot';
import { CreateMessageResultSchema, ElicitResultSchema, ListRootsResultSchema, SamplingMessageSchema } from '../legacy/inputs.ts';

const Obj = v.record(v.string(), v.unknown());

export const ModernElicitFormParamsSchema = v.looseObject({
  mode: v.optional(v.literal('form')),
  message: v.string(),
  requestedSchema: v.looseObject({ type: v.literal('object'), properties: Obj }),
});
export const ModernElicitUrlParamsSchema = v.looseObject({ mode: v.literal('url'), message: v.string(), url: v.string() });

/** Validates one entry of an `input_required` result's `inputRequests`. */
export const InputRequestSchema = v.variant('method', [
  v.looseObject({ method: v.literal('elicitation/create'), params: v.union([ModernElicitUrlParamsSchema, ModernElicitFormParamsSchema]) }),
  v.looseObject({
    method: v.literal('sampling/createMessage'),
    params: v.looseObject({ messages: v.array(SamplingMessageSchema), maxTokens: v.number() }),
  }),
  v.looseObject({ method: v.literal('roots/list'), params: v.optional(Obj) }),
]);
/** One input a modern server asks for: an elicitation, a sampling request or a roots request. */
export type InputRequest = v.InferOutput<typeof InputRequestSchema>;

/** Validates the `inputRequests` of an `input_required` result, keyed by input key. */
export const InputRequestsSchema = v.record(v.string(), InputRequestSchema);
/** The inputs of one MRTR round, keyed by input key (`elicitation-1`, …). */
export type InputRequests = Record<string, InputRequest>;

/** Input responses, per method. They have no `resultType` (they do not extend `Result`). */
export const INPUT_RESPONSE_SCHEMAS = {
  'elicitation/create': ElicitResultSchema,
  'sampling/createMessage': CreateMessageResultSchema,
  'roots/list': ListRootsResultSchema,
} as const;

/** Validates the `inputResponses` a retry carries, keyed by input key. */
export const InputResponsesSchema = v.record(v.string(), Obj);
/** The client's answers to one MRTR round, keyed by input key. */
export type InputResponses = Record<string, Record<string, unknown>>;

/** Validates an `input_required` result: `inputRequests` or `requestState` (or both). */
export const InputRequiredResultSchema = v.pipe(
  v.looseObject({
    resultType: v.literal('input_required'),
    inputRequests: v.optional(InputRequestsSchema),
    requestState: v.optional(v.string()),
    _meta: v.optional(Obj),
  }),
  v.check((r) => r.inputRequests !== undefined || r.requestState !== undefined, 'input_required needs inputRequests or requestState'),
);
/** An `input_required` result: what the server needs before it can answer, and the state to bring back. */
export type InputRequiredResult = v.InferOutput<typeof InputRequiredResultSchema>;
