/**
 * The wrap bench's contenders: each a way of serving modern `tools/call` requests from the same
 * legacy stdio echo server (the wrap over HTTP and over stdio, the pass-through, mcp-proxy, a
 * legacy client on the server itself, a byte-for-byte stdio relay and one that parses every line), how to start it and which processes do its work. Not the
 * measuring (bench/wrap/cells.ts) nor the schedule (bench/wrap.ts).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { httpDriver, initializeLegacy, LineDriver, sdkDriver, type Driver } from './load.ts';
import { BENCH_NODE_FLAGS, childPids, freePort, start, stop, waitFor, type Started } from './procs.ts';

const root = join(import.meta.dirname, '..', '..');
const node = process.execPath;
const MCP_PROXY_BIN = join(root, 'node_modules', 'mcp-proxy', 'dist', 'bin', 'mcp-proxy.mjs');
/** Registers the OpenTelemetry SDK (spans to memory) in the observed front's process. */
const OTEL_PRELOAD = pathToFileURL(join(root, 'bench', 'wrap', 'otelMemory.mjs')).href;
/** The same, sampling 10% of requests. */
const OTEL_SAMPLED_PRELOAD = pathToFileURL(join(root, 'bench', 'wrap', 'otelSampled.mjs')).href;

/** A started contender: how to drive it and which processes do its work. */
export interface Running {
  /** A driver for one cell (HTTP: a fresh Agent sized to the concurrency; stdio: the one pipe). */
  driver(concurrency: number): Driver;
  /** Whether each cell's driver is its own (closed after the cell) rather than the one shared pipe. */
  readonly driverPerCell: boolean;
  /** The front's process, if it has one of its own. */
  readonly frontPid?: number;
  /** The legacy server's process(es): found once the front has spawned them. */
  serverPids(): number[];
  stop(): Promise<void>;
}

export interface Contender {
  readonly key:
    | 'passthrough'
    | 'wrap-http'
    | 'wrap-http-observed'
    | 'wrap-http-sampled'
    | 'wrap-http-metrics'
    | 'mcp-proxy'
    | 'direct-sdk'
    | 'direct-raw'
    | 'stdio-relay'
    | 'stdio-parsing-relay'
    | 'stdio-translating-relay'
    | 'wrap-stdio'
    | 'wrap-stdio-legacy';
  readonly label: string;
  readonly describe: string;
  start(programs: Programs): Promise<Running>;
}

/** How to run each program: node arguments up to (not including) the program's own arguments. */
export interface Programs {
  readonly echo: string;
  readonly wrapCli: readonly string[];
  readonly passthrough: readonly string[];
  /** The stdio relay (bench/stdioRelay.ts): the stdio front's ceiling (with `--parse` before `--`: the ceiling of any front that reads the messages). */
  readonly relay: readonly string[];
  /** Node flags a front runs with under `--profile` (none otherwise). */
  readonly profileFlags: (key: string) => string[];
}

/** The children seen now, or the ones seen before if none are (the front has not spawned them yet, or is gone). */
const latest = (now: number[], before: number[]): number[] => (now.length > 0 ? now : before);

/** An HTTP front we start as a process, serving modern requests at `url`. */
async function httpFront(
  key: Contender['key'],
  command: string[],
  url: (port: number) => string,
  modernAnswer: boolean,
  profileFlags: Programs['profileFlags'],
): Promise<Running> {
  const port = await freePort();
  const argv = command.map((a) => a.replace('{port}', String(port)));
  const proc = start(node, [...BENCH_NODE_FLAGS, ...profileFlags(key), ...argv], { cwd: root });
  const target = { url: new URL(url(port)), modernAnswer };
  let servers: number[] = [];
  try {
    await waitFor(
      key,
      async () => {
        const probe = httpDriver(target, 1);
        let timer: ReturnType<typeof setTimeout> | undefined;
        try {
          const answer = await Promise.race([
            probe.call(0, 'ready'),
            new Promise<string>((r) => (timer = setTimeout(() => r('no answer'), 5000))),
          ]);
          return answer === undefined;
        } finally {
          clearTimeout(timer);
          await probe.close();
        }
      },
      30_000,
      proc,
    );
  } catch (e) {
    await stop(proc, childPids(proc.pid));
    throw e;
  }
  servers = childPids(proc.pid);
  return {
    driver: (c) => httpDriver(target, c),
    driverPerCell: true,
    frontPid: proc.pid,
    serverPids: () => (servers = latest(childPids(proc.pid), servers)),
    stop: () => stop(proc, servers),
  };
}

/** A stdio process spoken to with newline-delimited JSON-RPC (the stdio front, or the server itself). */
async function stdioProcess(proc: Started, modern: boolean, legacyHandshake: boolean, isFront: boolean): Promise<Running> {
  const driver = new LineDriver(proc.child, modern);
  proc.child.once('exit', () => driver.failAll('the process exited'));
  let servers: number[] = [];
  try {
    if (legacyHandshake) await initializeLegacy(driver);
    const ready = await Promise.race([
      driver.call(0, 'ready'),
      new Promise<string>((r) => setTimeout(() => r('no answer within 30 s'), 30_000).unref()),
    ]);
    if (ready !== undefined) throw new Error(`not ready: ${ready}\n${proc.log()}`);
  } catch (e) {
    await stop(proc, childPids(proc.pid));
    throw e;
  }
  if (isFront) servers = childPids(proc.pid);
  return {
    driver: () => driver,
    driverPerCell: false,
    ...(isFront ? { frontPid: proc.pid } : {}),
    serverPids: () => (isFront ? (servers = latest(childPids(proc.pid), servers)) : [proc.pid]),
    stop: () => stop(proc, servers, () => void driver.close()),
  };
}

/** Every contender, in the order the tables list them. */
export const CONTENDERS: readonly Contender[] = [
  {
    key: 'wrap-http',
    label: 'wrap (HTTP)',
    describe: 'mcp-dual-era serve --port N -- node echoServer.mjs, modern requests',
    start: ({ echo, wrapCli, profileFlags }) =>
      httpFront(
        'wrap-http',
        [...wrapCli, 'serve', '--quiet', '--port', '{port}', '--', node, ...BENCH_NODE_FLAGS, echo],
        (p) => `http://127.0.0.1:${p}/mcp`,
        true,
        profileFlags,
      ),
  },
  {
    key: 'wrap-http-observed',
    label: 'wrap (HTTP), observed',
    describe:
      'the same with --metrics and the OpenTelemetry SDK registered (node --import bench/wrap/otelMemory.mjs: spans batched to memory)',
    start: ({ echo, wrapCli, profileFlags }) =>
      httpFront(
        'wrap-http-observed',
        ['--import', OTEL_PRELOAD, ...wrapCli, 'serve', '--quiet', '--metrics', '--port', '{port}', '--', node, ...BENCH_NODE_FLAGS, echo],
        (p) => `http://127.0.0.1:${p}/mcp`,
        true,
        profileFlags,
      ),
  },
  {
    key: 'wrap-http-sampled',
    label: 'wrap (HTTP), sampled 10%',
    describe:
      'the same with the OpenTelemetry SDK sampling 10% of requests (node --import bench/wrap/otelSampled.mjs: a parent-based ratio sampler)',
    start: ({ echo, wrapCli, profileFlags }) =>
      httpFront(
        'wrap-http-sampled',
        [
          '--import',
          OTEL_SAMPLED_PRELOAD,
          ...wrapCli,
          'serve',
          '--quiet',
          '--metrics',
          '--port',
          '{port}',
          '--',
          node,
          ...BENCH_NODE_FLAGS,
          echo,
        ],
        (p) => `http://127.0.0.1:${p}/mcp`,
        true,
        profileFlags,
      ),
  },
  {
    key: 'wrap-http-metrics',
    label: 'wrap (HTTP), metrics',
    describe: 'the same with --metrics alone (no OpenTelemetry SDK): what the metrics cost, apart from the spans',
    start: ({ echo, wrapCli, profileFlags }) =>
      httpFront(
        'wrap-http-metrics',
        [...wrapCli, 'serve', '--quiet', '--metrics', '--port', '{port}', '--', node, ...BENCH_NODE_FLAGS, echo],
        (p) => `http://127.0.0.1:${p}/mcp`,
        true,
        profileFlags,
      ),
  },
  {
    key: 'passthrough',
    label: 'pass-through',
    describe: 'bench/passthrough.ts: body → stdin line, stdout line → body, no translation',
    start: ({ echo, passthrough, profileFlags }) =>
      httpFront(
        'passthrough',
        [...passthrough, '--port', '{port}', '--', node, ...BENCH_NODE_FLAGS, echo],
        (p) => `http://127.0.0.1:${p}/`,
        false,
        profileFlags,
      ),
  },
  {
    key: 'mcp-proxy',
    label: 'mcp-proxy 6.7.19',
    describe: 'mcp-proxy --host 127.0.0.1 --port N -- node echoServer.mjs, its 2026-07-28 route at /mcp',
    start: ({ echo, profileFlags }) =>
      httpFront(
        'mcp-proxy',
        [MCP_PROXY_BIN, '--host', '127.0.0.1', '--port', '{port}', '--', node, ...BENCH_NODE_FLAGS, echo],
        (p) => `http://127.0.0.1:${p}/mcp`,
        true,
        profileFlags,
      ),
  },
  {
    key: 'direct-sdk',
    label: 'direct (SDK client)',
    describe: 'v1 SDK Client over StdioClientTransport, legacy session on the server itself',
    async start({ echo }) {
      const d = await sdkDriver(node, [...BENCH_NODE_FLAGS, echo], root);
      const ready = await d.call(0, 'ready');
      if (ready !== undefined) throw new Error(`direct-sdk not ready: ${ready}`);
      return { driver: () => d, driverPerCell: false, serverPids: () => (d.pid ? [d.pid] : []), stop: () => d.close() };
    },
  },
  {
    key: 'direct-raw',
    label: 'direct (raw lines)',
    describe: 'legacy requests written as lines to the server itself (the bench client of the stdio front)',
    start: ({ echo }) => stdioProcess(start(node, [...BENCH_NODE_FLAGS, echo], { cwd: root, protocol: true }), false, true, false),
  },
  {
    key: 'stdio-relay',
    label: 'stdio relay',
    describe:
      'bench/stdioRelay.ts -- node echoServer.mjs: stdin piped to the server, its stdout piped back, byte for byte (legacy request lines)',
    start: ({ echo, relay, profileFlags }) =>
      stdioProcess(
        start(node, [...BENCH_NODE_FLAGS, ...profileFlags('stdio-relay'), ...relay, '--', node, ...BENCH_NODE_FLAGS, echo], {
          cwd: root,
          protocol: true,
        }),
        false,
        true,
        true,
      ),
  },
  {
    key: 'stdio-parsing-relay',
    label: 'stdio relay, parsing',
    describe:
      'bench/stdioRelay.ts --parse -- node echoServer.mjs: every line decoded and encoded again, nothing else (legacy request lines)',
    start: ({ echo, relay, profileFlags }) =>
      stdioProcess(
        start(
          node,
          [...BENCH_NODE_FLAGS, ...profileFlags('stdio-parsing-relay'), ...relay, '--parse', '--', node, ...BENCH_NODE_FLAGS, echo],
          { cwd: root, protocol: true },
        ),
        false,
        true,
        true,
      ),
  },
  {
    key: 'stdio-translating-relay',
    label: 'stdio relay, translating',
    describe:
      'bench/stdioRelay.ts --translate -- node echoServer.mjs: modern request lines translated to legacy ones and the answers back, nothing else',
    start: ({ echo, relay, profileFlags }) =>
      stdioProcess(
        start(
          node,
          [...BENCH_NODE_FLAGS, ...profileFlags('stdio-translating-relay'), ...relay, '--translate', '--', node, ...BENCH_NODE_FLAGS, echo],
          { cwd: root, protocol: true },
        ),
        true,
        false,
        true,
      ),
  },
  {
    key: 'wrap-stdio',
    label: 'wrap (stdio)',
    describe: 'mcp-dual-era serve --stdio -- node echoServer.mjs, modern request lines',
    start: ({ echo, wrapCli, profileFlags }) =>
      stdioProcess(
        start(
          node,
          [
            ...BENCH_NODE_FLAGS,
            ...profileFlags('wrap-stdio'),
            ...wrapCli,
            'serve',
            '--stdio',
            '--quiet',
            '--',
            node,
            ...BENCH_NODE_FLAGS,
            echo,
          ],
          { cwd: root, protocol: true },
        ),
        true,
        false,
        true,
      ),
  },
  {
    key: 'wrap-stdio-legacy',
    label: 'wrap (stdio), legacy client',
    describe:
      'mcp-dual-era serve --stdio -- node echoServer.mjs, a legacy session (initialize, then legacy request lines): what a legacy host gets, relayed',
    start: ({ echo, wrapCli, profileFlags }) =>
      stdioProcess(
        start(
          node,
          [
            ...BENCH_NODE_FLAGS,
            ...profileFlags('wrap-stdio-legacy'),
            ...wrapCli,
            'serve',
            '--stdio',
            '--quiet',
            '--',
            node,
            ...BENCH_NODE_FLAGS,
            echo,
          ],
          { cwd: root, protocol: true },
        ),
        false,
        true,
        true,
      ),
  },
];
