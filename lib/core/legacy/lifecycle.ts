/**
 * Legacy lifecycle messages: `initialize` (params and result). `notifications/initialized`,
 * `ping` and `logging/setLevel` have no payload worth a schema beyond `SetLevelParamsSchema`.
 */
import * as v from 'valibot';
import { ImplementationSchema, LoggingLevelSchema } from '../primitives.ts';
import { LegacyClientCapabilitiesSchema, LegacyServerCapabilitiesSchema } from './capabilities.ts';

/** Validates the params of a legacy `initialize` request. */
export const InitializeParamsSchema = v.looseObject({
  protocolVersion: v.string(),
  capabilities: LegacyClientCapabilitiesSchema,
  clientInfo: ImplementationSchema,
  _meta: v.optional(v.record(v.string(), v.unknown())),
});
/** The params of a legacy `initialize` request: version, client info, capabilities. */
export type InitializeParams = v.InferOutput<typeof InitializeParamsSchema>;

/** Validates a legacy server's `initialize` result. */
export const InitializeResultSchema = v.looseObject({
  protocolVersion: v.string(),
  capabilities: LegacyServerCapabilitiesSchema,
  serverInfo: ImplementationSchema,
  instructions: v.optional(v.string()),
  _meta: v.optional(v.record(v.string(), v.unknown())),
});
/** A legacy server's `initialize` result: version, server info, capabilities, instructions. */
export type InitializeResult = v.InferOutput<typeof InitializeResultSchema>;

export const SetLevelParamsSchema = v.looseObject({ level: LoggingLevelSchema });
export type SetLevelParams = v.InferOutput<typeof SetLevelParamsSchema>;
