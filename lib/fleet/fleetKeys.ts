/**
 * The names of the keys a fleet keeps in its Redis, all under one prefix per fleet name, what a
 * fleet name may be, and a Redis URL as a log shows it. No Redis here: the command checks a name
 * before it loads the client.
 */

/** Why `name` cannot name a fleet, or `undefined` when it can. */
export function fleetNameProblem(name: string): string | undefined {
  return /^[\w.-]{1,64}$/.test(name) ? undefined : `a fleet name is 1 to 64 letters, digits, '.', '_' or '-', not ${JSON.stringify(name)}`;
}

/** A Redis URL without its password, for a log. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** The names of a fleet's keys. */
export class FleetKeys {
  readonly prefix: string;

  constructor(name = 'default') {
    const problem = fleetNameProblem(name);
    if (problem) throw new Error(problem);
    this.prefix = `mcp-dual-era:${name}:`;
  }

  /** A replica's record, by id. */
  replica(id: string): string {
    return `${this.prefix}replica:${id}`;
  }

  /** The pattern every replica record matches. */
  get replicas(): string {
    return `${this.prefix}replica:*`;
  }

  /** The requestState key the fleet agreed on. */
  get stateKey(): string {
    return `${this.prefix}state-key`;
  }

  /** The secret replicas sign forwarded requests with. */
  get hopSecret(): string {
    return `${this.prefix}hop-secret`;
  }

  /** The channel changes are told to every replica on. */
  get changes(): string {
    return `${this.prefix}changes`;
  }

  /** A used single-use state, by id. */
  usedState(id: string): string {
    return `${this.prefix}used:${id}`;
  }
}
