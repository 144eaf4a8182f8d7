/**
 * `mcp-dual-era connect`: a stdio bridge for any host. The host speaks on our stdin/stdout, in
 * whichever era it speaks; the server is an HTTP endpoint or a command, in whichever era it speaks.
 * The host's first request tells its era: a legacy host (`initialize`) goes through
 * `wrapLegacyClient` (a modern-only server is reached through translation, a legacy or dual-era
 * one is relayed unchanged); a modern host goes through `wrapModernClient` (a legacy server is
 * translated, a modern one gets the messages untouched). A modern host may fall back to
 * `initialize` on the same pipe (when our first answer was slower than it waits): it is then served
 * as a legacy host and late answers to what it gave up on are dropped. A server command is started
 * as soon as the arguments are read, while the rest loads. stdout carries protocol messages only,
 * each id as the host wrote it (`exactIds.ts`: an id past 2^53 comes back unchanged).
 * With `--oauth`, every request to an HTTP server goes through `authorizedFetch` and the provider
 * the sign-in options describe (oauthOptions.ts): the sign-in starts at the server's first 401, and
 * the host's request waits for it.
 */
import { parseArgs } from 'node:util';
import { oauthProvider } from './oauthOptions.ts';
import { authorizedFetch, SIGN_IN_TIMEOUT_MS } from '../auth/authorizedFetch.ts';
import { claimedEra, type Era } from '../core/era.ts';
import { internalError, parseError } from '../core/errors.ts';
import { describeFailure, upstreamUnavailable, type UpstreamFailure } from '../util/upstreamFailure.ts';
import { errorResponse, type JsonRpcMessage } from '../core/jsonrpc.ts';
import { RelayTelemetry } from '../observe/relayTelemetry.ts';
import { LineFramer } from '../transport/lineFramer.ts';
import { exactJson, holdExactIds } from '../transport/exactIds.ts';
import { startAhead } from '../transport/spawnChild.ts';
import { StdioChildTransport, type StdioChildOptions } from '../transport/stdioChild.ts';
import type { Transport } from '../transport/transport.ts';
import { turnBatcher } from '../transport/turnBatcher.ts';
import type { HttpTarget } from '../probe/probeTypes.ts';
import { CONNECT_OPTIONS, CONNECT_USAGE } from './connectUsage.ts';
import { readEnv, readHeaders, readHttpUrl, readRoots, serverProcess, splitAtDash, usageError } from './options.ts';
import { stderrTrace, tracingFetch, upstreamTrace, type Trace } from './trace.ts';
import { DEFAULTS } from '../util/defaults.ts';

type Upstream = { url: string; headers: Record<string, string>; fetch?: typeof fetch } | { command: StdioChildOptions };

/** Runs the connect command; resolves with the exit code when the host or the server is gone. */
export async function connect(
  argv: readonly string[],
  io: { input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream } = {},
): Promise<number> {
  const { own, command } = splitAtDash(argv);
  const usage = usageError('connect');
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
      allowPositionals: true,
      options: CONNECT_OPTIONS,
      strict: true,
    });
  } catch (e) {
    return usage(e instanceof Error ? e.message : String(e));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`Usage:\n${CONNECT_USAGE}`);
    return 0;
  }
  const hostEra = values['host-era'] ?? 'auto';
  if (hostEra !== 'auto' && hostEra !== 'legacy' && hostEra !== 'modern')
    return usage(`--host-era is legacy, modern or auto, not ${hostEra}`);
  const serverEra = values['server-era'] ?? 'auto';
  if (serverEra !== 'auto' && serverEra !== 'legacy' && serverEra !== 'modern')
    return usage(`--server-era is modern, legacy or auto, not ${serverEra}`);
  const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1))
    return usage(`--timeout must be a whole number of milliseconds, not ${values.timeout}`);
  const headers = readHeaders(values.header);
  if (!headers.ok) return usage(headers.message);
  const env = readEnv(values.env);
  if (!env.ok) return usage(env.message);
  const roots = readRoots(values.roots);
  if (!roots.ok) return usage(roots.message);
  const trace = values.verbose ? stderrTrace() : undefined;
  const oauth = values.oauth === true;
  if (oauth && Object.keys(headers.value).some((name) => name.toLowerCase() === 'authorization'))
    return usage('--oauth sends its own Authorization header: leave out --header Authorization');
  // Ends a sign-in still waiting when the bridge stops.
  const signIn = new AbortController();
  let upstream: Upstream;
  if (command.length > 0) {
    if (positionals.length > 0) return usage(`name either a URL or a command after --, not both`);
    if (oauth) return usage('--oauth signs in to an HTTP server: give its URL, not a command');
    const stray = await oauthProvider(values, new URL('http://127.0.0.1/'));
    if (!stray.ok) return usage(stray.message);
    upstream = {
      command: {
        ...serverProcess(command, env.value, values.cwd, values),
        stderr: 'inherit',
        shutdownGraceMs: 300,
        ...(trace ? { trace: upstreamTrace(trace) } : {}),
      },
    };
  } else if (positionals.length === 1) {
    const url = readHttpUrl(positionals[0]!, 'the server');
    if (!url.ok) return usage(`${url.message} (a command goes after --)`);
    let fetch: typeof globalThis.fetch | undefined;
    const provider = await oauthProvider(values, url.value);
    if (!provider.ok) return usage(provider.message);
    if (provider.value) fetch = authorizedFetch(provider.value, url.value, { signal: signIn.signal });
    // Traced outside the authorization: each message once, and never a token request or its answer.
    if (trace) fetch = tracingFetch('us', 'server', trace, fetch);
    upstream = { url: url.value.href, headers: headers.value, ...(fetch ? { fetch } : {}) };
  } else if (positionals.length > 1) {
    return usage(`one URL only (a command and its arguments go after --): ${positionals.join(' ')}`);
  } else {
    return usage('name the server (<url> or -- <command> [args…])');
  }

  const say = (text: string) => values.quiet || process.stderr.write(`mcp-dual-era connect: ${text}\n`);
  // The server boots while the rest of us loads and the host sends its first request (the host
  // waits for our first answer: the AI SDK, modern first, one second before it falls back). The
  // command line (lib/cli/main.ts) started it already; the first transport takes it over.
  if ('command' in upstream) startAhead(upstream.command);
  const bridge = new Connection(upstream, {
    say,
    ...(trace ? { trace } : {}),
    ...(hostEra !== 'auto' ? { hostEra } : {}),
    ...(serverEra !== 'auto' ? { serverEra } : {}),
    // A sign-in may happen during the probe: it waits as long as a sign-in may, unless told otherwise.
    ...(timeout !== undefined ? { timeoutMs: timeout } : oauth ? { timeoutMs: SIGN_IN_TIMEOUT_MS } : {}),
    roots: roots.value,
  });
  return bridge.run(io.input ?? process.stdin, io.output ?? process.stdout).finally(() => signIn.abort());
}

/** The longest a signalled bridge waits for its last answers to be written before it leaves. */
const SIGNAL_EXIT_MS = 50;

interface ConnectionOptions {
  readonly say: (text: string) => void;
  readonly trace?: Trace;
  readonly hostEra?: Era;
  readonly serverEra?: Era;
  readonly timeoutMs?: number;
  /** After the host's input ends, how long its requests in flight may still take (default 30 s). */
  readonly graceMs?: number;
  /** For a modern host and a legacy server: the roots the server gets when it asks outside any call. */
  readonly roots: ReadonlyArray<{ uri: string }>;
}

/** Whether a message is a legacy `initialize` request. */
function isInitialize(message: unknown): boolean {
  const m = Array.isArray(message) ? message[0] : message;
  return typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize' && 'id' in m;
}

/** One host on our stdio, one upstream, the transport between them chosen by the host's era. */
class Connection {
  readonly #upstream: Upstream;
  readonly #options: ConnectionOptions;
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

  constructor(upstream: Upstream, options: ConnectionOptions) {
    this.#upstream = upstream;
    this.#options = options;
  }

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

  /** Chooses and starts the transport for the host's era. */
  async #open(era: Era, generation: number): Promise<Transport | undefined> {
    const upstream = this.#upstream;
    const side = era === 'legacy' ? 'modern or legacy server' : 'server';
    const current = () => generation === this.#generation && !this.#finished;
    const where = 'url' in upstream ? upstream.url : [upstream.command.command, ...(upstream.command.args ?? [])].join(' ');
    let transport: Transport;
    if (era === 'legacy') {
      const { wrapLegacyClient } = await import('../wrap/legacyClient/wrapLegacyClient.ts');
      let bridge: ReturnType<typeof wrapLegacyClient>;
      if ('url' in upstream) {
        bridge = wrapLegacyClient({ url: upstream.url, headers: upstream.headers, ...(upstream.fetch ? { fetch: upstream.fetch } : {}) });
      } else {
        const child = new StdioChildTransport(upstream.command);
        this.#child = child;
        bridge = wrapLegacyClient(child);
      }
      // The server cannot be reached: the host is answered with the error, told once on stderr,
      // and the bridge stops (exit 1, the upstream failed), as it does for a modern host.
      bridge.events.on('unreachable', ({ reason }) => {
        if (!current()) return;
        this.#options.say(`the server cannot be reached: ${reason}`);
        setImmediate(() => void this.#stop(1));
      });
      transport = bridge;
    } else {
      const { wrapModernClient } = await import('../wrap/modernClient/wrapModernClient.ts');
      const target: HttpTarget | StdioChildOptions =
        'url' in upstream
          ? { url: upstream.url, headers: upstream.headers, ...(upstream.fetch ? { fetch: upstream.fetch } : {}) }
          : upstream.command;
      const modern = wrapModernClient(target, {
        ...(this.#options.serverEra ? { pin: this.#options.serverEra } : {}),
        ...(this.#options.timeoutMs !== undefined ? { timeoutMs: this.#options.timeoutMs } : {}),
        cache: false,
        legacy: { roots: this.#options.roots },
      });
      modern.events.on('waiting', (e) => current() && this.#options.say(e.reason));
      modern.events.on(
        'verdict',
        (e) =>
          current() &&
          this.#options.say(
            `the server speaks the ${e.verdict.era} era${e.verdict.era === 'modern' ? ` (${e.verdict.version}): messages pass unchanged` : ': messages are translated'}`,
          ),
      );
      transport = modern;
    }
    transport.onmessage = (message) => {
      // A transport the host has left behind (a fallback) answers what the host no longer waits for.
      if (current()) this.#write!(message);
    };
    transport.onerror = (e) => current() && this.#options.say(e.message);
    transport.onclose = () => {
      if (!current()) return;
      const failure = this.#serverFailure();
      this.#failPending('the server closed the connection', failure);
      this.#options.say(failure ? `the server closed the connection: ${failure.detail}` : 'the server closed the connection');
      void this.#stop(1);
    };
    try {
      await transport.start();
    } catch (e) {
      if (!current()) return undefined;
      const why = e instanceof Error ? e.message : String(e);
      this.#options.say(`cannot reach ${where}: ${why}`);
      this.#failPending(`mcp-dual-era connect cannot reach ${where}: ${why}`);
      void this.#stop(1);
      return undefined;
    }
    if (!current()) {
      await transport.close().catch(() => {});
      return undefined;
    }
    this.#options.say(`${era} host ⇄ ${side} at ${where}`);
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
