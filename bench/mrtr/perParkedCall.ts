/**
 * What one parked call costs, from a run through the wrap and a run of the server alone. A parked
 * call holds an upstream session of its own; the sessions stay open, idle, after resuming, which
 * tells the session's share from the parked call's:
 *
 *   total           = (heap parked − baseline) / N          wrap and in-process servers
 *   wrap alone      = total − server alone (suspended)
 *   session         = (heap resumed − baseline) / N − server alone (finished)
 *   parked call     = wrap alone − session
 *   beyond messages = parked call − original params         (in process the pushed request is the
 *                                                             server's own object, counted in the
 *                                                             server alone)
 */
import type { ServerMemoryResult } from './serverMemory.ts';
import type { WrapMemoryResult } from './wrapMemory.ts';

import type { PerParkedCall } from '../report/types.ts';

/** The per-call figures of `w`; without the server alone, only the totals. */
export function perParkedCall(w: WrapMemoryResult, s: ServerMemoryResult | undefined): PerParkedCall {
  const total = (w.parked.heapUsed - w.baseline.heapUsed) / w.n;
  const rss = (w.parked.rss - w.baseline.rss) / w.n;
  const idle = (w.resumed.heapUsed - w.baseline.heapUsed) / w.n;
  if (!s) return { total, rss, idle };
  const wrapAlone = total - s.serverPerSuspended;
  const session = idle - s.serverPerFinished;
  const call = wrapAlone - session;
  return {
    total,
    rss,
    idle,
    wrapAlone,
    session,
    call,
    beyond: call - s.paramsHeapPerCopy,
    beyondWithSession: wrapAlone - s.paramsHeapPerCopy,
  };
}
