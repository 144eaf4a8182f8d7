/**
 * The upstream's tool definitions per session, learned once from `tools/list` (all pages) and
 * forgotten when the server announces a change: what `Mcp-Param-*` headers are checked against, and
 * which tools the server runs as tasks (`execution.taskSupport`).
 */
import { isRecord, type JsonObject } from '../../core/primitives.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import type { Catalog } from './catalog.ts';
import { readPages } from '../../util/readPages.ts';

/** How a legacy server runs a tool as a task, when it can (`forbidden`, the default, is not kept). */
export type TaskSupport = 'optional' | 'required';

/** Tool input schemas, and how the tools run as tasks, by name, per upstream session. */
export class ToolIndex {
  readonly #catalog: Catalog | undefined;
  /** `catalog` learns the tool names of every list loaded. */
  constructor(catalog?: Catalog) {
    this.#catalog = catalog;
  }

  #bySession = new WeakMap<UpstreamSession, Promise<Map<string, unknown>>>();
  /** The indexes already loaded, for answering without waiting. */
  #loaded = new WeakMap<UpstreamSession, Map<string, unknown>>();
  /** The tools each session's server runs as tasks. */
  #taskRun = new WeakMap<UpstreamSession, Map<string, TaskSupport>>();

  /** The input schema of `name` on this session's server, or `undefined` if it has no such tool. */
  async schemaFor(session: UpstreamSession, name: string): Promise<unknown> {
    let index = this.#bySession.get(session);
    if (!index) {
      const loading = this.#load(session);
      index = loading;
      this.#bySession.set(session, loading);
      loading.then(
        (tools) => {
          if (this.#bySession.get(session) === loading) this.#loaded.set(session, tools);
        },
        () => this.#bySession.delete(session),
      );
    }
    return (await index).get(name);
  }

  /** How this session's server runs `name` as a task (its tool list is loaded first), or `undefined` when it never does. */
  async taskSupportOf(session: UpstreamSession, name: string): Promise<TaskSupport | undefined> {
    await this.schemaFor(session, name);
    return this.#taskRun.get(session)?.get(name);
  }

  /** The session's tool schemas if they are loaded already (then no waiting is needed). */
  loaded(session: UpstreamSession): ReadonlyMap<string, unknown> | undefined {
    return this.#loaded.get(session);
  }

  /** Forgets what is known of a session's tools (on `notifications/tools/list_changed`). */
  invalidate(session: UpstreamSession): void {
    this.#bySession.delete(session);
    this.#loaded.delete(session);
    this.#taskRun.delete(session);
  }

  async #load(session: UpstreamSession): Promise<Map<string, unknown>> {
    const tools = new Map<string, unknown>();
    const taskRun = new Map<string, TaskSupport>();
    await readPages(
      (cursor) => session.call('tools/list', cursor === undefined ? undefined : { cursor }),
      (result) => {
        this.#catalog?.note('tools/list', result);
        for (const tool of (result['tools'] as JsonObject[] | undefined) ?? [])
          if (isRecord(tool) && typeof tool['name'] === 'string') {
            tools.set(tool['name'], tool['inputSchema']);
            const support = isRecord(tool['execution']) ? tool['execution']['taskSupport'] : undefined;
            if (support === 'optional' || support === 'required') taskRun.set(tool['name'], support);
          }
      },
    );
    this.#taskRun.set(session, taskRun);
    return tools;
  }
}
