/**
 * What the upstream itself said when it could not be reached or refused us: the HTTP status and
 * the start of its body, or the process's exit code or signal and the last lines of its stderr,
 * each bounded. Pure: the transports gather the facts, this shapes them into words and wire data.
 */
import { ErrorCode, type UpstreamFailure, type WireError } from '../core/errors.ts';

export type { UpstreamFailure } from '../core/errors.ts';

/** Most characters of an upstream's body kept in a failure. */
export const BODY_EXCERPT_CHARS = 300;
/** Most characters of a `WWW-Authenticate` challenge kept. */
export const MAX_CHALLENGE_CHARS = 2048;
/** Most stderr lines kept in a failure, and most characters of each. */
export const STDERR_TAIL_LINES = 10;
export const STDERR_LINE_CHARS = 300;

/** The start of a body, whitespace collapsed, at most {@link BODY_EXCERPT_CHARS} characters (with `…` when cut). */
export function bodyExcerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > BODY_EXCERPT_CHARS ? `${flat.slice(0, BODY_EXCERPT_CHARS)}…` : flat;
}

/** Whether a line of stderr names an error (`Error: …`, `TypeError: …`, `error: …`, `panic: …`). */
function namesError(line: string): boolean {
  return /^([A-Z]\w*)?(Error|Exception)\b|^(error|fatal|panic)\b/i.test(line.trim());
}

/**
 * The last non-blank lines of `text`, at most {@link STDERR_TAIL_LINES}, each at most
 * {@link STDERR_LINE_CHARS} characters. When none of them names an error but an earlier line
 * does (a stack trace longer than the tail: Node 24 prints more frames and its version after it),
 * the last such line is kept in place of the oldest.
 */
export function stderrTail(text: string): string[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  let tail = lines.slice(-STDERR_TAIL_LINES);
  if (lines.length > tail.length && !tail.some(namesError)) {
    for (let i = lines.length - tail.length - 1; i >= 0; i--) {
      if (!namesError(lines[i]!)) continue;
      tail = [lines[i]!, ...tail.slice(1)];
      break;
    }
  }
  return tail.map((l) => (l.length > STDERR_LINE_CHARS ? `${l.slice(0, STDERR_LINE_CHARS)}…` : l));
}

/**
 * The line of a stderr tail that says most: the last that names an error (`Error: …`,
 * `TypeError: …`, `error: …`), else the last line.
 */
export function telling(stderr: readonly string[]): string | undefined {
  for (let i = stderr.length - 1; i >= 0; i--) {
    const line = stderr[i]!.trim();
    if (namesError(line)) return line;
  }
  const last = stderr[stderr.length - 1];
  return last === undefined ? undefined : last.trim();
}

/**
 * A failure in words, for a sentence about the upstream, with `when` after the verb: `exited with
 * code 1 before it answered initialize: Error: Cannot find module '/x.js'`, `was ended by SIGKILL`,
 * `answered HTTP 500: database is down`; `undefined` when it holds nothing to say.
 */
export function describeFailure(failure: UpstreamFailure, when?: string): string | undefined {
  const at = when ? ` ${when}` : '';
  if (failure.exitCode !== undefined || failure.signal !== undefined) {
    const said = failure.stderr ? telling(failure.stderr) : undefined;
    const how = failure.signal !== undefined ? `was ended by ${failure.signal}` : `exited with code ${failure.exitCode}`;
    return `${how}${at}${said ? `: ${said}` : ''}`;
  }
  if (failure.httpStatus !== undefined) return `answered HTTP ${failure.httpStatus}${at}${failure.body ? `: ${failure.body}` : ''}`;
  if (failure.network !== undefined) return `could not be reached${at} (${failure.network})`;
  return undefined;
}

/** The words for a pipe that closed under us: what the upstream said, if it said anything. */
export function closedReason(failure: UpstreamFailure | undefined, when?: string): string {
  const said = failure ? describeFailure(failure, when) : undefined;
  return said ?? `closed the connection${when ? ` ${when}` : ''}`;
}

/**
 * The error a client gets when the upstream is unavailable: `detail` says what happened, the
 * failure's facts travel in `data` (`httpStatus`, `body`, `exitCode`, `signal`, `stderr`, `network`).
 */
export function upstreamUnavailable(detail: string, failure?: UpstreamFailure): WireError {
  const message = `Internal error: the upstream server is unavailable: ${detail}`;
  if (!failure || Object.keys(failure).length === 0) return { code: ErrorCode.InternalError, message };
  return { code: ErrorCode.InternalError, message, data: { ...failure } };
}

/** Reads a failure back from the `data` of an error (what {@link upstreamUnavailable} and the HTTP transport put there). */
export function failureOf(data: unknown): UpstreamFailure | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const d = data as Record<string, unknown>;
  const out: { -readonly [K in keyof UpstreamFailure]: UpstreamFailure[K] } = {};
  if (typeof d['httpStatus'] === 'number') out.httpStatus = d['httpStatus'];
  if (typeof d['body'] === 'string') out.body = bodyExcerpt(d['body']);
  if (typeof d['challenge'] === 'string') out.challenge = d['challenge'].slice(0, MAX_CHALLENGE_CHARS);
  if (typeof d['exitCode'] === 'number') out.exitCode = d['exitCode'];
  if (typeof d['signal'] === 'string') out.signal = d['signal'];
  if (Array.isArray(d['stderr'])) out.stderr = stderrTail(d['stderr'].filter((l): l is string => typeof l === 'string').join('\n'));
  if (typeof d['network'] === 'string') out.network = d['network'].slice(0, BODY_EXCERPT_CHARS);
  return Object.keys(out).length > 0 ? out : undefined;
}
