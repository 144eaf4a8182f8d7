/**
 * The opening of one upstream session for a pool's key: the backend connected with the key's
 * credentials, the session's hooks wired to the pool's, the handshake retried with backoff unless
 * retrying cannot help. Not here: when a session is opened, and the room it takes (`pool.ts`).
 */
import { AdapterError } from '../core/errors.ts';
import type { JsonRpcRequest } from '../core/jsonrpc.ts';
import { DEFAULTS } from '../util/defaults.ts';
import { GiveUp, retry } from '../util/retry.ts';
import type { Backend } from './backend.ts';
import type { SessionPoolOptions } from './poolOptions.ts';
import type { PushCopies } from './pushCopies.ts';
import type { SessionKey } from './sessionKey.ts';
import { UpstreamSession } from './upstreamSession.ts';

/** What opening a session uses of its pool, and tells it. */
export interface OpeningPool {
  readonly backend: Backend;
  readonly options: SessionPoolOptions;
  /** Shared by the sessions of an HTTP upstream (see `PushCopies`). */
  readonly copies: PushCopies | undefined;
  readonly closed: () => boolean;
  /** `session`, opened for `key`, closed: the pool lets go of it. */
  readonly lost: (key: SessionKey, session: UpstreamSession) => void;
  /** Something happened that may make a session free or room for one. */
  readonly wake: () => void;
  /** `session` was opened (told before `SessionPoolOptions.onSessionOpened`). */
  readonly opened: (session: UpstreamSession) => void;
}

/**
 * An open session for `key`, after as many attempts as the pool allows. A failure is told through
 * `onOpenFailed` (unless the pool closed meanwhile) and thrown; a session opened once the pool has
 * closed is closed again, and refused.
 */
export async function openSession(pool: OpeningPool, key: SessionKey): Promise<UpstreamSession> {
  const { backend, options } = pool;
  const open = async (): Promise<UpstreamSession> => {
    if (pool.closed()) throw new GiveUp('the session pool is closed');
    const authorization = key.authorization;
    const transport = await backend.connect(authorization === undefined ? undefined : { authorization: () => authorization });
    const session: UpstreamSession = new UpstreamSession(transport, {
      clientInfo: key.clientInfo,
      capabilities: key.capabilities,
      protocolVersion: options.protocolVersion ?? '2025-11-25',
      ...(pool.copies ? { copies: pool.copies } : {}),
      ...(options.onUnrelatedPush ? { onUnrelatedPush: (push: JsonRpcRequest) => options.onUnrelatedPush!(key, push, session) } : {}),
      ...(options.awaitsCall ? { awaitsCall: (push: JsonRpcRequest) => options.awaitsCall!(key, push) } : {}),
      onNotification: (method, params) => options.onNotification?.(key, session, method, params),
      onClose: (reason) => {
        options.onSessionClosed?.(key, reason);
        pool.lost(key, session);
      },
      onPushableEnd: () => pool.wake(),
      onIdle: () => pool.wake(),
    });
    try {
      await session.open();
    } catch (e) {
      await session.close();
      // A server that is gone before it answered initialize did not start: starting it again
      // would only fail again (and print its failure again).
      if (e instanceof AdapterError && e.code === 'upstream-exited') throw new GiveUp(e);
      // Nor is one that refused the caller's credentials (401, 403): the same credentials would be
      // refused again, and each attempt costs the server a refused initialize.
      const status = e instanceof AdapterError ? e.upstream?.httpStatus : undefined;
      if (status === 401 || status === 403) throw new GiveUp(e as AdapterError);
      throw e;
    }
    session.touch(Date.now());
    pool.opened(session);
    options.onSessionOpened?.(key, session);
    return session;
  };
  let session: UpstreamSession;
  try {
    session = await retry(open, { retries: Math.max(0, (options.openAttempts ?? DEFAULTS.openAttempts) - 1) });
  } catch (e) {
    if (!pool.closed()) options.onOpenFailed?.(key, e);
    throw e;
  }
  if (pool.closed()) {
    await session.close();
    throw new AdapterError('closed', 'the session pool is closed');
  }
  return session;
}
