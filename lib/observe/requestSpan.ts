/**
 * Spans through `@opentelemetry/api`: one per request served (kind server) and one per call sent
 * upstream for it (kind client, its trace context written into the upstream request's `_meta`).
 * Without an OpenTelemetry SDK registered in the process every span is the API's non-recording
 * one: nothing is recorded and `_meta` is passed on as the caller sent it. Names and attributes
 * follow the conventions in `conventions.ts`.
 */
import { createRequire } from 'node:module';
import type * as OpenTelemetry from '@opentelemetry/api';
import type { Attributes, Context, Span, SpanContext, SpanOptions, TextMapGetter, TextMapSetter, Tracer } from '@opentelemetry/api';
import type { JsonRpcResponse, RequestId } from '../core/jsonrpc.ts';
import { isRecord, type JsonObject } from '../core/primitives.ts';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../core/version.ts';
import { Attr, EXECUTE_TOOL } from './conventions.ts';
import { withTraceMeta, type TraceCarrier } from './traceContext.ts';

/**
 * The OpenTelemetry API, loaded when first needed: a process that registers no SDK (and has
 * metrics off) never loads it, and a stdio host's first answer does not wait for it.
 */
let loaded: typeof OpenTelemetry | undefined;
export function otel(): typeof OpenTelemetry {
  return (loaded ??= createRequire(import.meta.url)('@opentelemetry/api') as typeof OpenTelemetry);
}

/** Where every copy of the API (1.x) keeps what an SDK registered, whichever copy registered it. */
const API_GLOBAL = Symbol.for('opentelemetry.js.api.1');

/** The tracer every span of ours comes from (the API's proxy: it finds an SDK registered later too). */
let tracer: Tracer | undefined;
/** The tracer provider the API held when last looked at, and whether it records. */
let seen: { registered: unknown; tracing: boolean } = { registered: undefined, tracing: false };
function ourTracer(): Tracer {
  return (tracer ??= otel().trace.getTracer(PACKAGE_NAME, PACKAGE_VERSION));
}

/**
 * Whether an OpenTelemetry SDK is registered in this process: only then is anything looked up for
 * a span (the first round's context in a retry's `requestState`, say).
 */
export function tracingRegistered(): boolean {
  const registered = (globalThis as { [API_GLOBAL]?: { trace?: unknown } })[API_GLOBAL];
  if (registered?.trace === undefined) return false;
  // What the API holds is looked at again only when it changed (an SDK registered, or disabled).
  if (registered.trace === seen.registered) return seen.tracing;
  const { trace, ProxyTracerProvider } = otel();
  const provider = trace.getTracerProvider();
  const tracing = !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(PACKAGE_NAME, PACKAGE_VERSION) !== undefined;
  seen = { registered: registered.trace, tracing };
  // A tracer from what was registered before (disabled since) records nothing: ours is asked for again.
  tracer = undefined;
  return tracing;
}

const getter: TextMapGetter<TraceCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key as keyof TraceCarrier],
};

const setter: TextMapSetter<TraceCarrier> = {
  set: (carrier, key, value) => {
    if (key === 'traceparent' || key === 'tracestate' || key === 'baggage') carrier[key] = value;
  },
};

/**
 * The API's propagation (which asks the propagator registered at each call) and root context, read
 * from the module once: its exports are getters, and every request traced reads them.
 */
let propagating: { readonly propagation: typeof OpenTelemetry.propagation; readonly root: Context } | undefined;

/** The context a carrier names (the root context when it names none, or no propagator is registered). */
export function contextOf(carrier: TraceCarrier | undefined): Context {
  const { propagation, root } = (propagating ??= { propagation: otel().propagation, root: otel().ROOT_CONTEXT });
  return carrier ? propagation.extract(root, carrier, getter) : root;
}

/** What a span's name and first attributes are made of. */
export interface RequestFacts {
  readonly method: string;
  readonly params: JsonObject | undefined;
  readonly id: RequestId;
  /** `tcp` (HTTP) or `pipe` (stdio). */
  readonly transport: 'tcp' | 'pipe';
  readonly clientEra: 'modern' | 'legacy';
  /** Unknown (left out of the attributes) where the server's era is not known ahead (`connect` before its probe). */
  readonly serverEra: 'modern' | 'legacy' | undefined;
  readonly protocolVersion?: string | undefined;
}

/** `{method} {tool or prompt name}` (the method alone for anything else), as the conventions name MCP spans. */
function spanName(method: string, params: JsonObject | undefined): string {
  const name = params?.['name'];
  return (method === 'tools/call' || method === 'prompts/get') && typeof name === 'string' ? `${method} ${name}` : method;
}

function targetAttributes(method: string, params: JsonObject | undefined, into: Attributes): Attributes {
  const name = params?.['name'];
  if (method === 'tools/call' && typeof name === 'string') {
    into[Attr.toolName] = name;
    into[Attr.operationName] = EXECUTE_TOOL;
  } else if (method === 'prompts/get' && typeof name === 'string') into[Attr.promptName] = name;
  else if (method === 'resources/read' && typeof params?.['uri'] === 'string') into[Attr.resourceUri] = params['uri'];
  return into;
}

/** Records a JSON-RPC answer on `span`: its error code (status error) or its result type. */
function recordAnswer(
  span: Span,
  message: JsonRpcResponse | { error: { code: number; message: string } } | { result: unknown } | undefined,
): void {
  if (!message) {
    span.setAttribute(Attr.resultType, 'none');
    return;
  }
  if ('error' in message) {
    const code = String(message.error.code);
    span.setAttribute(Attr.statusCode, code);
    span.setAttribute(Attr.errorType, code);
    span.setStatus({ code: otel().SpanStatusCode.ERROR, message: message.error.message });
    return;
  }
  const result = message.result;
  span.setAttribute(Attr.resultType, isRecord(result) && result['resultType'] === 'input_required' ? 'input_required' : 'complete');
}

/** The span of a call sent upstream: the params to send (with its trace context), and its end. */
export interface UpstreamSpan {
  readonly params: JsonObject | undefined;
  /** Ends the span with the upstream's answer (`undefined`: none came, the request was cancelled). */
  end(outcome: { error: { code: number; message: string } } | { result: unknown } | undefined): void;
}

const UNTRACED_END = (): void => {};

/** The options of every request's span (one object: a span not sampled costs no more than the SDK's decision). */
let serverSpan: SpanOptions | undefined;

/** The one span every untraced request shares (the API's non-recording span, whose methods do nothing), in the root context. */
let untracedSpan: { readonly span: Span; readonly root: Context } | undefined;

/** The span of one request served. */
export class RequestSpan {
  readonly #span: Span;
  readonly #parent: Context;
  #context: Context | undefined;
  readonly #serverEra: 'modern' | 'legacy' | undefined;
  #ended = false;

  private constructor(span: Span, parent: Context, serverEra: 'modern' | 'legacy' | undefined) {
    this.#span = span;
    this.#parent = parent;
    this.#serverEra = serverEra;
  }

  /** The context the request's child spans start in (made when first asked for: a span not recorded never needs it). */
  get context(): Context {
    return (this.#context ??= otel().trace.setSpan(this.#parent, this.#span));
  }

  /** The span of a request observed while no SDK is registered (metrics or the access log on): nothing to record, nothing asked of the API. */
  static untraced(): RequestSpan {
    const { span, root } = (untracedSpan ??= {
      span: otel().trace.wrapSpanContext(otel().INVALID_SPAN_CONTEXT),
      root: otel().ROOT_CONTEXT,
    });
    return new RequestSpan(span, root, undefined);
  }

  /** Starts the span of a request whose caller's trace context is `carrier` (a root span without one). */
  static start(facts: RequestFacts, carrier: TraceCarrier | undefined): RequestSpan {
    const parent = contextOf(carrier);
    const span = ourTracer().startSpan(spanName(facts.method, facts.params), (serverSpan ??= { kind: otel().SpanKind.SERVER }), parent);
    if (span.isRecording()) {
      const attributes: Attributes = {
        [Attr.methodName]: facts.method,
        [Attr.requestId]: String(facts.id),
        [Attr.networkTransport]: facts.transport,
        [Attr.clientEra]: facts.clientEra,
      };
      if (facts.serverEra !== undefined) attributes[Attr.serverEra] = facts.serverEra;
      if (facts.protocolVersion !== undefined) attributes[Attr.protocolVersion] = facts.protocolVersion;
      span.setAttributes(targetAttributes(facts.method, facts.params, attributes));
    }
    return new RequestSpan(span, parent, facts.serverEra);
  }

  /** Whether an SDK records this span (attributes are only worked out when it does). */
  get recording(): boolean {
    return this.#span.isRecording();
  }

  /** The span's context as a `traceparent`, when it is recorded (undefined otherwise). */
  traceparent(): string | undefined {
    if (!this.recording) return undefined;
    const carrier: TraceCarrier = {};
    otel().propagation.inject(this.context, carrier, setter);
    return carrier.traceparent;
  }

  set(key: string, value: string | number | boolean): void {
    if (this.#span.isRecording()) this.#span.setAttribute(key, value);
  }

  /** Links this span to another (a retry's to its call's first round). */
  link(to: SpanContext | undefined): void {
    if (to && otel().isSpanContextValid(to) && this.#span.isRecording()) this.#span.addLink({ context: to });
  }

  /** Starts the span of the upstream call made for this request, and puts its trace context into the params sent. */
  upstream(method: string, params: JsonObject | undefined): UpstreamSpan {
    if (!this.#span.isRecording()) return { params, end: UNTRACED_END };
    const attributes: Attributes = { [Attr.methodName]: method };
    if (this.#serverEra !== undefined) attributes[Attr.serverEra] = this.#serverEra;
    const { SpanKind, propagation, trace } = otel();
    const span = ourTracer().startSpan(
      spanName(method, params),
      { kind: SpanKind.CLIENT, attributes: targetAttributes(method, params, attributes) },
      this.context,
    );
    const carrier: TraceCarrier = {};
    propagation.inject(trace.setSpan(this.context, span), carrier, setter);
    return {
      params: withTraceMeta(params, carrier),
      end: (outcome) => {
        recordAnswer(span, outcome);
        span.end();
      },
    };
  }

  /** Ends the span of a request this replica forwarded to the replica that owns it (`forwardedTo`), whatever it answered. */
  static forwarded(facts: RequestFacts, carrier: TraceCarrier | undefined, owner: string): { end(): void } {
    if (!tracingRegistered()) return { end: UNTRACED_END };
    const span = RequestSpan.start(facts, carrier);
    span.set(Attr.forwardedTo, owner);
    return { end: () => span.#close() };
  }

  #close(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#span.end();
  }

  /** Ends the span with the answer given (`undefined`: the client left a listen). Once. */
  end(message: JsonRpcResponse | undefined, failure?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#span.isRecording()) {
      if (failure !== undefined) {
        this.#span.recordException(failure instanceof Error ? failure : String(failure));
        this.#span.setStatus({ code: otel().SpanStatusCode.ERROR, message: failure instanceof Error ? failure.message : String(failure) });
      } else recordAnswer(this.#span, message);
    }
    this.#span.end();
  }
}
