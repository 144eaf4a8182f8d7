/**
 * The front of an OAuth-protected server (RFC 9728): the wrap stands on the server's public URL
 * and passes each caller's `Authorization` to it. This answers the protected-resource metadata on
 * the front (the upstream's, naming the front's resource), points the upstream's challenges at it,
 * and holds the guard against passing a caller's token to a server of another resource.
 */
import { readBounded } from '../transport/messageBound.ts';
import { jsonError, jsonResponse } from '../transport/httpEdge.ts';
import { ErrorCode } from '../core/errors.ts';
import { isRecord } from '../core/primitives.ts';

/** Options of {@link ProtectedResource}. */
export interface ProtectedResourceOptions {
  /** The upstream's MCP endpoint. */
  readonly upstream: string | URL;
  /**
   * The URL clients reach the wrap's endpoint at, which is the protected resource tokens are
   * issued for (default: the URL each request came to, from its Host header and path).
   */
  readonly resource?: string | URL;
  /** The fetch the upstream's metadata is read with (default `globalThis.fetch`). */
  readonly fetch?: typeof globalThis.fetch;
  /** How long the upstream's metadata is kept once read (default 5 minutes). */
  readonly cacheMs?: number;
}

/** The well-known path of protected-resource metadata (RFC 9728 §3). */
export const METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The `resource_metadata` parameter of a challenge, quoted (group 1) or as a token (group 2). */
const RESOURCE_METADATA = /resource_metadata\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/i;

/** The largest metadata document read from the upstream. */
const MAX_METADATA_BYTES = 64 * 1024;
const DEFAULT_CACHE_MS = 5 * 60_000;

/** What the upstream says of itself as a protected resource, or why it could not be read. */
export type UpstreamMetadata =
  | { readonly ok: true; readonly document: Record<string, unknown> | undefined }
  | { readonly ok: false; readonly message: string };

/** A resource URL as RFC 8707 compares them: no fragment, no trailing slash on the path. */
export function canonicalResource(url: string | URL): string {
  const u = new URL(url);
  u.hash = '';
  const text = u.href;
  return text.endsWith('/') ? text.slice(0, -1) : text;
}

/** The metadata URL of a resource: the well-known path, suffixed with the resource's own path. */
export function metadataUrlOf(resource: string | URL): string {
  const u = new URL(resource);
  const path = u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '');
  return `${u.origin}${METADATA_PATH}${path}`;
}

/**
 * The refusal of a configuration that would pass a caller's token to a server of another
 * resource, if it would: the upstream names itself `upstreamResource`, the front stands for `front`.
 */
export function passthroughRefusal(upstreamResource: string, front: string | URL): string | undefined {
  let upstream: string;
  try {
    upstream = canonicalResource(upstreamResource);
  } catch {
    return `the upstream's protected-resource metadata names no valid resource (${JSON.stringify(upstreamResource).slice(0, 200)})`;
  }
  const ours = canonicalResource(front);
  if (upstream === ours) return undefined;
  return (
    `the upstream is the protected resource ${upstream}, but the wrap stands for ${ours}: a caller's token, issued for ${ours}, ` +
    `would be passed to a server of another resource (token passthrough, which the MCP authorization spec forbids). ` +
    `Give the wrap the public URL the upstream's tokens are issued for (--public-url ${upstream}), or set the upstream's resource to ${ours}`
  );
}

/** The front's side of a protected upstream. */
export class ProtectedResource {
  readonly #upstream: URL;
  readonly #resource: URL | undefined;
  readonly #fetch: typeof globalThis.fetch;
  readonly #cacheMs: number;
  /** The upstream's metadata URL, as its last challenge named it (on its own origin only). */
  #named: string | undefined;
  #cached: { at: number; read: Promise<UpstreamMetadata> } | undefined;

  constructor(options: ProtectedResourceOptions) {
    this.#upstream = new URL(options.upstream);
    this.#resource = options.resource === undefined ? undefined : new URL(options.resource);
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#cacheMs = options.cacheMs ?? DEFAULT_CACHE_MS;
  }

  /** The resource the front stands for, seen from a request to `requestUrl`. */
  resourceOf(requestUrl: string): string {
    if (this.#resource) return this.#resource.href;
    const u = new URL(requestUrl);
    return `${u.origin}${u.pathname}`;
  }

  /** Whether `pathname` asks for the front's metadata (bare, or suffixed with the endpoint's path). */
  isMetadataPath(pathname: string, endpointPath: string | null): boolean {
    if (pathname === METADATA_PATH) return true;
    if (!pathname.startsWith(`${METADATA_PATH}/`)) return false;
    const suffix = pathname.slice(METADATA_PATH.length);
    const own = this.#resource ? new URL(this.#resource).pathname.replace(/\/$/, '') : endpointPath;
    return own === null || suffix === own || suffix === endpointPath;
  }

  /**
   * The upstream's challenge as the client sees it: its `resource_metadata` names the front's
   * metadata (a challenge without one is passed as it is).
   */
  challenge(upstream: string, requestUrl: string): string {
    this.#note(upstream);
    return upstream.replace(RESOURCE_METADATA, `resource_metadata="${metadataUrlOf(this.resourceOf(requestUrl))}"`);
  }

  /** Answers a request for the front's metadata: the upstream's, naming the front's resource. */
  async metadata(requestUrl: string): Promise<Response> {
    const read = await this.upstreamMetadata();
    if (!read.ok)
      return jsonError(502, ErrorCode.InternalError, `The upstream's protected-resource metadata could not be read: ${read.message}`);
    if (!read.document) return jsonError(404, ErrorCode.MethodNotFound, 'Not found: the upstream publishes no protected-resource metadata');
    const resource = this.resourceOf(requestUrl);
    const refused = typeof read.document['resource'] === 'string' ? passthroughRefusal(read.document['resource'], resource) : undefined;
    if (refused) return jsonError(502, ErrorCode.InternalError, `Refused: ${refused}`);
    return jsonResponse({ ...read.document, resource }, 200, { 'cache-control': 'max-age=300' });
  }

  /**
   * The upstream's protected-resource metadata (kept for a while): at the URL its challenge named,
   * else at the well-known URL of its endpoint, else at its origin's. `document` is undefined when
   * it publishes none (an upstream protected otherwise, by API keys, or not at all).
   */
  upstreamMetadata(): Promise<UpstreamMetadata> {
    const now = Date.now();
    if (this.#cached && now - this.#cached.at < this.#cacheMs) return this.#cached.read;
    const read = this.#read();
    this.#cached = { at: now, read };
    // A failure is not kept: the next request reads again.
    void read.then((r) => {
      if (!r.ok && this.#cached?.read === read) this.#cached = undefined;
    });
    return read;
  }

  /**
   * Why passing callers' tokens to this upstream is refused, if it is: its metadata names another
   * resource than the front's `resource` (or cannot be read).
   */
  async refusal(resource: string | URL): Promise<string | undefined> {
    const read = await this.upstreamMetadata();
    if (!read.ok) return `the upstream's protected-resource metadata could not be read: ${read.message}`;
    const named = read.document?.['resource'];
    return typeof named === 'string' ? passthroughRefusal(named, resource) : undefined;
  }

  #note(challenge: string): void {
    const m = RESOURCE_METADATA.exec(challenge);
    const named = m?.[1] ?? m?.[2];
    if (!named) return;
    try {
      const url = new URL(named, this.#upstream);
      // Only the upstream's own origin is trusted to describe it.
      if (url.origin === this.#upstream.origin && url.href !== this.#named) {
        this.#named = url.href;
        this.#cached = undefined;
      }
    } catch {
      // Not a URL: the well-known ones are tried.
    }
  }

  async #read(): Promise<UpstreamMetadata> {
    const candidates = [
      ...new Set([...(this.#named ? [this.#named] : []), metadataUrlOf(this.#upstream), `${this.#upstream.origin}${METADATA_PATH}`]),
    ];
    for (const url of candidates) {
      let res: Response;
      try {
        res = await this.#fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
      } catch (e) {
        return { ok: false, message: `GET ${url} failed: ${e instanceof Error ? e.message : String(e)}` };
      }
      if (res.status === 404) {
        await res.body?.cancel().catch(() => {});
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel().catch(() => {});
        return { ok: false, message: `GET ${url} answered HTTP ${res.status}` };
      }
      const body = await readBounded(res, MAX_METADATA_BYTES).catch(() => undefined);
      if (!body?.ok) return { ok: false, message: `GET ${url}: the document is larger than ${MAX_METADATA_BYTES} bytes or broke off` };
      let document: unknown;
      try {
        document = JSON.parse(body.value);
      } catch {
        return { ok: false, message: `GET ${url}: not JSON` };
      }
      if (!isRecord(document) || typeof document['resource'] !== 'string')
        return { ok: false, message: `GET ${url}: not protected-resource metadata (no "resource")` };
      return { ok: true, document };
    }
    return { ok: true, document: undefined };
  }
}
