/**
 * `npm run bench:front [-- --quick]`: what the wrap's HTTP front itself costs per modern
 * `tools/call`, with no process, pipe or socket in the way: CPU time per call and bytes allocated
 * per call through `wrap.node`, against a minimal front that only parses and re-serialises the
 * same messages (the least any translating front does), in the same run.
 *
 * The upstream is an in-process transport that answers each call on a microtask, as a legacy
 * server would (`{"result":…,"jsonrpc":"2.0","id":…}`); the request and response objects are
 * stand-ins with the members the front uses. Allocation is read from V8's GC profiler (heap used
 * before each collection, less heap used after the one before), so it counts every object a call
 * makes, whether or not it lived long. Unlike wall-clock figures on a shared machine it hardly
 * moves between runs: a change that allocates less shows here first.
 *
 * Then the same wrap with metrics on (no SDK registered), and with every request traced: first with
 * a stand-in SDK whose spans record (as far as our code can tell) and a stand-in propagator, both
 * costing nothing (what is left is our own part of tracing), then with the OpenTelemetry SDK and
 * its W3C propagator registered as a user would, spans batched to memory (the rest is the SDK's
 * own; the W3C propagator's part of it is timed apart).
 *
 * Prints a table; writes bench/results/front.json. Nothing is asserted but the answers. The wrap is
 * the library compiled as its package ships it (`buildLib`, as the wrap bench runs it); the bench's
 * own code (the minimal front, the stand-ins) runs through tsx.
 */
import { EventEmitter } from 'node:events';
import { GCProfiler } from 'node:v8';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { JsonRpcMessage } from '../lib/core/jsonrpc.ts';
import type { Transport } from '../lib/transport/transport.ts';
import { buildLib } from './shared/build.ts';
import { writeResults } from './shared/format.ts';
import { median } from './shared/stats.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
if (args.some((a) => a !== '--quick')) {
  console.error('usage: npm run bench:front -- [--quick]');
  process.exit(2);
}
// The library as its package ships it, compiled by tsc: run through tsx, every closure the front
// makes would also pay for the loader's name-keeping helper, which no user's process runs.
const { wrapLegacyServer } = (await import(
  pathToFileURL(join(dirname(buildLib()), '..', 'server.js')).href
)) as typeof import('../lib/server.ts');

const CALLS = quick ? 5_000 : 30_000;
const ROUNDS = quick ? 3 : 7;

/** The trace every request belongs to, and the caller's span in it (the requests' `traceparent`, marked sampled). */
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
const CALLER_TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`;

const META = JSON.stringify({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'front-bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, sampling: {} },
  traceparent: CALLER_TRACEPARENT,
});
const HEADERS = {
  host: '127.0.0.1:3000',
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
};
const BODIES = Array.from(
  { length: 1024 },
  (_, id) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"call-${id}"},"_meta":${META}}}`,
);

/** The upstream: a legacy server's answers, decoded as a stdio transport would hand them over. */
class EchoUpstream implements Transport {
  onmessage?: ((message: JsonRpcMessage) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  async start(): Promise<void> {}
  async close(): Promise<void> {
    this.onclose?.();
  }
  send(message: JsonRpcMessage): Promise<void> {
    if (!('id' in message) || !('method' in message)) return Promise.resolve();
    const answer = answerTo(message.method, message.params);
    const line = `{"result":${JSON.stringify(answer)},"jsonrpc":"2.0","id":${JSON.stringify(message.id)}}`;
    queueMicrotask(() => this.onmessage?.(JSON.parse(line) as JsonRpcMessage));
    return Promise.resolve();
  }
}

function answerTo(method: string, params: Record<string, unknown> | undefined): unknown {
  if (method === 'initialize')
    return { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'front-bench-echo', version: '1.0.0' } };
  if (method === 'tools/list')
    return { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }] };
  return { content: [{ type: 'text', text: (params?.['arguments'] as { text: string }).text }] };
}

/** A POST as Node hands it to a listener whose framework already read the body. */
function exchange(id: number, onEnd: (text: string) => void): { req: IncomingMessage; res: ServerResponse } {
  const req = Object.assign(new EventEmitter(), {
    method: 'POST',
    url: '/mcp',
    headers: HEADERS,
    readableEnded: true,
    body: BODIES[id % BODIES.length],
  });
  const res = Object.assign(new EventEmitter(), {
    writableEnded: false,
    destroyed: false,
    setHeader() {},
    writeHead() {
      return res;
    },
    end(text: string) {
      res.writableEnded = true;
      onEnd(text);
    },
  });
  return { req: req as unknown as IncomingMessage, res: res as unknown as ServerResponse };
}

type Front = (req: IncomingMessage, res: ServerResponse) => void;

/** The least a translating front does: parse the request, send a message on, parse the answer, answer. */
function minimalFront(): Front {
  const upstream = new EchoUpstream();
  const waiting = new Map<number, ServerResponse>();
  let next = 1;
  upstream.onmessage = (message) => {
    const m = message as { id: number; result: Record<string, unknown> };
    const res = waiting.get(m.id)!;
    waiting.delete(m.id);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: (res as unknown as { clientId: unknown }).clientId, result: m.result }));
  };
  return (req, res) => {
    const request = JSON.parse((req as unknown as { body: string }).body) as {
      id: number;
      method: string;
      params: Record<string, unknown>;
    };
    const id = next++;
    (res as unknown as { clientId: unknown }).clientId = request.id;
    waiting.set(id, res);
    void upstream.send({
      jsonrpc: '2.0',
      id,
      method: request.method,
      params: { name: request.params['name'], arguments: request.params['arguments'] },
    });
  };
}

function call(front: Front, id: number): Promise<string> {
  return new Promise((resolve) => {
    const { req, res } = exchange(id, resolve);
    front(req, res);
  });
}

interface Measured {
  readonly usPerCall: number;
  readonly bytesPerCall: number;
}

/** One measured round of `CALLS` calls: CPU time and bytes allocated per call. */
async function round(front: Front): Promise<Measured> {
  const profiler = new GCProfiler();
  profiler.start();
  const heapStart = process.memoryUsage().heapUsed;
  const cpuStart = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await call(front, i);
  const cpu = process.cpuUsage(cpuStart);
  const heapEnd = process.memoryUsage().heapUsed;
  const stats = profiler.stop()?.statistics ?? [];
  let allocated = 0;
  let after = heapStart;
  for (const gc of stats) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - after;
    after = gc.afterGC.heapStatistics.usedHeapSize;
  }
  allocated += heapEnd - after;
  return { usPerCall: (cpu.user + cpu.system) / CALLS, bytesPerCall: allocated / CALLS };
}

/** The median CPU time and the mean bytes of some rounds. */
function summary(rounds: readonly Measured[]): Measured {
  return {
    usPerCall: median(rounds.map((r) => r.usPerCall)),
    bytesPerCall: rounds.reduce((n, r) => n + r.bytesPerCall, 0) / rounds.length,
  };
}

async function measure(front: Front, check: (id: number, text: string) => void): Promise<Measured> {
  for (let i = 0; i < CALLS; i++) check(i, await call(front, i));
  const rounds: Measured[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await round(front));
  return summary(rounds);
}

/** What `front` costs beyond `base` a call: the median over the rounds of each round's difference with the round of `base` taken beside it. */
function pairedUs(base: InTurn, front: InTurn): number {
  return median(front.rounds.map((r, i) => r.usPerCall - base.rounds[i]!.usPerCall));
}

/** A front measured in turn with others: its summary, and its rounds in the order taken. */
interface InTurn extends Measured {
  readonly rounds: readonly Measured[];
}

/**
 * Fronts measured in turn, round by round (the order rotating), each after `enter()` sets up what
 * it runs with: so what a round costs does not depend on which came first, and a front's round can
 * be set against the rounds of the others beside it (`pairedUs`). Each is warmed first.
 */
async function inTurn(
  fronts: ReadonlyArray<{ front: Front; enter: () => void }>,
  check: (id: number, text: string) => void,
): Promise<InTurn[]> {
  for (const f of fronts) {
    f.enter();
    for (let i = 0; i < CALLS; i++) check(i, await call(f.front, i));
  }
  const rounds: Measured[][] = fronts.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < fronts.length; k++) {
      const at = (k + r) % fronts.length;
      fronts[at]!.enter();
      rounds[at]!.push(await round(fronts[at]!.front));
    }
  }
  return rounds.map((r) => ({ ...summary(r), rounds: r }));
}

const wrap = wrapLegacyServer({
  upstream: { kind: 'in-process', describe: 'an in-process echo server', connect: async () => new EchoUpstream() },
});
const checkWrap = (id: number, text: string) => {
  const m = JSON.parse(text) as { id?: unknown; result?: { resultType?: unknown; content?: Array<{ text?: unknown }> } };
  if (m.id !== id % BODIES.length || m.result?.resultType !== 'complete' || m.result.content?.[0]?.text !== `call-${id % BODIES.length}`)
    throw new Error(`wrong answer to ${id}: ${text.slice(0, 200)}`);
};
const checkMinimal = (id: number, text: string) => {
  const m = JSON.parse(text) as { id?: unknown };
  if (m.id !== id % BODIES.length) throw new Error(`wrong answer to ${id}: ${text.slice(0, 200)}`);
};

console.log(
  `mcp-dual-era front bench — node ${process.version}; ${ROUNDS} rounds of ${CALLS} calls each after ${CALLS} unmeasured${quick ? ' (quick)' : ''}`,
);
const minimal = await measure(minimalFront(), checkMinimal);
const wrapped = await measure(wrap.node, checkWrap);
await wrap.close();

// Every request traced. First with a stand-in SDK whose spans record (our code does all it does for
// a recorded span) but cost nothing, and a stand-in propagator that costs nothing either: what is
// left is our own part. Then with the SDK and its W3C propagator registered as a user would
// (batched to memory, emptied every second): the rest is the SDK's own.
const { BatchSpanProcessor, InMemorySpanExporter } = await import('@opentelemetry/sdk-trace-base');
const { NodeTracerProvider } = await import('@opentelemetry/sdk-trace-node');
const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
const { propagation, ROOT_CONTEXT, trace, TraceFlags } = await import('@opentelemetry/api');
type TextMapPropagator = import('@opentelemetry/api').TextMapPropagator;
const echoUpstream = { kind: 'in-process' as const, describe: 'an in-process echo server', connect: async () => new EchoUpstream() };

let standInSpans = 0;
/** The span contexts stand-in spans take in turn (made ahead: a span that costs nothing makes none). */
const STAND_IN_CONTEXTS = Array.from({ length: 1024 }, (_, i) => ({
  traceId: TRACE_ID,
  spanId: (i + 1).toString(16).padStart(16, '0'),
  traceFlags: TraceFlags.SAMPLED,
}));
/** A span that records, as far as the caller can tell, and keeps nothing (methods on the prototype: nothing made per span but itself). */
class StandInSpan {
  readonly #context: { traceId: string; spanId: string; traceFlags: number };
  constructor(traceId: string | undefined) {
    const made = STAND_IN_CONTEXTS[standInSpans++ & 1023]!;
    this.#context = traceId === undefined || traceId === TRACE_ID ? made : { ...made, traceId };
  }
  spanContext() {
    return this.#context;
  }
  setAttribute() {
    return this;
  }
  setAttributes() {
    return this;
  }
  addEvent() {
    return this;
  }
  addLink() {
    return this;
  }
  addLinks() {
    return this;
  }
  setStatus() {
    return this;
  }
  updateName() {
    return this;
  }
  end() {}
  isRecording() {
    return true;
  }
  recordException() {}
}
const standInTracer = {
  startSpan: (_name: string, _options: unknown, ctx?: Parameters<typeof trace.getSpanContext>[0]) =>
    new StandInSpan(ctx ? trace.getSpanContext(ctx)?.traceId : undefined) as unknown as import('@opentelemetry/api').Span,
  startActiveSpan: () => undefined as never,
};
/** The W3C propagator's part of a traced call: the caller's context read from its `traceparent`, and the upstream call's written. */
function propagatorOnly(): number {
  const carrier = { traceparent: CALLER_TRACEPARENT };
  const times: number[] = [];
  for (let round = 0; round < ROUNDS + 1; round++) {
    const cpuStart = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) {
      const parent = propagation.extract(ROOT_CONTEXT, carrier);
      const out: Record<string, string> = {};
      propagation.inject(trace.setSpan(parent, new StandInSpan(undefined) as unknown as import('@opentelemetry/api').Span), out);
    }
    const cpu = process.cpuUsage(cpuStart);
    if (round > 0) times.push((cpu.user + cpu.system) / CALLS);
  }
  return median(times);
}
const standInProvider = { getTracer: () => standInTracer };
/**
 * A propagator that costs nothing: the caller's `traceparent` read through the getter it is given,
 * and one context made ahead given back for it; the upstream call's written through the setter,
 * one string made ahead.
 */
const REMOTE_PARENT = trace.setSpanContext(ROOT_CONTEXT, {
  traceId: TRACE_ID,
  spanId: CALLER_SPAN_ID,
  traceFlags: TraceFlags.SAMPLED,
  isRemote: true,
});
const OUTGOING = `00-${TRACE_ID}-b7ad6b7169203331-01`;
const standInPropagator: TextMapPropagator = {
  extract: (context, carrier, getter) => (getter.get(carrier, 'traceparent') === undefined ? context : REMOTE_PARENT),
  inject: (_context, carrier, setter) => setter.set(carrier, 'traceparent', OUTGOING),
  fields: () => ['traceparent'],
};
const w3c = new W3CTraceContextPropagator();
const untraced = (): void => {
  trace.disable();
  propagation.disable();
};
/** Registers `provider` and `propagator` in place of whatever was (as the API takes one of each once). */
const registered = (provider: typeof standInProvider, propagator: TextMapPropagator): void => {
  untraced();
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(propagator);
};
const standIn = (): void => registered(standInProvider, standInPropagator);
const plainWrap = wrapLegacyServer({ upstream: echoUpstream });
const ownWrap = wrapLegacyServer({ upstream: echoUpstream });
const metricsWrap = wrapLegacyServer({ upstream: echoUpstream, metrics: true });
const standInBefore = standInSpans;
let standInCalls = 0;
const counted =
  (front: Front): Front =>
  (req, res) => {
    standInCalls++;
    front(req, res);
  };
const [plainInTurn, ours, metricsOn] = (await inTurn(
  [
    { front: plainWrap.node, enter: untraced },
    { front: counted(ownWrap.node), enter: standIn },
    { front: metricsWrap.node, enter: untraced },
  ],
  checkWrap,
)) as [InTurn, InTurn, InTurn];
const spansPerCall = (standInSpans - standInBefore) / standInCalls;
await plainWrap.close();
await ownWrap.close();
await metricsWrap.close();
registered(standInProvider, w3c);
// Timed after the wrap's own run, warm as it was: reported within the SDK's own.
propagatorOnly();
const propagatorUs = propagatorOnly();
untraced();

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
provider.register();
const emptying = setInterval(() => exporter.reset(), 1000);
const tracedWrap = wrapLegacyServer({ upstream: echoUpstream });
const traced = await measure(tracedWrap.node, checkWrap);
await tracedWrap.close();
clearInterval(emptying);
await provider.shutdown();

// A tenth of the requests sampled, metrics on: the SDK as bench/wrap/otelSampled.mjs registers it
// (a parent-based sampler whose remote-parent branch takes every tenth request; the bodies' one
// traceparent says sampled), against the same wrap with no SDK and metrics off, in turn.
const { ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler } = await import('@opentelemetry/sdk-trace-base');
let sampledSeen = 0;
const everyTenth = {
  shouldSample: () => ({ decision: sampledSeen++ % 10 === 0 ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD }),
  toString: () => 'EveryTenth',
};
const sampledExporter = new InMemorySpanExporter();
const sampledProvider = new NodeTracerProvider({
  sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1), remoteParentSampled: everyTenth }),
  spanProcessors: [new BatchSpanProcessor(sampledExporter)],
});
const sampledEmptying = setInterval(() => sampledExporter.reset(), 1000);
// And the same with stand-ins that cost nothing (a tenth of the spans the stand-in that records,
// the rest one non-recording span, and the stand-in propagator): our own part, metrics included.
let standInSeen = 0;
const notRecorded = trace.wrapSpanContext({
  traceId: TRACE_ID,
  spanId: CALLER_SPAN_ID,
  traceFlags: TraceFlags.NONE,
});
const standInSampledProvider = {
  getTracer: () => ({
    startSpan: (name: string, options: unknown, ctx?: Parameters<typeof trace.getSpanContext>[0]) =>
      standInSeen++ % 10 === 0 ? standInTracer.startSpan(name, options, ctx) : notRecorded,
    startActiveSpan: () => undefined as never,
  }),
};
const standInSampled = (): void => registered(standInSampledProvider, standInPropagator);
const offWrap = wrapLegacyServer({ upstream: echoUpstream });
const standInSampledWrap = wrapLegacyServer({ upstream: echoUpstream, metrics: true });
const sampledWrap = wrapLegacyServer({ upstream: echoUpstream, metrics: true });
const [bothOff, sampledOurs, sampled] = (await inTurn(
  [
    { front: offWrap.node, enter: untraced },
    { front: standInSampledWrap.node, enter: standInSampled },
    { front: sampledWrap.node, enter: () => sampledProvider.register() },
  ],
  checkWrap,
)) as [InTurn, InTurn, InTurn];
untraced();
await offWrap.close();
await standInSampledWrap.close();
await sampledWrap.close();
clearInterval(sampledEmptying);
await sampledProvider.shutdown();

// Differences of rounds taken side by side: CPU time per call drifts on a shared machine between rounds far more than within one.
const ownUs = pairedUs(plainInTurn, ours);
const metricsUs = pairedUs(plainInTurn, metricsOn);
const sampledOwnUs = pairedUs(bothOff, sampledOurs);
const sampledSdkUs = pairedUs(sampledOurs, sampled);
const sdkUs = traced.usPerCall - ours.usPerCall;

const row = (label: string, m: Measured) =>
  `${label.padEnd(34)} ${m.usPerCall.toFixed(1).padStart(8)} ${Math.round(m.bytesPerCall).toLocaleString('en-US').padStart(12)}`;
console.log('');
console.log(`${'front'.padEnd(34)} ${'µs/call'.padStart(8)} ${'bytes/call'.padStart(12)}`);
console.log(row('parse + re-serialise only', minimal));
console.log(row('the wrap (wrap.node)', wrapped));
console.log(
  `${'the wrap ÷ parse + re-serialise'.padEnd(34)} ${`${(wrapped.usPerCall / minimal.usPerCall).toFixed(2)}×`.padStart(8)} ${`${(wrapped.bytesPerCall / minimal.bytesPerCall).toFixed(2)}×`.padStart(12)}`,
);
console.log(row('metrics on (no SDK registered)', metricsOn));
console.log(row('traced, spans that cost nothing', ours));
console.log(row('traced, the OpenTelemetry SDK', traced));
console.log(row('both off (in turn with the next)', bothOff));
console.log(row('a tenth sampled, stand-ins, metrics', sampledOurs));
console.log(row('a tenth sampled by the SDK, metrics', sampled));
console.log('');
console.log(`metrics on: +${metricsUs.toFixed(1)} µs a call`);
console.log(
  `every request traced: +${(traced.usPerCall - plainInTurn.usPerCall).toFixed(1)} µs a call (${spansPerCall.toFixed(2)} spans a call): ours ${ownUs.toFixed(1)} µs, the SDK's own ${sdkUs.toFixed(1)} µs (its W3C propagator's ${propagatorUs.toFixed(1)} µs included); goal ≤ 3 µs of our own: ${ownUs <= 3 ? 'met' : 'NOT met'}`,
);
console.log(
  `a tenth of the requests sampled by the SDK, metrics on: +${pairedUs(bothOff, sampled).toFixed(1)} µs a call: ours, metrics included, ${sampledOwnUs.toFixed(1)} µs, the SDK's own ${sampledSdkUs.toFixed(1)} µs`,
);
console.log(
  '(CPU time of this process per call, median of the rounds; bytes allocated on the JavaScript heap per call, mean of the rounds)',
);
writeResults('front.json', {
  generatedAt: new Date().toISOString(),
  node: process.version,
  calls: CALLS,
  rounds: ROUNDS,
  quick,
  minimal,
  wrapped,
  ratio: { cpu: wrapped.usPerCall / minimal.usPerCall, bytes: wrapped.bytesPerCall / minimal.bytesPerCall },
  metrics: metricsOn,
  metricsUsPerCall: metricsUs,
  traced: {
    plain: plainInTurn,
    standIn: ours,
    sdk: traced,
    spansPerCall,
    ownUsPerCall: ownUs,
    sdkUsPerCall: sdkUs,
    propagatorUsPerCall: propagatorUs,
    goalOwnUs: 3,
  },
  sampled: {
    bothOff,
    standIn: sampledOurs,
    sdk: sampled,
    ownUsPerCall: sampledOwnUs,
    sdkUsPerCall: sampledSdkUs,
  },
});
