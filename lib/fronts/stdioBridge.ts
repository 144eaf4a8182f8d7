/**
 * The stdio front for one host bridged to one server (`mcp-dual-era connect`): the host speaks on
 * our stdin/stdout, in whichever era it speaks, and its first message's era chooses the upstream
 * transport, which the bridge's owner opens (`OpenUpstream`: the cli's `connect`, through a client
 * wrap; a front imports nothing from `wrap/`). A modern host may fall back to `initialize` on the
 * same pipe (when our first answer was slower than it waits): it is then served as a legacy host,
 * the transport it left behind is closed and its late answers are dropped. The host's requests are
 * tracked until answered or cancelled: at the end of its input they may still take a while, and
 * when the server goes or a signal stops us each gets an error. stdout carries protocol messages
 * only, each id as the host wrote it (`exactIds.ts`: an id past 2^53 comes back unchanged).
 * The stdio front a wrap is served through (`serve --stdio`) is stdioFront.ts.
 */
import { claimedEra, type Era } from '../core/era.ts';
import { internalError, parseError } from '../core/errors.ts';
import { errorResponse, type JsonRpcMessage } from '../core/jsonrpc.ts';
import { RelayTelemetry } from '../observe/relayTelemetry.ts';
import { describeFailure, upstreamUnavailable, type UpstreamFailure } from '../util/upstreamFailure.ts';
import { DEFAULTS } from '../util/defaults.ts';
import { LineFramer } from '../transport/lineFramer.ts';
import { exactJson, holdExactIds } from '../transport/exactIds.ts';
import type { StdioChildTransport } from '../transport/stdioChild.ts';
import type { Transport } from '../transport/transport.ts';
import { turnBatcher } from '../transport/turnBatcher.ts';

/** What an upstream transport's opener tells the bridge as the transport goes; nothing is heard from one the host left behind. */
export interface UpstreamHooks {
  /** A line for whoever runs the bridge. */
  say(text: string): void;
  /** The server cannot be reached: the host is answered with the error, told once, and the bridge stops (exit 1). */
  unreachable(reason: string): void;
}

/** An upstream transport for the host's era, not yet started. */
export interface OpenedUpstream {
  readonly transport: Transport;
  /** The server process, when this transport spawned it: what it said as it went is told when it goes. */
  readonly child?: StdioChildTransport;
}

/** Opens the upstream transport for a host of `era`. */
export type OpenUpstream = (era: Era, hooks: UpstreamHooks) => Promise<OpenedUpstream>;

/** Options of {@link StdioBridge}. */
export interface StdioBridgeOptions {
  readonly open: OpenUpstream;
  /** The server as its user named it (its URL or its command line), in what is said. */
  readonly where: string;
  readonly say: (text: string) => void;
  /** Shows one message that went from `from` to `to`. */
  readonly trace?: (from: string, to: string, message: unknown) => void;
  readonly hostEra?: Era;
  /** The server's era when it is pinned (what is observed of the host's requests says it). */
  readonly serverEra?: Era;
  /** After the host's input ends, how long its requests in flight may still take (default 30 s). */
  readonly graceMs?: number;
}

/** The longest a signalled bridge waits for its last answers to be written before it leaves. */
const SIGNAL_EXIT_MS = 50;

/** Whether a message is a legacy `initialize` request. */
function isInitialize(message: unknown): boolean {
  const m = Array.isArray(message) ? message[0] : message;
  return typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize' && 'id' in m;
}

/** One host on our stdio, one upstream, the transport between them chosen by the host's era. */
export class StdioBridge {
  readonly #options: StdioBridgeOptions;
  /** The server process of the legacy host's transport, when we spawned it. */
  #child: StdioChildTransport | undefined;
  /** The transport of the host's era: its opening (it resolves to the transport, or nothing when it could not open). */
  #opening: Promise<Transport | undefined> | undefined;
  #era: Era | undefined;
  /** Counts transports opened: answers from one the host has left behind are dropped. */
  #generation = 0;
  /** The host's messages to the current transport, in order. */
  #sending: Promise<void> = Promise.resolve();
  /** Transports left behind by a fallback, closing. */
  readonly #retired = new Set<Promise<void>>();
  #write: ((message: unknown) => void) | undefined;
  #finished = false;
  #stopping = false;
  #finish!: (code: number) => void;
  /** Requests from the host still waiting for their answer (answered with an error if the upstream goes). */
  readonly #pending = new Set<string | number>();
  /** Of those, the `subscriptions/listen` streams: open until cancelled, so nothing to wait for at the end. */
  readonly #streams = new Set<string | number>();
  /** Set while the end of the host's input waits for its requests to be answered. */
  #onIdle: (() => void) | undefined;
  /** What is observed of the host's requests in its era (spans, with an OpenTelemetry SDK registered). */
  #observed: RelayTelemetry | undefined;

  constructor(options: StdioBridgeOptions) {
    this.#options = options;
  }

  /** Serves the host until its input ends or the server is gone; resolves with the exit code. */
  run(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Promise<number> {
    const batched = turnBatcher(output as unknown as Parameters<typeof turnBatcher>[0]);
    this.#write = (message) => {
      if (this.#finished) return;
      const m = message as Record<string, unknown>;
      if ((m['result'] !== undefined || m['error'] !== undefined) && (typeof m['id'] === 'string' || typeof m['id'] === 'number')) {
        this.#settled(m['id']);
      }
      this.#options.trace?.('us', 'client', message);
      this.#observed?.answered(message as JsonRpcMessage);
      batched(`${exactJson(message)}\n`);
    };
    const done = new Promise<number>((resolve) => (this.#finish = resolve));
    const framer = new LineFramer((line) => this.#fromHost(line));
    input.on('data', (chunk: Buffer) => framer.push(chunk));
    input.on('end', () => {
      framer.end();
      // The host is done sending: what it still waits for may arrive, for a while; then we stop.
      void this.#sending.then(() => this.#drained(this.#options.graceMs ?? DEFAULTS.drainGraceMs)).then(() => this.#stop(0));
    });
    // A host that stops us waits a moment at most before it kills us (Claude Code: 100–400 ms):
    // what it still waits for is answered at once, the answers are written out, and we leave; the
    // server processes we started are ended as this process exits.
    const onSignal = () => {
      this.#failPending('the bridge is shutting down');
      this.#observed?.closed('the bridge is shutting down');
      this.#finished = true;
      batched.flush();
      const leave = () => process.exit(0);
      setTimeout(leave, SIGNAL_EXIT_MS).unref();
      if ((output as NodeJS.WritableStream & { writable?: boolean }).writable === false) return leave();
      output.write('', leave);
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    return done.finally(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      // Stopped while the host still holds its end open (the server failed): no more reading, so
      // the command can exit with its code.
      input.removeAllListeners('data');
      (input as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
    });
  }

  #fromHost(line: string): void {
    let message: unknown;
    try {
      message = holdExactIds(JSON.parse(line), line);
    } catch {
      this.#options.trace?.('client', 'us', `(not JSON) ${line.slice(0, 200)}`);
      this.#write!(errorResponse(null, parseError('the line is not JSON')));
      return;
    }
    this.#options.trace?.('client', 'us', message);
    // A modern host that gave up waiting starts again the legacy way, on the same pipe.
    if (this.#era === 'modern' && this.#options.hostEra === undefined && isInitialize(message)) this.#fallBack();
    for (const m of Array.isArray(message) ? message : [message]) {
      if (typeof m !== 'object' || m === null) continue;
      const { id, method, params } = m as Record<string, unknown>;
      if (typeof method !== 'string') continue;
      if (typeof id === 'string' || typeof id === 'number') {
        this.#pending.add(id);
        if (method === 'subscriptions/listen') this.#streams.add(id);
      }
      // A cancelled request gets no answer: nothing to wait for.
      else if (method === 'notifications/cancelled' && typeof params === 'object' && params !== null) {
        const cancelled = (params as { requestId?: string | number }).requestId!;
        this.#settled(cancelled);
      }
    }
    if (!this.#opening) {
      this.#era = this.#options.hostEra ?? (claimedEra(Array.isArray(message) ? message[0] : message) === 'modern' ? 'modern' : 'legacy');
      this.#observed = RelayTelemetry.of({ transport: 'pipe', clientEra: this.#era, serverEra: this.#options.serverEra });
      this.#opening = this.#open(this.#era, ++this.#generation);
    }
    if (this.#observed) message = this.#observed.sent(message as JsonRpcMessage | JsonRpcMessage[]);
    const opening = this.#opening;
    const generation = this.#generation;
    // Sent in order, not awaited: a transport may take its time over a request (a call through a
    // legacy server), and the host's next message must not wait for it.
    this.#sending = this.#sending.then(async () => {
      const transport = await opening;
      if (!transport || generation !== this.#generation) return;
      transport.send(message as JsonRpcMessage).catch(async (e: unknown) => {
        // A server process that is going says why once it has gone (its last stderr lines).
        if (this.#child) await Promise.race([this.#child.closed, new Promise((r) => setTimeout(r, 1000).unref())]);
        this.#failPending(`the server cannot be reached: ${e instanceof Error ? e.message : String(e)}`, this.#serverFailure());
      });
    });
  }

  /**
   * The host sent `initialize` after modern requests: it is a legacy host now. What it asked
   * before is given up (their late answers are dropped), the modern transport is closed, and the
   * next transport is chosen for the legacy era.
   */
  #fallBack(): void {
    for (const id of this.#pending) this.#streams.delete(id);
    this.#pending.clear();
    this.#observed?.closed('the host fell back to initialize');
    this.#observed = undefined;
    const left = this.#opening;
    this.#opening = undefined;
    this.#era = undefined;
    this.#generation++;
    this.#sending = Promise.resolve();
    this.#options.say('the host fell back to initialize: it is served as a legacy host');
    if (left) {
      const closing = left.then((t) => t?.close().catch(() => {})).then(() => {});
      this.#retired.add(closing);
      void closing.finally(() => this.#retired.delete(closing));
    }
  }

  /** Opens the transport for the host's era (through the owner's `open`) and starts it. */
  async #open(era: Era, generation: number): Promise<Transport | undefined> {
    const { where, say } = this.#options;
    const side = era === 'legacy' ? 'modern or legacy server' : 'server';
    const current = () => generation === this.#generation && !this.#finished;
    const { transport, child } = await this.#options.open(era, {
      say: (text) => current() && say(text),
      unreachable: (reason) => {
        if (!current()) return;
        say(`the server cannot be reached: ${reason}`);
        setImmediate(() => void this.#stop(1));
      },
    });
    if (child) this.#child = child;
    transport.onmessage = (message) => {
      // A transport the host has left behind (a fallback) answers what the host no longer waits for.
      if (current()) this.#write!(message);
    };
    transport.onerror = (e) => current() && say(e.message);
    transport.onclose = () => {
      if (!current()) return;
      const failure = this.#serverFailure();
      this.#failPending('the server closed the connection', failure);
      say(failure ? `the server closed the connection: ${failure.detail}` : 'the server closed the connection');
      void this.#stop(1);
    };
    try {
      await transport.start();
    } catch (e) {
      if (!current()) return undefined;
      const why = e instanceof Error ? e.message : String(e);
      say(`cannot reach ${where}: ${why}`);
      this.#failPending(`mcp-dual-era connect cannot reach ${where}: ${why}`);
      void this.#stop(1);
      return undefined;
    }
    if (!current()) {
      await transport.close().catch(() => {});
      return undefined;
    }
    say(`${era} host ⇄ ${side} at ${where}`);
    return transport;
  }

  /** A request of the host needs no more waiting for: answered or cancelled. */
  #settled(id: string | number): void {
    this.#pending.delete(id);
    this.#streams.delete(id);
    if (this.#idle()) this.#onIdle?.();
  }

  /** Nothing the host waits for is still to come (open `subscriptions/listen` streams aside). */
  #idle(): boolean {
    return this.#finished || [...this.#pending].every((id) => this.#streams.has(id));
  }

  /** Resolves when the host waits for nothing more, or after `ms`. */
  #drained(ms: number): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#onIdle?.(), ms);
      this.#onIdle = () => {
        clearTimeout(timer);
        this.#onIdle = undefined;
        resolve();
      };
    });
  }

  /** What the server process said as it went, when a transport of ours spawned it and it is gone. */
  #serverFailure(): { detail: string; failure: UpstreamFailure } | undefined {
    const child = this.#child;
    const failure = child?.failure;
    const detail = failure && describeFailure(failure, child.spoke ? undefined : 'before it answered initialize');
    return failure && detail ? { detail: `it ${detail}`, failure } : undefined;
  }

  /**
   * Every request still waiting gets an error: the host never waits for an answer that cannot
   * come. With the server's own account of its failure, when there is one (in the message and `data`).
   */
  #failPending(why: string, said?: { detail: string; failure: UpstreamFailure }): void {
    const error = said ? upstreamUnavailable(said.detail, said.failure) : internalError(why);
    for (const id of [...this.#pending]) this.#write!(errorResponse(id, error));
    this.#pending.clear();
  }

  async #stop(code: number): Promise<void> {
    if (this.#finished || this.#stopping) return;
    this.#stopping = true;
    // The shutdown waits on timers that do not keep a process alive (grace periods before SIGTERM):
    // this one does, until every server process is gone.
    const alive = setInterval(() => {}, 1000);
    const transport = await this.#opening;
    if (transport) {
      transport.onclose = undefined;
      await transport.close().catch(() => {});
    }
    await Promise.all([...this.#retired]);
    clearInterval(alive);
    this.#failPending('the bridge is shutting down');
    this.#observed?.closed('the bridge is shutting down');
    this.#finished = true;
    this.#onIdle?.();
    this.#finish(code);
  }
}
