/**
 * The hops one replica of a fleet signs and takes: where a hop to an owner goes (worked out once
 * for each address and request target), the hop header it signs (a nonce of its own making each
 * signature one of a kind), and the check of a hop it receives: sent by another replica to this
 * one, within the time allowed, signed with the fleet's secret, and taken once. What a hop carries
 * and its signature covers is hops.ts's; whether its sender is in the fleet, the directory's.
 */
import { randomBytes } from 'node:crypto';
import { urlToHttpOptions } from 'node:url';
import type { HopRequest } from '../fronts/served.ts';
import type { HopSecrets } from './hopSecrets.ts';
import { hopMessage, hopTarget, pathOf, UNSIGNED, type HopTarget } from './hops.ts';

/** Most hops remembered as taken (each for its window); past it, hops are refused until some expire. */
const MAX_TAKEN = 100_000;

/** Most hop targets remembered at once. */
const MAX_TARGETS = 1024;

/** The hops of one replica: those it sends, and those it takes. */
export class ReplicaHops {
  readonly #id: string;
  readonly #secrets: Pick<HopSecrets, 'sign' | 'verify'>;
  readonly #maxAge: number;
  // A hop's nonce makes its signature one of a kind: this process's random part and a count
  // (drawing random bytes for each hop cost more than signing it).
  readonly #noncePrefix = randomBytes(9).toString('base64url');
  #nonces = 0;
  /** Where hops to `advertise` for the request target `requestTarget` go, and the path they sign: worked out once for each pair. */
  readonly #targets = new Map<string, HopTarget>();
  /** Hops taken, by signature, each with when its window ends (oldest first). */
  readonly #taken = new Map<string, number>();

  /** The hops of replica `id`, signed with `secrets`, each taken within `maxAgeMs` of when it was sent. */
  constructor(id: string, secrets: Pick<HopSecrets, 'sign' | 'verify'>, maxAgeMs: number) {
    this.#id = id;
    this.#secrets = secrets;
    this.#maxAge = maxAgeMs;
  }

  /** Where a hop to the replica at `advertise` for the request target `requestTarget` goes. */
  target(advertise: string, requestTarget: string | undefined): HopTarget {
    const key = `${advertise} ${requestTarget ?? ''}`;
    let known = this.#targets.get(key);
    if (known === undefined) {
      const url = hopTarget(advertise, requestTarget);
      known = { url, path: pathOf(url), options: urlToHttpOptions(url) };
      if (this.#targets.size >= MAX_TARGETS) this.#targets.clear();
      this.#targets.set(key, known);
    }
    return known;
  }

  /**
   * The hop header's value for `request` sent from this replica to replica `to`, with the headers
   * `carried` (names in lower case): `from.to.at.nonce.signature.names`, the names it signs last.
   */
  value(to: string, request: Omit<HopRequest, 'header'>, carried: ReadonlyMap<string, string>): string {
    const at = Date.now();
    const nonce = `${this.#noncePrefix}${(this.#nonces++).toString(36)}`;
    const names = [...carried.keys()].filter((n) => !UNSIGNED.test(n)).sort();
    const signature = this.#secrets.sign(hopMessage(this.#id, to, at, nonce, names, { ...request, header: (n) => carried.get(n) ?? null }));
    return `${this.#id}.${to}.${at}.${nonce}.${signature}.${names.join(',')}`;
  }

  /**
   * The replica that sent the hop `hop` with `request`, when the hop is one to take: sent to this
   * replica by another, within the time allowed, its signature the fleet's, and not taken before
   * (it is taken now); `undefined` otherwise.
   */
  async take(hop: string, request: HopRequest): Promise<string | undefined> {
    // from.to.at.nonce.signature.names: ids, a number and base64url hold no '.', names may.
    const parts = hop.split('.');
    if (parts.length < 6) return undefined;
    const [from = '', to, atText, nonce = '', signature = ''] = parts;
    const at = Number(atText);
    if (
      from === '' ||
      from === this.#id ||
      to !== this.#id ||
      !Number.isSafeInteger(at) ||
      Math.abs(Date.now() - at) > this.#maxAge ||
      nonce === '' ||
      signature === ''
    )
      return undefined;
    const namesText = parts.slice(5).join('.');
    const names = namesText === '' ? [] : namesText.split(',');
    if (!(await this.#secrets.verify(hopMessage(from, to, at, nonce, names, request), signature))) return undefined;
    return this.#takeOnce(signature, at + this.#maxAge) ? from : undefined;
  }

  /** Takes the hop `signature` once: false when it was taken already, or when too many are held. */
  #takeOnce(signature: string, until: number): boolean {
    const now = Date.now();
    for (const [s, end] of this.#taken) {
      if (end > now) break;
      this.#taken.delete(s);
    }
    if (this.#taken.has(signature) || this.#taken.size >= MAX_TAKEN) return false;
    this.#taken.set(signature, until);
    return true;
  }
}
