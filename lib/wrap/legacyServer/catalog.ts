/**
 * What the upstream server lists: the names of its tools and prompts and the URIs of its
 * resources, as seen in its `tools/list`, `prompts/list` and `resources/list` answers. Only these
 * targets are remembered as pushing or quiet, so what a caller remembers of a server is bounded by
 * what the server offers, never by names callers make up. Bounded itself all the same.
 */
import { isRecord, type JsonObject } from '../../core/primitives.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import { readPages } from '../../util/readPages.ts';

/** The list methods, what each lists and the key of its items' names. */
const LISTS: Readonly<Record<string, { readonly items: string; readonly name: string; readonly target: string }>> = {
  'tools/list': { items: 'tools', name: 'name', target: 'tools/call' },
  'prompts/list': { items: 'prompts', name: 'name', target: 'prompts/get' },
  'resources/list': { items: 'resources', name: 'uri', target: 'resources/read' },
};

/** The list method of each target method. */
const LIST_OF: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(LISTS).map(([list, { target }]) => [target, list]));

/** Most targets remembered (a server listing more is served as well, only less knowingly). */
const MAX_TARGETS = 10_000;

/** The targets (`tools/call:name`, `prompts/get:name`, `resources/read:uri`) the upstream listed. */
export class Catalog {
  readonly #targets = new Set<string>();
  /** The list methods read (or being read) by the catalog itself. */
  readonly #asked = new Set<string>();

  /**
   * Whether the upstream listed `target`; when its list was never read, it is read now on the
   * session `sessionFor` gives (in the background: this answer is still no), so the next answer knows.
   */
  listed(target: string, sessionFor: () => UpstreamSession | undefined): boolean {
    if (this.#targets.has(target)) return true;
    const method = LIST_OF[target.slice(0, target.indexOf(':'))];
    if (method === undefined || this.#asked.has(method)) return false;
    const session = sessionFor();
    if (session === undefined || session.closed) return false;
    this.#asked.add(method);
    readPages(
      (cursor) => session.call(method, cursor === undefined ? undefined : { cursor }),
      (result) => this.note(method, result),
    ).catch(() => this.#asked.delete(method));
    return false;
  }

  /** Forgets that a list was read (the server said it changed): the next unknown target reads it again. */
  changed(method: string): void {
    this.#asked.delete(method);
  }

  /** Learns from a list answer (`method` one of the list methods; others are ignored). */
  note(method: string, result: JsonObject): void {
    const list = LISTS[method];
    if (!list) return;
    const items = result[list.items];
    if (!Array.isArray(items)) return;
    for (const item of items) {
      if (this.#targets.size >= MAX_TARGETS) return;
      if (isRecord(item) && typeof item[list.name] === 'string') this.#targets.add(`${list.target}:${item[list.name] as string}`);
    }
  }

  /** Whether the upstream listed `target`. */
  has(target: string): boolean {
    return this.#targets.has(target);
  }

  /** Targets known. */
  get size(): number {
    return this.#targets.size;
  }
}
