/**
 * What a forward answers when the owner cannot answer (its defined errors: the call's owner gone,
 * a legacy session's 404, new work to send again), and how an owner's answer is passed on: an
 * event stream is followed for the answers it carries, so that one that breaks off ends with the
 * defined error for each request it left unanswered, and every request gets one answer.
 */
import type { ServerResponse } from 'node:http';
import { ErrorCode } from '../core/errors.ts';
import { errorResponse, type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import type { ForwardedCall, ForwardedFor } from '../fronts/served.ts';
import { exactJson, holdExactIds } from '../transport/exactIds.ts';

/**
 * The error a call's client is told when the call its state names cannot be reached, or a task's
 * client when the replica whose upstream ran the task is gone: the task is lost with it.
 */
function ownerGoneError(what: ForwardedCall, id: JsonRpcRequest['id'], owner: string, why: string) {
  if (what.task !== undefined)
    return errorResponse(id, {
      code: ErrorCode.InvalidParams,
      message: `Task ${what.task} is lost: the replica whose server ran it is gone (${why}); call the tool again`,
      data: { reason: 'owner-gone', owner, taskId: what.task },
    });
  return errorResponse(id, {
    code: ErrorCode.InvalidParams,
    message: `requestState refers to a call on a replica that is gone (${why}): send the original request again, without requestState`,
    data: { reason: 'owner-gone', owner, retryWithoutRequestState: true },
  });
}

/** A defined answer of the forwarding itself (the owner gone), before it is written. */
export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The answer when the owner is gone: the call's defined error, a legacy session's 404 (its client
 * initializes again), or for new work handed over by a draining replica, 503 (send it again).
 */
export function goneReply(what: ForwardedFor, owner: string, why: string): Reply {
  const json = { 'content-type': 'application/json' };
  if ('call' in what) return { status: 400, headers: json, body: exactJson(ownerGoneError(what, what.call, owner, why)) };
  if ('session' in what)
    return {
      status: 404,
      headers: json,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: ErrorCode.SessionNotFound, message: `Session not found: the replica that held it is gone (${why})` },
      }),
    };
  const body = errorResponse(what.handedOver, {
    code: ErrorCode.InternalError,
    message: `Internal error: this replica is draining and the one it handed the request to is gone (${why}); send the request again`,
  });
  return { status: 503, headers: { ...json, 'retry-after': '0' }, body: exactJson(body) };
}

/** The answer when the directory cannot be asked where `owner` is: 503, to be sent again shortly. */
export function unreachableReply(what: ForwardedFor, owner: string): Reply {
  const id = 'call' in what ? what.call : 'handedOver' in what ? what.handedOver : null;
  const body = errorResponse(id, {
    code: ErrorCode.InternalError,
    message: `Internal error: the fleet's directory (its Redis) cannot be reached to find replica ${owner}, which holds this; send it again shortly`,
  });
  return { status: 503, headers: { 'content-type': 'application/json', 'retry-after': '1' }, body: exactJson(body) };
}

export const asResponse = (reply: Reply): Response => new Response(reply.body, { status: reply.status, headers: reply.headers });

/** Writes `reply` on Node's response, unless an answer has begun there. */
export function writeReply(res: ServerResponse, reply: Reply): void {
  if (!res.headersSent && !res.destroyed) res.writeHead(reply.status, reply.headers).end(reply.body);
}

/**
 * The last events of a stream that broke off before it answered `ids`: the defined error for each
 * (a call's owner gone; for other requests, an error that says to send them again).
 */
export function brokenEvents(what: ForwardedFor, ids: readonly RequestId[], owner: string, why: string): string {
  const gone = ids.map((id) =>
    'call' in what
      ? ownerGoneError(what, id, owner, why)
      : errorResponse(id, {
          code: ErrorCode.InternalError,
          message: `Internal error: the replica serving this request is gone (${why}); send it again${'session' in what ? ' in a new session' : ''}`,
        }),
  );
  return gone.map((m) => `event: message\ndata: ${exactJson(m)}\n\n`).join('');
}

/**
 * Follows an event stream as it passes, chunk by chunk, and takes off `unanswered` each request
 * whose answer goes by.
 */
export function answerWatch(unanswered: Set<RequestId>): (chunk: Uint8Array) => void {
  const decoder = new TextDecoder();
  let line = '';
  return (chunk) => {
    if (unanswered.size === 0) return;
    const lines = (line + decoder.decode(chunk, { stream: true })).split('\n');
    line = lines.pop() ?? '';
    for (const l of lines) {
      if (!l.startsWith('data:')) continue;
      const id = answered(l.slice(5));
      if (id !== undefined) unanswered.delete(id);
    }
  };
}

/**
 * The owner's answer body, passed on as it comes; `ended` is called once it is over (read to the
 * end, broken, or left by the client). An event stream is followed for the answers it carries: if
 * it breaks before it is done, `broken` gives a last chunk for the requests still unanswered (the
 * defined error for each), so every request gets one answer, not a cut stream.
 */
export function passedOn(
  body: ReadableStream<Uint8Array>,
  ended: () => void,
  unanswered: Set<RequestId> | undefined,
  broken: (ids: readonly RequestId[]) => Uint8Array | undefined,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const watch = unanswered ? answerWatch(unanswered) : undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) {
          watch?.(value);
          return controller.enqueue(value);
        }
        ended();
        controller.close();
      } catch {
        ended();
        const last = unanswered && unanswered.size > 0 ? broken([...unanswered]) : undefined;
        if (last) controller.enqueue(last);
        controller.close();
      }
    },
    cancel(reason) {
      ended();
      return reader.cancel(reason);
    },
  });
}

/** The id of the answer an event's data carries, if it is one (held exactly, as `requestIds` holds the body's). */
function answered(data: string): RequestId | undefined {
  try {
    const message = holdExactIds(JSON.parse(data), data) as { id?: RequestId; method?: string };
    return message.method === undefined ? message.id : undefined;
  } catch {
    return undefined;
  }
}

/** The ids of the requests in a forwarded body (a message or a batch). */
export function requestIds(body: string | undefined): RequestId[] {
  if (body === undefined) return [];
  try {
    const parsed = holdExactIds(JSON.parse(body), body);
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((m) =>
      isRecord(m) && typeof m['method'] === 'string' && (typeof m['id'] === 'string' || typeof m['id'] === 'number') ? [m['id']] : [],
    );
  } catch {
    return [];
  }
}
