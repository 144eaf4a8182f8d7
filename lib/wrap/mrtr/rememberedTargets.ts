/**
 * What calls to each target (`tools/call:name`, `prompts/get:name`, `resources/read:uri`) were seen
 * to do: push (their sessions are never shared, so a push reaches only its caller), or finish
 * without pushing (they may share one). Bounded, and only for targets the upstream lists.
 */
import type { TargetMemory } from './parkedCall.ts';

/** Most targets remembered as pushing, and as quiet. */
const MAX_REMEMBERED = 10_000;

/** The targets a broker remembers, as pushing or as quiet. */
export class RememberedTargets implements TargetMemory {
  /** Targets whose pushable calls were seen to push. */
  readonly #pushing = new Set<string>();
  /** Targets whose pushable calls were seen to finish without pushing (and none pushing since). */
  readonly #quiet = new Set<string>();
  /** What only remembered targets pass: by default any (within a bound); in a wrap, what the upstream lists. */
  readonly #listed: (target: string) => boolean;

  constructor(listed: (target: string) => boolean = () => true) {
    this.#listed = listed;
  }

  /** True when calls to `target` have pushed before. */
  pushes(target: string): boolean {
    return this.#pushing.has(target);
  }

  /** True when calls to `target` have finished without pushing, and none has pushed since. */
  quiet(target: string): boolean {
    return this.#quiet.has(target) && !this.#pushing.has(target);
  }

  /** Records how a call to `target` went: it pushed, or it finished without pushing. */
  observed(target: string, pushed: boolean): void {
    if (!this.#listed(target)) return;
    if (pushed) {
      if (this.#pushing.size < MAX_REMEMBERED) this.#pushing.add(target);
      this.#quiet.delete(target);
    } else if (!this.#pushing.has(target) && this.#quiet.size < MAX_REMEMBERED) this.#quiet.add(target);
  }

  /** Targets remembered, as pushing or as quiet. */
  get size(): number {
    return this.#pushing.size + this.#quiet.size;
  }
}
