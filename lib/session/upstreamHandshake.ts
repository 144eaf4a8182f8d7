/**
 * The opening of an upstream session: the pipe started, `initialize` asked within its timeout, what
 * a refusal or a server gone before it answered means, then `notifications/initialized`. Not here:
 * the session's calls and their outcomes (`upstreamSession.ts`).
 */
import { AdapterError } from '../core/errors.ts';
import type { InitializeResult } from '../core/legacy/lifecycle.ts';
import type { JsonObject } from '../core/primitives.ts';
import type { Transport } from '../transport/transport.ts';
import { DEFAULTS } from '../util/defaults.ts';
import { closedReason, failureOf, type UpstreamFailure } from '../util/upstreamFailure.ts';
import type { CallHooks, RpcOutcome, UpstreamSessionOptions } from './callHooks.ts';

/** What the handshake uses of the session it opens. */
export interface Handshaking {
  readonly options: UpstreamSessionOptions;
  /** What the upstream said when the pipe closed under the session, if it did. */
  readonly failure: UpstreamFailure | undefined;
  call(method: string, params: JsonObject | undefined, hooks?: CallHooks): Promise<RpcOutcome>;
  close(): Promise<void>;
}

/**
 * Starts `transport` and performs the handshake of `session` over it; `answered` is given the
 * server's `initialize` result before `notifications/initialized` is sent. A server that is gone
 * before it answered `initialize` fails with `upstream-exited` (it did not start: no retry will
 * help); one that refused it with `upstream-error`. Either way the error carries what the upstream
 * said.
 */
export async function handshake(
  session: Handshaking,
  transport: Transport,
  answered: (result: InitializeResult) => void,
): Promise<InitializeResult> {
  try {
    await transport.start();
  } catch (e) {
    throw e instanceof AdapterError
      ? e
      : new AdapterError('upstream-error', `the upstream server could not be reached: ${e instanceof Error ? e.message : String(e)}`, {
          cause: e,
        });
  }
  const options = session.options;
  const timeout = AbortSignal.timeout(options.initializeTimeoutMs ?? DEFAULTS.initializeTimeoutMs);
  const outcome = await session.call(
    'initialize',
    { protocolVersion: options.protocolVersion, capabilities: options.capabilities, clientInfo: options.clientInfo },
    { signal: timeout },
  );
  if ('error' in outcome) {
    const gone = session.failure !== undefined;
    await session.close();
    if (gone)
      throw new AdapterError('upstream-exited', `it ${closedReason(session.failure, 'before it answered initialize')}`, {
        cause: outcome.error,
        upstream: session.failure,
      });
    const said = outcome.error.message.replace(/^Internal error: /, '');
    throw new AdapterError('upstream-error', `initialize failed: ${said}`, {
      cause: outcome.error,
      upstream: failureOf(outcome.error.data),
    });
  }
  const result = outcome.result as InitializeResult;
  answered(result);
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return result;
}
