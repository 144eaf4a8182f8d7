/**
 * Request ids a JavaScript number would change (past 2^53, `1.0`, `-0`), kept exactly from a
 * caller's text to the answer it gets: read in as an opaque string that holds the id's own text
 * (`holdExactIds`), and written out as that text again wherever a message to the caller carries it
 * (`exactJson`, `withExactIds`). What sits in between (the wrap, an upstream a session is relayed
 * to) carries the string as it would any string id. The fronts that answer callers use this, and a
 * fleet's forwarding between replicas; an ordinary id costs one look at where the message's `"id"`
 * first occurs.
 */
import { randomBytes } from 'node:crypto';
import { MetaKey } from '../core/era.ts';
import { isRecord } from '../core/primitives.ts';

/** `text` as a regular expression that matches it. */
function escaped(text: string): string {
  return text.replace(/[^\w]/g, '\\$&');
}

/** A JSON number token. */
const NUMBER = '-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?';

/** What every held id starts with: unguessable, so no caller's own string id is ever taken for one. */
const HELD_PREFIX = `exact-id~${randomBytes(9).toString('base64url')}~`;

/** A mark put in place of an id's number while the text is decoded again, to see where it lands. */
const MARK = `${HELD_PREFIX}#`;

/** `"id"` or `"requestId"` followed by a number, wherever it is in a message's text. */
const CANDIDATE = new RegExp(`"(?:id|requestId)"[ \\t\\n\\r]*:[ \\t\\n\\r]*(${NUMBER})`, 'g');

/** The first `"id"` member's number, read where `"id"` first occurs. */
const ID_AT = new RegExp(`"id"[ \\t\\n\\r]*:[ \\t\\n\\r]*(${NUMBER})`, 'y');

/**
 * A held id as JSON writes it, in a member that carries a request id: `id`, a cancellation's
 * `requestId`, and the `_meta` member naming a listen's subscription (the id of its request).
 */
const HELD = new RegExp(`"(id|requestId|${escaped(MetaKey.subscriptionId)})":"${escaped(HELD_PREFIX)}(${NUMBER})"`, 'g');

/** Whether the number `text` denotes an integer (`1e30`, `1.50e2`, `100e-2`), judged on its digits. */
function denotesInteger(text: string): boolean {
  const [, whole = '', fraction = '', exponent = '0'] = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text) ?? [];
  const kept = fraction.replace(/0+$/, '');
  const digits = (whole + kept).replace(/^0+/, '');
  if (digits === '') return true;
  const scale = Number(exponent) - kept.length;
  return scale >= 0 || digits.length - digits.replace(/0+$/, '').length >= -scale;
}

/**
 * Whether an id written as `text` decodes to something else than it says: an integer whose number
 * prints otherwise, or a number with a fraction that rounds to an integer (`9007199254740993.5`).
 * A number past any double (`1e400`) decodes to an infinity, which is refused as it is.
 */
function changedByDecoding(text: string): boolean {
  const decoded = Number(text);
  if (!Number.isFinite(decoded)) return false;
  return denotesInteger(text) ? String(decoded) !== text : Number.isInteger(decoded);
}

/**
 * What an id written as `text` is held as: its text behind the prefix; for a number with a
 * fraction, NaN, which every id check refuses, as it refuses the fraction itself (MCP ids are integers).
 */
function heldValue(text: string): string | number {
  return denotesInteger(text) ? HELD_PREFIX + text : Number.NaN;
}

/** Whether `value` is an id held by `holdExactIds`. */
function isHeld(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith(HELD_PREFIX);
}

/** The members of one message that name a request: its `id`, and the `requestId` a cancellation names. */
function idSlots(message: unknown): Array<[Record<string, unknown>, string]> {
  if (!isRecord(message)) return [];
  const slots: Array<[Record<string, unknown>, string]> = [];
  if ('id' in message) slots.push([message, 'id']);
  const params = message['params'];
  if (message['method'] === 'notifications/cancelled' && isRecord(params) && 'requestId' in params) slots.push([params, 'requestId']);
  return slots;
}

/** Whether a cancellation names its request by a number. */
function cancelsByNumber(message: Record<string, unknown>): boolean {
  const params = message['params'];
  return message['method'] === 'notifications/cancelled' && isRecord(params) && typeof params['requestId'] === 'number';
}

/** Whether the first `"id"` of `text` is written as JavaScript prints `id` (the ordinary case, decided without a scan). */
function writtenAsPrinted(text: string, id: number): boolean {
  const at = text.indexOf('"id"');
  if (at === -1) return false;
  ID_AT.lastIndex = at;
  return ID_AT.exec(text)?.[1] === String(id);
}

/** Whether the ids of `value`, decoded from `text`, may differ from their text (most messages: no). */
function mayDiffer(value: unknown, text: string): boolean {
  if (Array.isArray(value)) return value.some((m) => isRecord(m) && (typeof m['id'] === 'number' || cancelsByNumber(m)));
  if (!isRecord(value)) return false;
  if (cancelsByNumber(value)) return true;
  const id = value['id'];
  return typeof id === 'number' && !(Number.isSafeInteger(id) && !Object.is(id, -0) && writtenAsPrinted(text, id));
}

/** A number token of the text, by where it starts and its text. */
interface Token {
  readonly at: number;
  readonly text: string;
}

/**
 * `text` decoded with each of `tokens` replaced by its mark (`MARK` and its index); `undefined` if
 * that is no JSON (it always is: a number token becomes a string token).
 */
function decodeMarked(text: string, tokens: readonly Token[]): unknown {
  let marked = '';
  let from = 0;
  tokens.forEach((token, i) => {
    marked += `${text.slice(from, token.at)}"${MARK}${i}"`;
    from = token.at + token.text.length;
  });
  try {
    return JSON.parse(marked + text.slice(from));
  } catch {
    return undefined;
  }
}

/** Puts each token's held value where its mark landed on an id of `value`; the indexes of those that did. */
function settle(value: unknown, tokens: readonly Token[]): Set<number> {
  const landed = new Set<number>();
  for (const message of Array.isArray(value) ? value : [value]) {
    for (const [holder, key] of idSlots(message)) {
      const v = holder[key];
      if (typeof v !== 'string' || !v.startsWith(MARK)) continue;
      const i = Number(v.slice(MARK.length));
      holder[key] = heldValue(tokens[i]!.text);
      landed.add(i);
    }
  }
  return landed;
}

/**
 * `value` (a message or a batch JSON.parse made of `text`) with each id whose number would differ
 * from its text held as that text: the `id` of the message or of each message of a batch, and the
 * `requestId` of a cancellation. Each number that may be such an id is replaced in the text by a mark,
 * and the text decoded again: a mark that lands on an id is that id, one that lands elsewhere (an
 * `"id"` member deeper in `params`) was not, and is decoded as it was. `value` itself when no id
 * differs from its text, found at once for an ordinary message.
 */
export function holdExactIds(value: unknown, text: string): unknown {
  if (!mayDiffer(value, text)) return value;
  const tokens: Token[] = [];
  for (const m of text.matchAll(CANDIDATE)) {
    if (changedByDecoding(m[1]!)) tokens.push({ at: m.index + m[0].length - m[1]!.length, text: m[1]! });
  }
  if (tokens.length === 0) return value;
  const marked = decodeMarked(text, tokens);
  if (marked === undefined) return value;
  const landed = settle(marked, tokens);
  if (landed.size === tokens.length) return marked;
  if (landed.size === 0) return value;
  const ids = tokens.filter((_, i) => landed.has(i));
  const held = decodeMarked(text, ids);
  if (held === undefined) return value;
  settle(held, ids);
  return held;
}

/** Whether `meta` (a `_meta` member) names a subscription by a held id. */
function namesHeldSubscription(meta: unknown): boolean {
  return isRecord(meta) && isHeld(meta[MetaKey.subscriptionId]);
}

/**
 * Whether `message` (a message or a batch) carries an id held by `holdExactIds`: as its `id`, as
 * the `requestId` of a cancellation, or as the subscription a listen's result or notification names.
 */
export function holdsExactIds(message: unknown): boolean {
  if (Array.isArray(message)) return message.some(holdsExactIds);
  if (!isRecord(message)) return false;
  if (isHeld(message['id'])) return true;
  const params = message['params'];
  if (
    isRecord(params) &&
    ((message['method'] === 'notifications/cancelled' && isHeld(params['requestId'])) || namesHeldSubscription(params['_meta']))
  )
    return true;
  const result = message['result'];
  return isRecord(result) && namesHeldSubscription(result['_meta']);
}

/** JSON text with every held id written as the caller wrote it. */
function writeHeld(json: string): string {
  return json.replace(HELD, '"$1":$2');
}

/** `message` as JSON text, its held ids written as their callers wrote them (JSON.stringify's text otherwise). */
export function exactJson(message: unknown): string {
  const json = JSON.stringify(message);
  return holdsExactIds(message) ? writeHeld(json) : json;
}

/**
 * `response` with the held ids of its body (JSON, or an event stream) written as their callers wrote
 * them, for answers another library wrote. Rewritten a line at a time: an event goes on as soon as
 * it ends.
 */
export function withExactIds(response: Response): Response {
  if (!response.body) return response;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let rest = '';
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const text = rest + decoder.decode(chunk, { stream: true });
        const end = text.lastIndexOf('\n') + 1;
        rest = text.slice(end);
        if (end > 0) controller.enqueue(encoder.encode(writeHeld(text.slice(0, end))));
      },
      flush(controller) {
        const text = rest + decoder.decode();
        if (text !== '') controller.enqueue(encoder.encode(writeHeld(text)));
      },
    }),
  );
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}
