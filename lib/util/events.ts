/**
 * The one way components make their typed event emitters (mitt). mitt's typings are CommonJS while
 * Node loads its ES module build, so the default export is picked here, once.
 */
import mittModule, { type Emitter, type EventType } from 'mitt';

type Mitt = <Events extends Record<EventType, unknown>>() => Emitter<Events>;

const create: Mitt = (typeof mittModule === 'function' ? mittModule : (mittModule as unknown as { default: Mitt }).default) as Mitt;

/** A new typed emitter. */
export function createEmitter<Events extends Record<EventType, unknown>>(): Emitter<Events> {
  return create<Events>();
}

export type { Emitter };
