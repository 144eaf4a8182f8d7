/**
 * `mcp-dual-era/core`: the pure core on its own subpath — the translator between the legacy era
 * (2024-11-05 … 2025-11-25) and the modern era (2026-07-28), and the vocabulary its callers need
 * (revisions, JSON-RPC messages, the error table, the message types of both eras with their valibot
 * schemas). Every export is listed by name; helpers the library uses inside stay in their modules.
 * No I/O, clock, randomness or timers are reachable from here.
 */
export {
  claimedEra,
  type ClaimedEra,
  classifyVersion,
  type Era,
  isLegacyVersion,
  isModernVersion,
  type KnownVersion,
  LATEST_LEGACY_VERSION,
  LATEST_MODERN_VERSION,
  LEGACY_VERSIONS,
  type LegacyVersion,
  MetaKey,
  MODERN_VERSIONS,
  type ModernVersion,
  negotiateLegacyVersion,
  type VersionInfo,
} from './era.ts';
export {
  AdapterError,
  type AdapterErrorCode,
  ErrorCode,
  type ErrorCodeName,
  headerMismatch,
  httpStatusForError,
  internalError,
  invalidParams,
  invalidRequest,
  methodNotFound,
  missingCapability,
  parseError,
  unsupportedVersion,
  type WireError,
} from './errors.ts';
export { fail, ok, type Outcome } from './outcome.ts';
export {
  type Implementation,
  ImplementationSchema,
  type JsonObject,
  LOGGING_LEVELS,
  type LoggingLevel,
  LoggingLevelSchema,
  type ProgressToken,
} from './primitives.ts';
export {
  type Classified,
  classify,
  type ClassifyFailure,
  errorResponse,
  type JsonRpcError,
  JsonRpcErrorSchema,
  type JsonRpcMessage,
  type JsonRpcNotification,
  JsonRpcNotificationSchema,
  type JsonRpcRequest,
  JsonRpcRequestSchema,
  type JsonRpcResponse,
  type JsonRpcResult,
  JsonRpcResultSchema,
  notification,
  parseMessage,
  request,
  type RequestId,
  resultResponse,
} from './jsonrpc.ts';
export {
  type LegacyClientCapabilities,
  LegacyClientCapabilitiesSchema,
  type LegacyServerCapabilities,
  LegacyServerCapabilitiesSchema,
} from './legacy/capabilities.ts';
export { type InitializeParams, InitializeParamsSchema, type InitializeResult, InitializeResultSchema } from './legacy/lifecycle.ts';
export { type InputMethod, LEGACY_INPUT_METHODS } from './legacy/inputs.ts';
export {
  type ModernClientCapabilities,
  ModernClientCapabilitiesSchema,
  type ModernServerCapabilities,
  ModernServerCapabilitiesSchema,
} from './modern/capabilities.ts';
export { type CacheScope, type DiscoverResult, DiscoverResultSchema, type RequestMeta, RequestMetaSchema } from './modern/lifecycle.ts';
export {
  type InputRequest,
  type InputRequests,
  InputRequestSchema,
  InputRequestsSchema,
  type InputRequiredResult,
  InputRequiredResultSchema,
  type InputResponses,
  InputResponsesSchema,
} from './modern/inputs.ts';
export {
  CACHEABLE_METHODS,
  type CacheableMethod,
  isCacheableMethod,
  isMrtrMethod,
  MRTR_METHODS,
  type MrtrMethod,
} from './modern/methods.ts';
export { type SubscriptionFilter, SubscriptionFilterSchema } from './modern/notifications.ts';
export { assembleBatch, type BatchItem, splitBatch } from './translate/batch.ts';
export {
  clientCapabilitiesToLegacy,
  clientCapabilitiesToModern,
  type RootsDeclaration,
  serverCapabilitiesToLegacy,
  serverCapabilitiesToModern,
} from './translate/capabilities.ts';
export { type CacheDefaults, type CachePolicy, type ToLegacyOptions, type ToModernOptions } from './translate/context.ts';
export { discoverToInitializeResult, initializeResultToDiscover } from './translate/discover.ts';
export {
  discoverToInitializeRequest,
  type Envelope,
  type EnvelopeError,
  initializeToDiscoverRequest,
  type LegacyRequest,
  type LegacySessionView,
  readEnvelope,
  requestToLegacy,
  requestToModern,
  type RetryInput,
  sessionFromInitialize,
} from './translate/envelope.ts';
export { errorToLegacy, errorToModern } from './translate/errors.ts';
export {
  computeHeaders,
  decodeHeaderValue,
  encodeHeaderValue,
  HEADER,
  type HeaderLookup,
  type ParamHeader,
  paramHeaders,
  type ToolHeaderInfo,
  verifyHeaders,
} from './translate/headers.ts';
export {
  checkInputCapability,
  INPUT_KEY_META,
  inputKeyOf,
  inputRequestToPush,
  inputRequiredResult,
  inputRequiredToUrlElicitation,
  inputResponseToResult,
  type KeyedPush,
  pushToInputRequest,
  readInputRequired,
  resultToInputResponse,
  retryRequest,
  urlElicitationToInputRequired,
} from './translate/inputRequests.ts';
export {
  cancelToLegacy,
  cancelToModern,
  isLegacyOnlyNotification,
  logToLegacy,
  logToModern,
  progressToLegacy,
  progressToModern,
} from './translate/notifications.ts';
export { type InvalidToolAnnotation, resultToLegacy, resultToModern } from './translate/results.ts';
export {
  acknowledgement,
  filterToLegacySubscriptions,
  honouredFilter,
  legacySubscriptionsToFilter,
  listenResult,
  notificationFromListen,
  notificationToListen,
} from './translate/subscriptions.ts';
export { createTaskResultToLegacy, createTaskResultToModern } from './translate/tasks.ts';
