/**
 * The pure translator between the legacy era (2024-11-05 … 2025-11-25) and the modern era
 * (2026-07-28): one concept per file, re-exported here.
 */
export { ADAPTER_INFO, NO_CACHING, cachePolicyFor, type CacheDefaults, type CachePolicy, type ToLegacyOptions, type ToModernOptions } from './context.ts';
export { clientCapabilitiesToLegacy, clientCapabilitiesToModern, serverCapabilitiesToLegacy, serverCapabilitiesToModern } from './capabilities.ts';
export {
  discoverToInitializeRequest,
  envelopeToInitializeParams,
  initializeToDiscoverRequest,
  readEnvelope,
  requestToLegacy,
  requestToModern,
  sessionFromInitialize,
  sessionMeta,
  type Envelope,
  type EnvelopeError,
  type LegacyRequest,
  type LegacySessionView,
  type RetryInput,
} from './envelope.ts';
export { discoverToInitializeResult, initializeResultToDiscover } from './discover.ts';
export { stampServerInfo } from './meta.ts';
export { resultToLegacy, resultToModern, type InvalidToolAnnotation } from './results.ts';
export { errorToLegacy, errorToModern } from './errors.ts';
export {
  INPUT_KEY_META,
  checkInputCapability,
  defaultInputKey,
  inputKeyOf,
  inputRequestToPush,
  inputRequiredResult,
  inputRequiredToUrlElicitation,
  inputResponseToResult,
  legacyClientAllows,
  pushToInputRequest,
  readInputRequired,
  requiredCapabilities,
  resultToInputResponse,
  retryRequest,
  urlElicitationToInputRequired,
  type KeyedPush,
} from './inputRequests.ts';
export { cancelToLegacy, cancelToModern, isLegacyOnlyNotification, logAllowed, logToLegacy, logToModern, progressToLegacy, progressToModern } from './notifications.ts';
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
} from './subscriptions.ts';
export { HEADER, computeHeaders, decodeHeaderValue, encodeHeaderValue, paramHeaders, verifyHeaders, type HeaderLookup, type ParamHeader, type ToolHeaderInfo } from './headers.ts';
export { assembleBatch, splitBatch, type BatchItem } from './batch.ts';
export { inputFailure, refusalToInitializeError, unanswerableInputs, upstreamErrorToLegacy } from './legacyClient.ts';
export { createTaskResultToLegacy, createTaskResultToModern, readLegacyTask, taskToLegacy, taskToModern, toolToModern } from './tasks.ts';
