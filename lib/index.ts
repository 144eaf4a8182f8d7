/**
 * mcp-dual-era: make the legacy (2024-11-05 … 2025-11-25) and modern (2026-07-28) eras of the
 * Model Context Protocol work together. This entry point is runtime-neutral (nothing here reaches
 * `node:*`); Node-only pieces are subpath exports. Every export is listed by name.
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
  MODERN_ERA_START,
  MODERN_VERSIONS,
  type ModernVersion,
  negotiateLegacyVersion,
  newest,
  pickModernVersion,
  TRACE_META_KEYS,
  type VersionInfo,
} from './core/era.ts';
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
  isModernErrorCode,
  methodNotFound,
  missingCapability,
  parseError,
  unsupportedVersion,
  type WireError,
} from './core/errors.ts';
export {
  type Classified,
  classify,
  type ClassifyFailure,
  DEFAULT_MAX_DEPTH,
  describe,
  errorResponse,
  isRequestId,
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
  nestingDepth,
  notification,
  parseMessage,
  request,
  type RequestId,
  RequestIdSchema,
  resultResponse,
  WireErrorSchema,
} from './core/jsonrpc.ts';
export {
  type LegacyClientCapabilities,
  LegacyClientCapabilitiesSchema,
  type LegacyServerCapabilities,
  LegacyServerCapabilitiesSchema,
} from './core/legacy/capabilities.ts';
export {
  type CreateMessageResult,
  CreateMessageResultSchema,
  type ElicitResult,
  ElicitResultSchema,
  type InputMethod,
  isInputMethod,
  LEGACY_INPUT_METHODS,
  LegacyCreateMessageParamsSchema,
  LegacyElicitFormParamsSchema,
  type LegacyElicitParams,
  LegacyElicitParamsSchema,
  LegacyElicitUrlParamsSchema,
  LegacyListRootsParamsSchema,
  type ListRootsResult,
  ListRootsResultSchema,
  RootSchema,
  SamplingMessageSchema,
  UrlElicitationRequiredDataSchema,
} from './core/legacy/inputs.ts';
export {
  type InitializeParams,
  InitializeParamsSchema,
  type InitializeResult,
  InitializeResultSchema,
  type SetLevelParams,
  SetLevelParamsSchema,
} from './core/legacy/lifecycle.ts';
export {
  isRemovedInModern,
  LEGACY_CLIENT_NOTIFICATIONS,
  LEGACY_CLIENT_REQUESTS,
  LEGACY_SERVER_NOTIFICATIONS,
  LEGACY_SERVER_REQUESTS,
  REMOVED_IN_MODERN,
} from './core/legacy/methods.ts';
export {
  LegacyCancelledParamsSchema,
  LIST_CHANGED_NOTIFICATIONS,
  LogMessageParamsSchema,
  type ProgressParams,
  ProgressParamsSchema,
  ResourceUpdatedParamsSchema,
  SubscribeParamsSchema,
} from './core/legacy/notifications.ts';
export {
  LEGACY_RESULT_SCHEMAS,
  type LegacyResultMethod,
  type Tool,
  ToolSchema,
} from './core/legacy/results.ts';
export {
  LegacyCreateTaskResultSchema,
  type LegacyTask,
  LegacyTaskSchema,
  TASK_STATUSES,
} from './core/legacy/tasks.ts';
export {
  type ModernClientCapabilities,
  ModernClientCapabilitiesSchema,
  type ModernServerCapabilities,
  ModernServerCapabilitiesSchema,
  TASKS_EXTENSION,
} from './core/modern/capabilities.ts';
export {
  INPUT_RESPONSE_SCHEMAS,
  type InputRequest,
  type InputRequests,
  InputRequestSchema,
  InputRequestsSchema,
  type InputRequiredResult,
  InputRequiredResultSchema,
  type InputResponses,
  InputResponsesSchema,
  isMrtrMethod,
  ModernElicitFormParamsSchema,
  ModernElicitUrlParamsSchema,
  MRTR_METHODS,
  type MrtrMethod,
} from './core/modern/inputs.ts';
export {
  CACHE_SCOPES,
  type CacheScope,
  CacheScopeSchema,
  type DiscoverResult,
  DiscoverResultSchema,
  type RequestMeta,
  RequestMetaSchema,
  ResultMetaSchema,
} from './core/modern/lifecycle.ts';
export {
  MODERN_CLIENT_REQUESTS,
  MODERN_SERVER_NOTIFICATIONS,
  modernMethod,
  type ModernMethodInfo,
} from './core/modern/methods.ts';
export {
  AcknowledgedParamsSchema,
  ListenParamsSchema,
  ModernCancelledParamsSchema,
  type SubscriptionFilter,
  SubscriptionFilterSchema,
} from './core/modern/notifications.ts';
export {
  CACHEABLE_METHODS,
  type CacheableMethod,
  CacheFieldsSchema,
  CORE_RESULT_TYPES,
  isCacheableMethod,
  ResultTypeSchema,
} from './core/modern/results.ts';
export {
  ModernCreateTaskResultSchema,
  type ModernTask,
  ModernTaskSchema,
} from './core/modern/tasks.ts';
export {
  fail,
  ok,
  type Outcome,
} from './core/outcome.ts';
export {
  type Implementation,
  ImplementationSchema,
  isEmpty,
  isRecord,
  type JsonObject,
  JsonObjectSchema,
  levelRank,
  LOGGING_LEVELS,
  type LoggingLevel,
  LoggingLevelSchema,
  omitKeys,
  type ProgressToken,
  ProgressTokenSchema,
  recordAt,
} from './core/primitives.ts';
export {
  assembleBatch,
  type BatchItem,
  splitBatch,
} from './core/translate/batch.ts';
export {
  clientCapabilitiesToLegacy,
  clientCapabilitiesToModern,
  serverCapabilitiesToLegacy,
  serverCapabilitiesToModern,
} from './core/translate/capabilities.ts';
export {
  ADAPTER_INFO,
  type CacheDefaults,
  type CachePolicy,
  cachePolicyFor,
  NO_CACHING,
  type ToLegacyOptions,
  type ToModernOptions,
} from './core/translate/context.ts';
export {
  discoverToInitializeResult,
  initializeResultToDiscover,
} from './core/translate/discover.ts';
export {
  discoverToInitializeRequest,
  type Envelope,
  type EnvelopeError,
  envelopeToInitializeParams,
  initializeToDiscoverRequest,
  type LegacyRequest,
  type LegacySessionView,
  readEnvelope,
  requestToLegacy,
  requestToModern,
  type RetryInput,
  sessionFromInitialize,
  sessionMeta,
} from './core/translate/envelope.ts';
export {
  errorToLegacy,
  errorToModern,
} from './core/translate/errors.ts';
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
} from './core/translate/headers.ts';
export {
  discoverVerdict,
  type DiscoverVerdict,
  inputFailure,
  refusalToInitializeError,
  unanswerableInputs,
  upstreamErrorToLegacy,
} from './core/translate/legacyClient.ts';
export {
  checkInputCapability,
  defaultInputKey,
  INPUT_KEY_META,
  inputKeyOf,
  inputRequestToPush,
  inputRequiredResult,
  inputRequiredToUrlElicitation,
  inputResponseToResult,
  type KeyedPush,
  legacyClientAllows,
  pushToInputRequest,
  readInputRequired,
  requiredCapabilities,
  resultToInputResponse,
  retryRequest,
  urlElicitationToInputRequired,
} from './core/translate/inputRequests.ts';
export {
  stampServerInfo,
} from './core/translate/meta.ts';
export {
  cancelToLegacy,
  cancelToModern,
  isLegacyOnlyNotification,
  logAllowed,
  logToLegacy,
  logToModern,
  progressToLegacy,
  progressToModern,
} from './core/translate/notifications.ts';
export {
  type InvalidToolAnnotation,
  resultToLegacy,
  resultToModern,
} from './core/translate/results.ts';
export {
  acknowledgement,
  filterAccepts,
  filterToLegacySubscriptions,
  honouredFilter,
  legacySubscriptionsToFilter,
  listenResult,
  notificationFromListen,
  notificationToListen,
  readListenFilter,
  uriMatches,
} from './core/translate/subscriptions.ts';
export {
  createTaskResultToLegacy,
  createTaskResultToModern,
  readLegacyTask,
  taskToLegacy,
  taskToModern,
  toolToModern,
} from './core/translate/tasks.ts';

export {
  DiscoverCache,
  LegacyClientBridge,
  type LegacyClientBridgeEvents,
  type LegacyClientBridgeOptions,
} from './wrap/legacyClient/legacyClientBridge.ts';
export { modernUpstream, type ModernServerTarget, wrapLegacyClient } from './wrap/legacyClient/wrapLegacyClient.ts';
export { ModernHttpUpstream, type ModernHttpUpstreamOptions } from './transport/modernHttpUpstream.ts';
export { ModernPipeUpstream, type ModernUpstream, type UpstreamCallOptions, UpstreamHttpError } from './transport/modernUpstream.ts';
export { createMemoryPair } from './transport/memory.ts';
export type { MessageExtra, Transport } from './transport/transport.ts';
