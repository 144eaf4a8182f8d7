/**
 * Runs variants of the matrix: starts the server of the cell, the wrap of the route, connects the
 * client of the cell and runs the script, recording each operation's outcome and reason; then closes
 * everything and reaps any process the variant left behind. Nothing here asserts: the results are
 * judged by the report, the baseline and the spec.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { markedProcessesGone, reapMarked, ROOT } from '../../helpers/everything.ts';
import { linkFor, variantId, type Variant } from './cells.ts';
import { connectClient, type Driver } from './clients.ts';
import type { Baseline } from './report.ts';
import { checkConnect, OPS, runOp, type OpId } from './script.ts';
import { startServer } from './servers.ts';

/** Known gaps, with their reasons. */
export const BASELINE = resolve(ROOT, 'fixtures/matrix/baseline.json');

export function readBaseline(): Baseline {
  return JSON.parse(readFileSync(BASELINE, 'utf8')) as Baseline;
}

/** The longest one operation may take before it counts as failed (a guard against a hang). */
const OP_DEADLINE_MS = 45_000;

export interface OpResult {
  readonly op: OpId;
  readonly ok: boolean;
  /** What was seen: on success a few words, on failure the reason. */
  readonly detail: string;
  readonly ms: number;
}

export interface VariantResult {
  readonly variant: Variant;
  readonly id: string;
  /** Every operation of the script in order; a refused variant has only `connect`. */
  readonly ops: readonly OpResult[];
  /** Whether the variant did what it must: every operation passed, or (an unwrapped attempt) it was refused. */
  readonly ok: boolean;
  readonly ms: number;
}

/** An error as the report shows it: the SDK's code when it has a name of its own, then the message. */
function message(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}

async function bounded<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${OP_DEADLINE_MS / 1000} s`)), OP_DEADLINE_MS)),
  );
  try {
    return await Promise.race([work, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs one variant to its end; never throws. */
export async function runVariant(variant: Variant): Promise<VariantResult> {
  const started = performance.now();
  const marker = randomUUID();
  const ops: OpResult[] = [];
  const closers: Array<() => Promise<void>> = [];
  let driver: Driver | undefined;
  try {
    const server = await startServer(variant.server, variant.transport, marker, variant.stateless === true);
    closers.unshift(() => server.close());
    const { link, close } = await linkFor(variant.route, server);
    closers.unshift(close);
    let t = performance.now();
    const took = () => Math.round(performance.now() - t);
    try {
      driver = await bounded(connectClient(variant.client, link), 'connect');
    } catch (error) {
      ops.push({ op: 'connect', ok: variant.expect === 'refused', detail: message(error), ms: took() });
    }
    if (driver && variant.expect === 'refused')
      ops.push({ op: 'connect', ok: false, detail: `connected without a wrap: ${driver.version}`, ms: took() });
    if (driver && variant.expect === 'pass') {
      const ctx = { client: variant.client, server: variant.server, serverName: server.name };
      try {
        ops.push({ op: 'connect', ok: true, detail: checkConnect(driver, ctx), ms: took() });
      } catch (error) {
        ops.push({ op: 'connect', ok: false, detail: message(error), ms: took() });
      }
      for (const { id } of OPS) {
        if (id === 'connect') continue;
        t = performance.now();
        try {
          const detail = await bounded(runOp(id, driver), id);
          ops.push({ op: id, ok: true, detail, ms: took() });
        } catch (error) {
          ops.push({ op: id, ok: false, detail: message(error), ms: took() });
        }
      }
    }
  } catch (error) {
    ops.push({
      op: ops.length === 0 ? 'connect' : ops.at(-1)!.op,
      ok: false,
      detail: `the variant could not run: ${message(error)}`,
      ms: 0,
    });
  } finally {
    await driver?.close().catch(() => {});
    for (const close of closers) await close().catch(() => {});
    if (!(await markedProcessesGone(marker, 5000))) reapMarked(marker);
  }
  const ok = variant.expect === 'refused' ? ops.length === 1 && ops[0]!.ok : ops.length === OPS.length && ops.every((o) => o.ok);
  return { variant, id: variantId(variant), ops, ok, ms: Math.round(performance.now() - started) };
}

/** Runs variants one after another (they share the machine's two cores with their servers). */
export async function runVariants(variants: readonly Variant[], onResult?: (result: VariantResult) => void): Promise<VariantResult[]> {
  const results: VariantResult[] = [];
  for (const variant of variants) {
    const result = await runVariant(variant);
    results.push(result);
    onResult?.(result);
  }
  return results;
}
