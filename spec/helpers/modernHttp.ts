/**
 * A modern (2026-07-28) request over HTTP as a client on the wire sends it: the `_meta` envelope,
 * the routing headers, `Authorization` naming the caller; the answer read whether it came as JSON
 * or as an event stream. For specs that play many callers at once against a real listener.
 */
import { modernMeta } from './messages.ts';
import { readEvents } from './eventStream.ts';

export interface ModernPostOptions {
  /** The caller, sent as `Authorization: Bearer <principal>` (none: no header). */
  readonly principal?: string;
  readonly capabilities?: Record<string, unknown>;
  readonly id?: string | number;
  /** More `_meta` (a progress token, a log level…). */
  readonly meta?: Record<string, unknown>;
  readonly signal?: AbortSignal;
}

export interface ModernAnswer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly contentType: string | null;
  /** The answer (its `result` or `error`). */
  readonly message: Record<string, any>;
  /** Notifications before it, when streamed. */
  readonly notifications: Array<Record<string, any>>;
}

/** POSTs one modern request as a client on the wire sends it: the envelope, the routing headers, `Authorization`. */
function send(
  url: string | URL,
  method: string,
  params: Record<string, unknown>,
  options: ModernPostOptions,
  defaultId: string | number,
): Promise<Response> {
  const body = {
    jsonrpc: '2.0',
    id: options.id ?? defaultId,
    method,
    params: { ...params, _meta: modernMeta({ 'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? {}, ...options.meta }) },
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  const name = params['name'] ?? params['uri'];
  if (typeof name === 'string' && ['tools/call', 'prompts/get', 'resources/read'].includes(method)) headers['mcp-name'] = name;
  if (options.principal !== undefined) headers['authorization'] = `Bearer ${options.principal}`;
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), ...(options.signal ? { signal: options.signal } : {}) });
}

/** POSTs one modern request to `url` and reads its one answer. */
export async function modernPost(
  url: string | URL,
  method: string,
  params: Record<string, unknown> = {},
  options: ModernPostOptions = {},
): Promise<ModernAnswer> {
  const res = await send(url, method, params, options, 1);
  const contentType = res.headers.get('content-type');
  const retryAfter = res.headers.get('retry-after');
  if (contentType?.startsWith('text/event-stream')) {
    const { messages } = await readEvents(res);
    const last = messages.at(-1) ?? {};
    return { status: res.status, retryAfter, contentType, message: last, notifications: messages.slice(0, -1) };
  }
  const text = await res.text();
  return {
    status: res.status,
    retryAfter,
    contentType,
    message: text === '' ? {} : (JSON.parse(text) as Record<string, any>),
    notifications: [],
  };
}

/**
 * Opens a `subscriptions/listen` stream and resolves once it is acknowledged, with a `close()`
 * that ends it as a client does (closing the stream); a refusal resolves with the answer instead.
 */
export async function openListen(
  url: string | URL,
  options: ModernPostOptions & { readonly notifications?: Record<string, unknown> } = {},
): Promise<
  | { acknowledged: true; close(): void; ended: Promise<Array<Record<string, any>>>; seen: ReadonlyArray<Record<string, any>> }
  | { acknowledged: false; answer: ModernAnswer }
> {
  const controller = new AbortController();
  // The caller's signal ends the listen too, while it opens as well as once it is open.
  if (options.signal?.aborted) controller.abort();
  else options.signal?.addEventListener('abort', () => controller.abort(), { once: true });
  const res = await send(
    url,
    'subscriptions/listen',
    { notifications: options.notifications ?? { toolsListChanged: true } },
    { ...options, signal: controller.signal },
    'listen',
  );
  const contentType = res.headers.get('content-type');
  if (!contentType?.startsWith('text/event-stream')) {
    const text = await res.text();
    return {
      acknowledged: false,
      answer: {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        contentType,
        message: JSON.parse(text) as Record<string, any>,
        notifications: [],
      },
    };
  }
  const seen: Array<Record<string, any>> = [];
  let acknowledged!: () => void;
  const ack = new Promise<void>((resolve) => (acknowledged = resolve));
  const ended = readEvents(res, (m) => {
    seen.push(m);
    if (m['method'] === 'notifications/subscriptions/acknowledged') acknowledged();
    return false;
  }).then(
    (r) => r.messages,
    () => seen,
  );
  const first = await Promise.race([ack.then(() => 'ack' as const), ended.then(() => 'ended' as const)]);
  if (first === 'ended') {
    const all = await ended;
    return {
      acknowledged: false,
      answer: { status: res.status, retryAfter: null, contentType, message: all.at(-1) ?? {}, notifications: all.slice(0, -1) },
    };
  }
  return { acknowledged: true, close: () => controller.abort(), ended, seen };
}
