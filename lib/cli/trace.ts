/**
 * `--verbose`: every JSON-RPC message on both sides of a running command, one line each on stderr,
 * labelled with who sent it to whom and in which era (`legacy client → us`, `us → modern server`…).
 * Taps sit on the edges (HTTP request and response bodies, stdio lines, transports), so what is
 * shown is exactly what crossed the wire, before and after translation.
 */
import { createParser } from 'eventsource-parser';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { mediaType } from '../transport/sse.ts';
import { LineFramer } from '../transport/lineFramer.ts';

/** Shows one message that went from `from` to `to`. */
/** Shows one message going `from` → `to`; `carried` is the trace context it came with beside it (an HTTP request's headers). */
export type Trace = (from: string, to: string, message: unknown, carried?: { readonly traceparent?: string }) => void;

/** A tracer writing to stderr; colour when stderr is a terminal (and `NO_COLOR` is not set). */
export function stderrTrace(out: NodeJS.WriteStream = process.stderr): Trace {
  const colour = out.isTTY === true && !process.env['NO_COLOR'];
  const dim = (s: string) => (colour ? `\u001b[2m${s}\u001b[22m` : s);
  const bold = (s: string) => (colour ? `\u001b[1m${s}\u001b[22m` : s);
  return (from, to, message) => {
    const time = new Date().toISOString().slice(11, 23);
    out.write(`${dim(time)} ${bold(`${from} → ${to}`)} ${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  };
}

/** What a stdio server process of ours sends and receives, shown as `us → server` / `server → us`. */
export function upstreamTrace(trace: Trace): (direction: 'sent' | 'received', message: unknown) => void {
  return (direction, message) => (direction === 'sent' ? trace('us', 'server', message) : trace('server', 'us', message));
}

/** Each message of a JSON body (a batch is shown message by message). */
function traceJsonText(text: string, from: string, to: string, trace: Trace, carried?: { readonly traceparent?: string }): void {
  if (text.trim() === '') return;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    trace(from, to, `(not JSON) ${text.slice(0, 200)}`);
    return;
  }
  for (const message of Array.isArray(value) ? value : [value]) trace(from, to, message, carried);
}

/** The same response, its body tapped as it streams: JSON at its end, SSE event by event. */
function tappedResponse(response: Response, from: string, to: string, trace: Trace): Response {
  if (!response.body) return response;
  const type = mediaType(response);
  const decoder = new TextDecoder();
  let tap: (text: string, done: boolean) => void;
  if (type === 'text/event-stream') {
    const parser = createParser({ onEvent: (event) => traceJsonText(event.data, from, to, trace) });
    tap = (text) => parser.feed(text);
  } else {
    let all = '';
    tap = (text, done) => {
      all += text;
      if (done && type === 'application/json') traceJsonText(all, from, to, trace);
    };
  }
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        tap(decoder.decode(chunk, { stream: true }), false);
        controller.enqueue(chunk);
      },
      flush() {
        tap(decoder.decode(), true);
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** A `fetch` for an HTTP client of ours that shows what it sends and what comes back. */
export function tracingFetch(us: string, server: string, trace: Trace, base: typeof fetch = (...a) => fetch(...a)): typeof fetch {
  return async (input, init) => {
    if (typeof init?.body === 'string') traceJsonText(init.body, us, server, trace);
    const response = await base(input, init);
    return tappedResponse(response, server, us, trace);
  };
}

/** A Web fetch handler (our HTTP front) that shows each request body and what it answers. */
export function tracingHandler(
  handler: (request: Request) => Promise<Response>,
  client: string,
  us: string,
  trace: Trace,
): (request: Request) => Promise<Response> {
  return async (request) => {
    let forward = request;
    if (request.method === 'POST') {
      const text = await request.text();
      const traceparent = request.headers.get('traceparent');
      traceJsonText(text, client, us, trace, traceparent === null ? undefined : { traceparent });
      forward = new Request(request.url, { method: 'POST', headers: request.headers, body: text, signal: request.signal });
    }
    return tappedResponse(await handler(forward), us, client, trace);
  };
}

/** A stream that shows each line read from `input` as a message, and passes the bytes on. */
export function tracingInput(input: Readable, from: string, to: string, trace: Trace): Readable {
  const framer = new LineFramer((line) => traceJsonText(line, from, to, trace));
  const out = new PassThrough();
  input.on('data', (chunk: Buffer) => {
    framer.push(chunk);
    out.write(chunk);
  });
  input.on('end', () => {
    framer.end();
    out.end();
  });
  return out;
}

/** A stream that shows each line written to it as a message before it goes to `output`. */
export function tracingOutput(output: Writable, from: string, to: string, trace: Trace): Writable {
  const framer = new LineFramer((line) => traceJsonText(line, from, to, trace));
  const tap = new PassThrough();
  tap.on('data', (chunk: Buffer) => {
    framer.push(chunk);
    output.write(chunk);
  });
  return tap;
}
