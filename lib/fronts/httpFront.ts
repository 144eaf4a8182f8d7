/**
 * The wrap's Streamable HTTP front: one router of POSTed messages (httpRouter.ts: a legacy session's
 * or a modern request, header and envelope checks, the fleet's steps before them), carried out by
 * two adapters. `fetch` (webAdapter.ts) is the Web handler for any runtime. `node` (nodeAdapter.ts)
 * answers POSTed JSON on Node's own request and response objects, and hands whatever else arrives
 * there (GET, DELETE, a legacy session's requests) to `fetch`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { frontCore, type HttpFrontConfig } from './httpRouter.ts';
import { nodeAdapter } from './nodeAdapter.ts';
import { answerWeb } from './webAdapter.ts';

/** A wrap's HTTP front: its Web handler and its Node handler. */
export interface HttpFront {
  fetch(request: Request): Promise<Response>;
  node(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Ends the GET streams open on Node's objects (a legacy session's standalone stream, here or
   * passing through to another replica), now and from now on: their clients open them again,
   * elsewhere once this front no longer takes connections (the end of a drain).
   */
  endStreams(): void;
}

/** Builds the front of a wrap. */
export function createHttpFront(config: HttpFrontConfig): HttpFront {
  const core = frontCore(config);
  const fetch = (request: Request): Promise<Response> => answerWeb(core, request);
  return { fetch, ...nodeAdapter(core, fetch) };
}
