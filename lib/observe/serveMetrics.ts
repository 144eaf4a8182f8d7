/**
 * Prometheus metrics of a wrap, on prom-client, in a registry of the wrap's own: requests by method
 * and outcome, their duration (the conventions' `mcp.server.operation.duration`), waits for an
 * upstream session, upstream sessions opened, closed and failed; and, read from the wrap when
 * scraped, what it holds now (requests, sessions, calls in flight, parked calls, listens, legacy
 * sessions) and the fleet's forwards. Label values are bounded: a method outside the protocol's is
 * `other`, an error code outside the protocol's and ours is `other`.
 */
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import type { Counter, Histogram, Registry } from 'prom-client';
import { ErrorCode } from '../core/errors.ts';
import type { JsonRpcResponse } from '../core/jsonrpc.ts';
import { LEGACY_CLIENT_REQUESTS } from '../core/legacy/methods.ts';
import { MODERN_CLIENT_REQUESTS } from '../core/modern/methods.ts';
import { isRecord } from '../core/primitives.ts';
import { SERVER_DURATION_METRIC } from './conventions.ts';

/** What a wrap holds now, read when the metrics are scraped. */
export interface HeldNow {
  readonly requests: number;
  readonly sessions: number;
  readonly inFlight: number;
  readonly parked: number;
  readonly listens: number;
  readonly legacySessions: number;
}

/** Where the metrics read what is held now, and the fleet's forwards (in a fleet). */
export interface MetricsSource {
  stats(): HeldNow;
  forwards?(): { readonly forwarded: number; readonly ownerGone: number };
}

/** How a request ended, as counted. */
export type Outcome = 'complete' | 'input_required' | 'error' | 'none';

const KNOWN_METHODS: ReadonlySet<string> = new Set([...Object.keys(MODERN_CLIENT_REQUESTS), ...LEGACY_CLIENT_REQUESTS]);
const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode).map(String));

/** The method as a label value: one of the protocol's, else `other`. */
export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'other';
}

/** The outcome and error code of an answer (`undefined`: the client left a listen). */
export function outcomeOf(message: JsonRpcResponse | undefined): { outcome: Outcome; code: string } {
  if (!message) return { outcome: 'none', code: '' };
  if ('error' in message) {
    const code = String(message.error.code);
    return { outcome: 'error', code: KNOWN_CODES.has(code) ? code : 'other' };
  }
  return {
    outcome: isRecord(message.result) && message.result['resultType'] === 'input_required' ? 'input_required' : 'complete',
    code: '',
  };
}

/** The conventions' advice for MCP operation durations (seconds). */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** The metrics of one wrap. */
export class ServeMetrics {
  /** The registry `text()` renders; a program may merge it into its own. */
  readonly registry: Registry;
  readonly #requests: Counter<'method' | 'outcome' | 'error_type'>;
  readonly #duration: Histogram<'mcp_method_name' | 'error_type'>;
  readonly #poolWait: Histogram;
  readonly #opened: Counter;
  readonly #closed: Counter;
  readonly #failed: Counter<'started'>;

  constructor(source: MetricsSource) {
    // Loaded only when metrics are on: a wrap without them does not pay for loading prom-client.
    const { Counter, Gauge, Histogram, Registry } = createRequire(import.meta.url)('prom-client') as typeof PromClient;
    this.registry = new Registry();
    const registers = [this.registry];
    this.#requests = new Counter({
      name: 'mcp_dual_era_requests_total',
      help: 'Requests served, by method, outcome (complete, input_required, error, none) and JSON-RPC error code',
      labelNames: ['method', 'outcome', 'error_type'],
      registers,
    });
    this.#duration = new Histogram({
      name: SERVER_DURATION_METRIC,
      help: 'How long a request took from its arrival to its answer (mcp.server.operation.duration)',
      labelNames: ['mcp_method_name', 'error_type'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#poolWait = new Histogram({
      name: 'mcp_dual_era_session_wait_seconds',
      help: 'How long a request waited for an upstream session (opened for it, or freed by another call)',
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#opened = new Counter({
      name: 'mcp_dual_era_upstream_sessions_opened_total',
      help: 'Upstream sessions opened (a server process started, or an HTTP session initialized)',
      registers,
    });
    this.#closed = new Counter({
      name: 'mcp_dual_era_upstream_sessions_closed_total',
      help: 'Upstream sessions closed (idle, failed, or the server exited)',
      registers,
    });
    this.#failed = new Counter({
      name: 'mcp_dual_era_upstream_failures_total',
      help: 'Upstream sessions that could not be opened; started="false" when the server never started',
      labelNames: ['started'],
      registers,
    });
    const held = (name: string, help: string, read: (now: HeldNow) => number): void => {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(source.stats()));
        },
      });
    };
    held('mcp_dual_era_requests_in_progress', 'Requests being served (an open listen counts)', (s) => s.requests);
    held('mcp_dual_era_upstream_sessions', 'Upstream sessions open', (s) => s.sessions);
    held('mcp_dual_era_upstream_calls_in_flight', 'Calls in flight upstream', (s) => s.inFlight);
    held('mcp_dual_era_parked_calls', 'Calls parked waiting for their input_required retry', (s) => s.parked);
    held('mcp_dual_era_listens', 'subscriptions/listen streams open', (s) => s.listens);
    held('mcp_dual_era_legacy_sessions', 'Legacy client sessions open (clients that sent initialize)', (s) => s.legacySessions);
    if (source.forwards) {
      const forwards = source.forwards.bind(source);
      const counted = (name: string, help: string, read: (c: { forwarded: number; ownerGone: number }) => number): void => {
        new Counter({
          name,
          help,
          registers,
          collect() {
            this.reset();
            this.inc(read(forwards()));
          },
        });
      };
      counted('mcp_dual_era_forwarded_total', 'Requests forwarded to the replica that owns them and answered by it', (c) => c.forwarded);
      counted('mcp_dual_era_owner_gone_total', 'Requests whose owning replica was gone', (c) => c.ownerGone);
    }
  }

  /** Counts a request served, with how long it took (seconds). */
  served(method: string, message: JsonRpcResponse | undefined, seconds: number): void {
    const label = methodLabel(method);
    const { outcome, code } = outcomeOf(message);
    this.#requests.inc({ method: label, outcome, error_type: code });
    this.#duration.observe({ mcp_method_name: label, error_type: code }, seconds);
  }

  /** Counts a wait for an upstream session (seconds). */
  waited(seconds: number): void {
    this.#poolWait.observe(seconds);
  }

  upstreamOpened(): void {
    this.#opened.inc();
  }

  upstreamClosed(): void {
    this.#closed.inc();
  }

  upstreamFailed(started: boolean): void {
    this.#failed.inc({ started: String(started) });
  }

  /** The Prometheus text exposition, and its content type. */
  async text(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
