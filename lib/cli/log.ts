/**
 * What a running command says on stderr, in one of two formats: `human` (the default: a line of
 * text per event, `--verbose` messages as `from → to {json}`) or `json` (`--log-format json`: one
 * JSON object per line, written by pino: `level`, `time`, `pid`, `msg`, the event's own fields, and
 * `trace_id` on every line about a message that belongs to a trace). The upstream server's own
 * stderr is passed through as it is in `human`, and as one object a line (`source: "server"`) in `json`.
 */
import type { Logger } from 'pino';
import { isRecord } from '../core/primitives.ts';
import { traceIdOf } from '../observe/traceContext.ts';
import { stderrTrace, type Trace } from './trace.ts';

export type LogFormat = 'human' | 'json';

/** Where a command's events go. */
export interface Log {
  /** Something the operator should know (serving, upstream started, draining). Silent with `--quiet`. */
  info(message: string, fields?: Readonly<Record<string, unknown>>): void;
  /** Something that failed (the upstream, the port, the fleet). Said even with `--quiet`. */
  error(message: string, fields?: Readonly<Record<string, unknown>>): void;
  /** With `--verbose`: every message crossing, labelled with who sent it to whom. */
  readonly trace: Trace | undefined;
  /** Where the upstream server's stderr goes. */
  readonly serverStderr: 'inherit' | ((chunk: string) => void);
}

export interface LogOptions {
  readonly format: LogFormat;
  readonly quiet?: boolean | undefined;
  readonly verbose?: boolean | undefined;
  /** Where lines go (default: our stderr). */
  readonly out?: NodeJS.WriteStream | undefined;
}

/** Reads `--log-format`. */
export function readLogFormat(value: string | undefined): { ok: true; value: LogFormat } | { ok: false; message: string } {
  if (value === undefined || value === 'human') return { ok: true, value: 'human' };
  if (value === 'json') return { ok: true, value: 'json' };
  return { ok: false, message: `--log-format is human or json, not ${value}` };
}

/** The log a command writes, in `options.format` (pino is loaded only for `json`). */
export async function createLog(options: LogOptions): Promise<Log> {
  if (options.format !== 'json') return humanLog(options);
  return jsonLog(options, await import('pino'));
}

function humanLog(options: LogOptions): Log {
  const out = options.out ?? process.stderr;
  return {
    info: (message) => {
      if (!options.quiet) out.write(`${message}\n`);
    },
    error: (message) => {
      out.write(`${message}\n`);
    },
    trace: options.verbose ? stderrTrace(out) : undefined,
    serverStderr: 'inherit',
  };
}

/** Most requests whose trace id is remembered until their answer passes (the oldest is forgotten first). */
const REMEMBERED_TRACES = 1024;

/**
 * The trace id of each message shown: a request's from its `_meta.traceparent` (or, without one
 * there, the `traceparent` it came with, an HTTP header), an answer's from the request it answers
 * (remembered by the pair of parties and the id, a bounded number of them).
 */
class TraceIds {
  readonly #byRequest = new Map<string, string>();

  of(from: string, to: string, message: unknown, carried?: string): string | undefined {
    if (!isRecord(message)) return undefined;
    const id = message['id'];
    const own = () =>
      (isRecord(message['params']) ? metaTrace(message['params']) : undefined) ?? (carried === undefined ? undefined : traceIdOf(carried));
    if (typeof id !== 'string' && typeof id !== 'number') return own();
    if ('method' in message) {
      const traceId = own();
      if (traceId !== undefined) {
        this.#byRequest.set(`${from}\u0000${to}\u0000${id}`, traceId);
        if (this.#byRequest.size > REMEMBERED_TRACES) this.#byRequest.delete(this.#byRequest.keys().next().value!);
      }
      return traceId;
    }
    // An answer goes the other way.
    const key = `${to}\u0000${from}\u0000${id}`;
    const traceId = this.#byRequest.get(key);
    if (traceId !== undefined) this.#byRequest.delete(key);
    return traceId;
  }
}

function metaTrace(params: Record<string, unknown>): string | undefined {
  const meta = params['_meta'];
  return isRecord(meta) && typeof meta['traceparent'] === 'string' ? traceIdOf(meta['traceparent']) : undefined;
}

function jsonLog(
  options: LogOptions,
  { pino, stdTimeFunctions, destination }: Pick<typeof import('pino'), 'pino' | 'stdTimeFunctions' | 'destination'>,
): Log {
  const logger: Logger = pino(
    {
      level: options.verbose ? 'debug' : options.quiet ? 'error' : 'info',
      base: { pid: process.pid },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    // Written as it happens: a line is not lost when the process exits right after it.
    options.out ?? destination({ dest: 2, sync: true }),
  );
  const ids = new TraceIds();
  // The server's own lines are shown as they are in the human format (--quiet does not hide them).
  const server = logger.child({ source: 'server' }, { level: 'info' });
  const trace: Trace | undefined = options.verbose
    ? (from, to, message, carried) => {
        const traceId = ids.of(from, to, message, carried?.traceparent);
        logger.debug({ from, to, message, ...(traceId !== undefined ? { trace_id: traceId } : {}) }, `${from} → ${to}`);
      }
    : undefined;
  return {
    info: (message, fields) => logger.info(fields ?? {}, message),
    error: (message, fields) => logger.error(fields ?? {}, message),
    trace,
    serverStderr: (chunk) => {
      for (const line of chunk.split('\n')) if (line.trim() !== '') server.info(line);
    },
  };
}
