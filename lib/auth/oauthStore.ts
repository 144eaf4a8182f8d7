/**
 * Where a user's OAuth state for MCP servers is kept: one folder per server (named by a hash of its
 * normalized URL) under a per-user directory, folders 0700 and files 0600, each file created with
 * that mode and replaced atomically (written beside it, then renamed over it). JSON files only;
 * what they hold is the provider's business (lib/auth/signInProvider.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The default storage directory: `$XDG_CONFIG_HOME/mcp-dual-era/oauth`, else `~/.config/mcp-dual-era/oauth`. */
export function defaultOAuthDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const config = env['XDG_CONFIG_HOME'];
  return join(config && config.startsWith('/') ? config : join(home, '.config'), 'mcp-dual-era', 'oauth');
}

/** A server URL as it is keyed: parsed and serialized (scheme and host lower case, default port dropped), without its fragment. */
export function normalizeServerUrl(serverUrl: string | URL): string {
  const url = new URL(String(serverUrl));
  url.hash = '';
  return url.href;
}

/** The folder name of a server: the first 32 hex digits of the SHA-256 of its normalized URL. */
export function serverFolderName(serverUrl: string | URL): string {
  return createHash('sha256').update(normalizeServerUrl(serverUrl)).digest('hex').slice(0, 32);
}

/** The files of one server's folder. */
export class OAuthStore {
  /** The server's folder. */
  readonly dir: string;
  readonly #serverUrl: string;

  constructor(root: string, serverUrl: string | URL) {
    this.#serverUrl = normalizeServerUrl(serverUrl);
    this.dir = join(root, serverFolderName(serverUrl));
  }

  /** A file's JSON, or `undefined` when it is missing or unreadable. */
  read<T>(name: string): T | undefined {
    try {
      return JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as T;
    } catch {
      return undefined;
    }
  }

  /** Replaces a file with `value` as JSON, atomically, mode 0600 (the folders made 0700 on the way). */
  write(name: string, value: unknown): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // Folders made here are 0700; the server's folder is ours, so it is 0700 whatever it was before
    // (the storage directory, when it existed already, is left as its owner made it).
    chmodSync(this.dir, 0o700);
    // Which server the folder is for, for whoever looks in it.
    if (this.read<{ url?: string }>('server.json')?.url !== this.#serverUrl) this.#replace('server.json', { url: this.#serverUrl });
    this.#replace(name, value);
  }

  /** Deletes files (missing ones are fine). */
  remove(...names: string[]): void {
    for (const name of names) rmSync(join(this.dir, name), { force: true });
  }

  #replace(name: string, value: unknown): void {
    const temp = join(this.dir, `.${name}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      renameSync(temp, join(this.dir, name));
    } catch (e) {
      rmSync(temp, { force: true });
      throw e;
    }
  }
}
