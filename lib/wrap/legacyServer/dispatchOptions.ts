/**
 * What the modern dispatch of a wrapped legacy server is given: the session pool, the MRTR broker,
 * what the wrap knows of the server (its tools, its lists, what it said of itself), the wrap's own
 * roots and whose roots each session holds, whether callers share sessions, and the tasks of the
 * tools the server runs as tasks.
 */
import type { ModernVersion } from '../../core/era.ts';
import type { InitializeResult } from '../../core/legacy/lifecycle.ts';
import type { Implementation } from '../../core/primitives.ts';
import type { CacheDefaults } from '../../core/translate/context.ts';
import type { SessionPool } from '../../session/pool.ts';
import type { SessionKey } from '../../session/sessionKey.ts';
import type { InputBroker } from '../mrtr/broker.ts';
import type { Catalog } from './catalog.ts';
import type { RootsHolders } from './rootsHolders.ts';
import type { ToolIndex } from './toolIndex.ts';
import type { ToolTasks } from './toolTasks.ts';

/** How a wrap's modern requests are dispatched to its legacy server. */
export interface ModernDispatchOptions {
  readonly pool: SessionPool;
  /** Overrides the server info taken from the upstream's `initialize` result. */
  readonly serverInfo?: Implementation;
  readonly cache?: CacheDefaults;
  readonly supportedVersions?: readonly ModernVersion[];
  /** Deadline for one upstream call. */
  readonly requestTimeoutMs?: number;
  readonly inputs?: InputBroker;
  /** Tool definitions for checking `Mcp-Param-*` headers. */
  readonly tools?: ToolIndex;
  /** Learns what the upstream lists from its list answers. */
  readonly catalog?: Catalog;
  /**
   * What the server said of itself to a session opened with `key`'s capability set and client
   * info (any caller's): `server/discover` is answered from it when the caller has no session of
   * its own, rather than booting one only to describe the server.
   */
  readonly described?: (key: SessionKey) => InitializeResult | undefined;
  /**
   * The wrap's own roots (non-empty): sessions declare `roots` upstream whatever the client
   * declared, and every `roots/list` of the server is answered with these, over the caller's own.
   */
  readonly roots?: ReadonlyArray<{ readonly uri: string; readonly name?: string }>;
  /**
   * Whose roots the server holds on each session: a pushable call whose caller may not have
   * given them gets the session alone and has them asked again before it is sent (see `bindCall`).
   */
  readonly holders?: RootsHolders;
  /**
   * Callers share upstream sessions (`WrapLegacyServerOptions.shareSessions`): keys are filed
   * under `SHARED_PRINCIPAL`, and each caller may have `perCaller` calls that need a session
   * alone (they may push) under way at once; `pushing` counts them.
   */
  readonly shared?: { readonly perCaller: number; readonly pushing: Map<string, number> };
  /**
   * The callers' tasks, on a server that runs tools as tasks: a call to such a tool from a caller
   * that declares the tasks extension becomes one, and `tasks/get`, `tasks/update` and
   * `tasks/cancel` are served from here (with `tools`, which says how each tool runs).
   */
  readonly tasks?: ToolTasks;
}
