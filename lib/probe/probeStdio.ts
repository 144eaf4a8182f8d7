/**
 * The probe of a stdio server: `server/discover` on the process it spawned (a server still
 * starting is waited for, and also sent `initialize`), read by the era verdict; the process can be
 * handed over, so nothing is spawned twice.
 */
import { LATEST_LEGACY_VERSION, type ModernVersion } from '../core/era.ts';
import { AdapterError } from '../core/errors.ts';
import { classify, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import { StdioChildTransport, type StdioChildOptions } from '../transport/stdioChild.ts';
import { eraOfDiscoverAnswer, type DiscoverAnswer, type EraVerdict } from '../core/verdict.ts';
import { type Verdict } from './verdictCache.ts';
import { DEFAULTS } from '../util/defaults.ts';
import { startupTimer, waitingReason } from './startupTimer.ts';

import { discoverRequest, legacyInitializeRequest, probeId } from './probeRequests.ts';
import type { ProbeOptions, ProbeResult } from './probeTypes.ts';

type Heard =
  | { kind: 'answer'; message: JsonRpcMessage; to: 'discover' | 'initialize' }
  | { kind: 'exit' }
  | { kind: 'timeout' }
  | { kind: 'silent' }
  | { kind: 'aborted' };

/** What the stdio probe heard, as the era verdict reads it. */
function heardAnswer(heard: Exclude<Heard, { kind: 'aborted' }>, timeoutMs: number, startMs: number): DiscoverAnswer {
  switch (heard.kind) {
    case 'silent':
      return { kind: 'silence', spoken: false, ms: startMs };
    case 'timeout':
      return { kind: 'silence', spoken: true, ms: timeoutMs };
    case 'exit':
      return { kind: 'exit' };
    case 'answer': {
      if (heard.to === 'initialize') return { kind: 'other', what: 'the server answered initialize, and not server/discover' };
      const c = classify(heard.message);
      if (c.ok && c.value.kind === 'result') return { kind: 'result', result: c.value.message.result };
      if (c.ok && c.value.kind === 'error') return { kind: 'error', error: c.value.message.error };
      return { kind: 'other', what: 'the answer to server/discover is not JSON-RPC' };
    }
  }
}

export async function probeStdio(
  target: StdioChildOptions,
  name: string,
  options: ProbeOptions,
  versions: readonly ModernVersion[],
): Promise<ProbeResult> {
  const child = new StdioChildTransport(target);
  let exited = false;
  let waiting: { ids: Map<RequestId, 'discover' | 'initialize'>; settle: (heard: Heard) => void } | undefined;
  child.onexit = () => {
    exited = true;
    waiting?.settle({ kind: 'exit' });
  };
  child.onmessage = (message) => {
    const to = waiting && 'id' in message && !('method' in message) ? waiting.ids.get(message.id as RequestId) : undefined;
    // `initialize` refused says nothing of the era (a modern server refuses it): server/discover's answer will.
    if (to === 'initialize' && 'error' in message) return;
    if (to) waiting!.settle({ kind: 'answer', message, to });
  };
  child.onerror = () => {};
  await child.start();
  const started = Date.now();
  // A process started ahead may have exited before the probe came to it.
  if (!child.running) exited = true;
  const timeoutMs = options.timeoutMs ?? DEFAULTS.probeTimeoutMs;
  const startMs = Math.max(timeoutMs, options.startTimeoutMs ?? DEFAULTS.probeStartMs);
  /** Whether the probe sent `initialize` too (to a server silent past the bound): its process is then not handed on. */
  let initializeSent = false;
  /**
   * Asks `request` and waits for its answer. A server silent past `timeoutMs` that has not said a
   * word yet is still starting, not a verdict: it is also sent `initialize` (whichever it answers
   * tells its era; a legacy server that ignores `server/discover` answers that) and waited for,
   * saying so, until it speaks or `startMs` have passed since it was started.
   */
  const ask = (request: JsonRpcRequest): Promise<Heard> =>
    new Promise<Heard>((resolve) => {
      if (exited) return resolve({ kind: 'exit' });
      const cancel = startupTimer(
        child,
        { timeoutMs, startMs, startedAt: started },
        {
          waiting: (waited) => {
            if (!initializeSent) {
              initializeSent = true;
              const id = probeId();
              waiting?.ids.set(id, 'initialize');
              options.events?.emit('probe', { target: name, method: 'initialize', attempt: 1, version: LATEST_LEGACY_VERSION });
              child.send(legacyInitializeRequest(id, options)).catch(() => settle({ kind: 'exit' }));
            }
            options.events?.emit('waiting', {
              target: name,
              waitedMs: waited,
              reason: waitingReason(waited, startMs, ', its first answer tells its era'),
            });
          },
          expired: (silent) => settle({ kind: silent ? 'silent' : 'timeout' }),
        },
      );
      const onAbort = () => settle({ kind: 'aborted' });
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const settle = (heard: Heard) => {
        cancel();
        options.signal?.removeEventListener('abort', onAbort);
        waiting = undefined;
        resolve(heard);
      };
      waiting = { ids: new Map([[request.id, 'discover']]), settle };
      child.send(request).catch(() => settle({ kind: 'exit' }));
    });

  let version = versions[0]!;
  let retried = false;
  let roundTrips = 0;
  let reading: EraVerdict;
  try {
    for (;;) {
      const id = probeId();
      options.events?.emit('probe', { target: name, method: 'server/discover', attempt: roundTrips + 1, version });
      const heard = await ask(discoverRequest(id, version, options));
      roundTrips++;
      if (heard.kind === 'aborted') throw new AdapterError('cancelled', 'the probe was cancelled');
      reading = eraOfDiscoverAnswer(heardAnswer(heard, timeoutMs, startMs), { sent: version, ours: versions, retried });
      if (reading.era === 'unknown') throw new AdapterError('upstream-error', reading.reason);
      if (reading.era !== 'retry') break;
      retried = true;
      version = reading.version;
    }
  } catch (e) {
    await child.close().catch(() => {});
    throw e;
  }
  // Whatever the process says about the probe from now on (a late answer) is dropped.
  child.onmessage = undefined;
  waiting = undefined;
  const verdict: Verdict =
    reading.era === 'modern'
      ? { era: 'modern', version: reading.version, ...(reading.discover ? { discover: reading.discover } : {}) }
      : { era: 'legacy' };
  if (reading.era === 'legacy' || reading.era === 'unshared')
    options.events?.emit('fallback', { target: name, from: 'modern', to: 'legacy', reason: reading.reason });
  // A legacy server the probe sent `initialize` is not handed on: its session would begin twice.
  if (!options.keepProcess || exited || (initializeSent && verdict.era === 'legacy')) {
    await child.close().catch(() => {});
    return { verdict, source: 'probe', roundTrips };
  }
  return { verdict, source: 'probe', roundTrips, process: child };
}
