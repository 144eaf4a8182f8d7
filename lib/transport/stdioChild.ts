/**
 * A child process spoken to over stdio (newline-delimited JSON-RPC): spawn, frame, and shut down
 * the way the spec asks (close stdin, wait, SIGTERM, then SIGKILL). Lines that are not JSON, nest
 * deeper than the decoding bound or are longer than `maxMessageBytes`, are reported through
 * `onerror` and skipped (an answer among them becomes an error for its request); the pipe stays
 * usable. The end of its stderr is kept, so that a process that dies is reported with its exit
 * code and its last words (`failure`).
 */
import type { ChildProcess } from 'node:child_process';
import { AdapterError, internalError } from '../core/errors.ts';
import { stderrTail, type UpstreamFailure } from '../util/upstreamFailure.ts';
import { DEFAULT_MAX_DEPTH, errorResponse, isRequestId, nestedBeyond, type JsonRpcMessage } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import { frame, LineFramer } from './lineFramer.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, responseIdOf, tooLargeDetail } from './messageBound.ts';
import { spawnChild, takeAhead, type ChildCommand } from './spawnChild.ts';
import { turnBatcher, type TurnWrite } from './turnBatcher.ts';
import { SENT, type SendOptions, type Transport } from './transport.ts';

/** A server program to start and talk to over its stdin/stdout. */
export interface StdioChildOptions extends ChildCommand {
  /**
   * Where the child's stderr goes: passed through to ours (default), nowhere, or to a callback.
   * Passed through, what it writes before it first speaks on stdout is held back (up to 16 KiB):
   * a process that dies before it ever answered is reported once, through `failure`, not by its
   * stack trace on our stderr.
   */
  readonly stderr?: 'inherit' | 'ignore' | ((chunk: string) => void);
  /** How long to wait after closing stdin before SIGTERM, and after SIGTERM before SIGKILL. */
  readonly shutdownGraceMs?: number;
  /** Sees every message sent to the child and received from it (for logging). */
  readonly trace?: (direction: 'sent' | 'received', message: unknown) => void;
  /**
   * The longest line read from the child (default `DEFAULT_MAX_MESSAGE_BYTES`, 16 MiB; counted in
   * characters). A longer one is skipped and reported; an answer among them is answered with -32603.
   */
  readonly maxMessageBytes?: number;
}

/** The id of the `ping` that tells a process started ahead has booted (see `warm`). */
const WARM_ID = 'mcp-dual-era/warm';

/** How much of the end of a child's stderr is kept for `failure`. */
const STDERR_KEPT = 8 * 1024;
/** How much stderr a passed-through child may write before it first speaks, held back meanwhile. */
const STDERR_HELD = 16 * 1024;
/** How long an exited child's stderr may take to reach its end before the pipe is reported closed. */
const STDERR_DRAIN_MS = 100;

/** Children still running, stopped when this process exits however it exits short of SIGKILL. */
const live = new Set<ChildProcess>();
let reaping = false;

function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (reaping) return;
  reaping = true;
  process.once('exit', () => {
    for (const running of live) running.kill('SIGTERM');
  });
}

/** What a send to a process that is gone is refused with. */
function notRunning(): AdapterError {
  return new AdapterError('closed', 'the server process is not running');
}

/** A `Transport` over a spawned process's stdin/stdout. */
export class StdioChildTransport implements Transport {
  /** One pipe each way: messages come in the order the process wrote them. */
  readonly ordered = true;
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  /** Called once when the process exits, with its code or signal. */
  onexit?: ((code: number | null, signal: NodeJS.Signals | null) => void) | undefined;
  readonly options: StdioChildOptions;
  #child: ChildProcess | undefined;
  #closed = false;
  /** Writes to the child's stdin, batched per turn of the event loop (set once started). */
  #write: TurnWrite | undefined;
  #exited: Promise<void> | undefined;
  #prestarted: Promise<void> | undefined;
  /** Set while `warm` waits for its ping's answer. */
  #warmed: (() => void) | undefined;
  /** The end of what the child wrote to stderr (at most `STDERR_KEPT` characters). */
  #stderrEnd = '';
  /** Passed-through stderr held until the child first speaks on stdout (`undefined`: passing through). */
  #held: string[] | undefined;
  #heldChars = 0;
  /** The child wrote a line on stdout. */
  #spoke = false;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(options: StdioChildOptions) {
    this.options = options;
  }

  /** The process id while running. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /**
   * Starts the process ahead of use (a warm spare): the `start()` that follows only waits for this
   * one. `running` tells whether the process is still there when it is wanted.
   */
  prestart(): Promise<void> {
    this.#prestarted = this.start();
    return this.#prestarted;
  }

  /** Whether the process has been spawned and not exited. */
  get running(): boolean {
    return this.#child !== undefined && !this.#closed;
  }

  /** Once the process has exited: its exit code or signal and the last lines of its stderr. */
  get failure(): UpstreamFailure | undefined {
    const exit = this.#exit;
    if (!exit) return undefined;
    const stderr = stderrTail(this.#stderrEnd);
    return {
      ...(exit.signal !== null ? { signal: exit.signal } : exit.code !== null ? { exitCode: exit.code } : {}),
      ...(stderr.length > 0 ? { stderr } : {}),
    };
  }

  /** Resolves once the process has exited and what it wrote to stderr was read (`failure` is then whole). */
  get closed(): Promise<void> {
    return this.#exited ?? Promise.resolve();
  }

  /** Whether the process wrote anything on stdout before it exited (one that did not failed to start). */
  get spoke(): boolean {
    return this.#spoke;
  }

  #stderr(chunk: string): void {
    const kept = this.#stderrEnd + chunk;
    this.#stderrEnd = kept.length > STDERR_KEPT ? kept.slice(-STDERR_KEPT) : kept;
    const sink = this.options.stderr;
    if (typeof sink === 'function') sink(chunk);
    else if (sink === 'ignore') return;
    else if (this.#held) {
      this.#held.push(chunk);
      this.#heldChars += chunk.length;
      if (this.#heldChars > STDERR_HELD) this.#release();
    } else process.stderr.write(chunk);
  }

  /** Passes the held stderr through, and whatever comes after it. */
  #release(): void {
    const held = this.#held;
    this.#held = undefined;
    if (held && held.length > 0) process.stderr.write(held.join(''));
  }

  async start(): Promise<void> {
    const prestarted = this.#prestarted;
    if (prestarted) {
      this.#prestarted = undefined;
      return prestarted;
    }
    if (this.#child) throw new AdapterError('protocol', 'stdio transport already started');
    const o = this.options;
    // A process started ahead for this very command line (see spawnChild.ts) is taken over: what it
    // wrote meanwhile waits in its pipes, what happened to it is known.
    const ahead = takeAhead(o);
    const child = ahead?.child ?? spawnChild(o);
    if (o.stderr === undefined || o.stderr === 'inherit') this.#held = [];
    this.#child = child;
    track(child);
    const framer = new LineFramer((line) => this.#line(line), {
      maxLineBytes: o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      onOverflow: (size, head, tail) => this.#overflow(size, head, tail),
    });
    // Node's own UTF-8 decoding of the pipe (split characters kept whole across chunks).
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => framer.push(chunk));
    ahead?.release();
    child.stdout!.on('end', () => framer.end());
    const stderrEnded = new Promise<void>((resolve) => {
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (chunk: string) => this.#stderr(chunk));
      child.stderr!.once('end', resolve);
      child.stderr!.once('error', () => resolve());
    });
    child.stdin!.on('error', (e) => this.onerror?.(e));
    this.#exited = new Promise((resolve) => {
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        this.#exit = { code, signal };
        this.onexit?.(code, signal);
        // Its last words, if still on their way, are read before the pipe is reported closed.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const drained = new Promise<void>((r) => (timer = setTimeout(r, STDERR_DRAIN_MS)));
        void Promise.race([stderrEnded, drained]).then(() => {
          clearTimeout(timer);
          // A process that never spoke failed to start: its held stderr is in `failure`, not on ours.
          if (this.#spoke) this.#release();
          else this.#held = undefined;
          this.#finish();
          resolve();
        });
      };
      if (ahead?.exit) {
        const { code, signal } = ahead.exit;
        queueMicrotask(() => onExit(code, signal));
      } else child.once('exit', onExit);
    });
    await new Promise<void>((resolve, reject) => {
      const failed = (e: Error) => {
        this.#finish();
        reject(new AdapterError('upstream-exited', `cannot start ${o.command}: ${e.message}`, { cause: e }));
      };
      if (ahead?.error) return failed(ahead.error);
      if (ahead?.spawned) return resolve();
      child.once('spawn', () => resolve());
      child.once('error', failed);
    });
  }

  #spoken(): void {
    if (this.#spoke) return;
    this.#spoke = true;
    this.#release();
  }

  /**
   * Resolves once the process has booted (it answers a `ping`, which the spec allows before
   * `initialize`), or it exits, or `timeoutMs` passes: a process started ahead is then ready. The
   * `ping`'s answer goes nowhere else.
   */
  warm(timeoutMs: number): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.#warmed === done) this.#warmed = undefined;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#warmed = done;
      void this.#exited?.then(done);
      this.send({ jsonrpc: '2.0', id: WARM_ID, method: 'ping' }).catch(done);
    });
  }

  #line(line: string): void {
    this.#spoken();
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.onerror?.(new AdapterError('protocol', `not JSON on the server's stdout: ${line.slice(0, 200)}`));
      return;
    }
    if (isRecord(message) && message['id'] === WARM_ID && !('method' in message)) {
      this.#warmed?.();
      return;
    }
    // Nesting beyond the bound every decoder of ours keeps: nothing downstream could write it out
    // again. An answer is replaced by an error for its request, so the request does not wait in vain.
    if (nestedBeyond(line, message)) {
      this.onerror?.(new AdapterError('protocol', `a message nested deeper than ${DEFAULT_MAX_DEPTH} levels on the server's stdout`));
      const id = (message as { id?: unknown }).id;
      if (!Array.isArray(message) && !('method' in (message as object)) && isRequestId(id))
        this.onmessage?.(errorResponse(id, internalError(`the server's answer is nested deeper than ${DEFAULT_MAX_DEPTH} levels`)));
      return;
    }
    this.options.trace?.('received', message);
    this.onmessage?.(message as JsonRpcMessage);
  }

  /** A line past the bound, skipped: an answer is replaced by an error for its request, as above. */
  #overflow(size: number, head: string, tail: string): void {
    this.#spoken();
    const max = this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.onerror?.(
      new AdapterError(
        'protocol',
        `a message larger than ${max} bytes on the server's stdout (${size} characters), skipped: ${head.slice(0, 200)}…`,
      ),
    );
    const id = responseIdOf(head, tail);
    if (id !== undefined) this.onmessage?.(errorResponse(id, internalError(tooLargeDetail(max))));
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }

  send(message: JsonRpcMessage, options?: unknown): Promise<void> {
    const stdin = this.#child?.stdin;
    if (this.#closed || !stdin || stdin.destroyed) return Promise.reject(notRunning());
    this.options.trace?.('sent', message);
    let ok: boolean;
    try {
      ok = (this.#write ??= turnBatcher(stdin))(frame(message), (options as SendOptions | undefined)?.lone === true);
    } catch (e) {
      return Promise.reject(e);
    }
    if (ok) return SENT;
    // The pipe is full, or it broke: a pipe that broke never drains (Node 24 reports the failed
    // write this way where Node 20 took it), so its close ends the wait too.
    return new Promise<void>((resolve, reject) => {
      const settle = (drained: boolean): void => {
        stdin.off('drain', onDrain);
        stdin.off('close', onClose);
        if (drained) resolve();
        else reject(notRunning());
      };
      const onDrain = (): void => settle(true);
      const onClose = (): void => settle(false);
      if (stdin.destroyed) return settle(false);
      stdin.once('drain', onDrain);
      stdin.once('close', onClose);
    });
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
      this.#finish();
      return;
    }
    const grace = this.options.shutdownGraceMs ?? 2000;
    // What this turn sent (the cancellations of calls in flight, say) goes before the end.
    this.#write?.flush();
    child.stdin?.end();
    const waited = (ms: number) =>
      Promise.race([this.#exited!.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    if (!(await waited(grace))) {
      child.kill('SIGTERM');
      if (!(await waited(grace))) child.kill('SIGKILL');
    }
    await this.#exited;
  }
}
