/**
 * What both MRTR modes answer when the server pushes a request the client did not declare the
 * capability for: the client gets `-32021` (HTTP 400) naming the capability, the push gets an
 * error upstream. Not here: the capability check itself (`core/translate/inputRequests.ts`).
 */
import { ErrorCode, type WireError } from '../../core/errors.ts';
import type { RequestId } from '../../core/jsonrpc.ts';
import type { RpcOutcome } from '../../session/callHooks.ts';
import { errorAnswer, type Answer } from '../../fronts/served.ts';

/** The client's answer: the `-32021` of the capability check, with HTTP status 400. */
export function missingCapabilityAnswer(id: RequestId, error: WireError): Answer {
  return errorAnswer(id, { ...error, status: 400 });
}

/** What the push itself is answered with upstream. */
export function missingCapabilityOutcome(method: string): RpcOutcome {
  return { error: { code: ErrorCode.InternalError, message: `The client did not declare the capability ${method} needs` } };
}
