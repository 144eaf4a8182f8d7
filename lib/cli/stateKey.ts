/**
 * The requestState key `serve` seals with: from `--state-key-env` or `--state-key-file` (the key
 * every process that must open another's states is given), or a random one for this process alone.
 * Reads and checks; the Keyring itself lives in `state/`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Keyring } from '../state/keyring.ts';

/** Most keys a given list may hold (a keyring opens with as many). */
const MAX_GIVEN_KEYS = 3;

/** Where the key comes from, as given on the command line. */
export interface StateKeyOptions {
  readonly 'state-key-env'?: string | undefined;
  readonly 'state-key-file'?: string | undefined;
}

/** The keyring, and whether its key was given (a random one cannot open another process's states). */
export interface StateKey {
  readonly keyring: Keyring;
  readonly given: boolean;
}

/** Reads the key named by the options; a message for the user when it cannot be had. */
export function readStateKey(
  options: StateKeyOptions,
  env: NodeJS.ProcessEnv = process.env,
): { ok: true; value: StateKey } | { ok: false; message: string } {
  let text: string | undefined;
  const variable = options['state-key-env'];
  const file = options['state-key-file'];
  if (variable) {
    text = env[variable];
    if (!text) return { ok: false, message: `the environment variable ${variable} (--state-key-env) is not set` };
  } else if (file) {
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch (e) {
      return { ok: false, message: `cannot read --state-key-file ${file}: ${e instanceof Error ? e.message : String(e)}` };
    }
  }
  if (!text) return { ok: true, value: { keyring: new Keyring(), given: false } };
  try {
    // One key a line, the first sealing and every one opening (a rotation: the new key first, the
    // old one after it until no state sealed with it is in use). A key's id comes from the key
    // itself, so every process names it alike whatever its place in the list.
    const lines = text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    if (lines.length > MAX_GIVEN_KEYS)
      return { ok: false, message: `the requestState key list holds ${lines.length} keys; at most ${MAX_GIVEN_KEYS} (the newest first)` };
    const keys = lines.map((line) => Keyring.parse(`k${createHash('sha256').update(line).digest('base64url').slice(0, 12)}`, line));
    return { ok: true, value: { keyring: new Keyring(keys.reverse()), given: true } };
  } catch (e) {
    return { ok: false, message: `the requestState key is not usable: ${e instanceof Error ? e.message : String(e)}` };
  }
}
