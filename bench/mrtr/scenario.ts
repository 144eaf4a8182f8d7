/**
 * What every MRTR scenario gets: the library under measurement, loaded at run time from a folder
 * (compiled JavaScript, or lib/ itself under the tsx loader), and the options of its child process.
 * Either layout of lib/ loads: the current one (wrap/legacyServer/, wrap/mrtr/suspend) and the one
 * before it (wrap/wrapLegacyServer, wrap/mrtr), so `--lib` can measure an older build.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as MemoryModule from '../../lib/transport/memory.ts';
import type * as NodeHttpModule from '../../lib/transport/nodeHttp.ts';
import type * as StdioFrontModule from '../../lib/fronts/stdioFront.ts';
import type * as MrtrModule from '../../lib/wrap/mrtr/suspend.ts';
import type * as WrapModule from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';

export interface Lib {
  readonly wrapLegacyServer: (typeof WrapModule)['wrapLegacyServer'];
  readonly MrtrBroker: (typeof MrtrModule)['MrtrBroker'];
  readonly createMemoryPair: (typeof MemoryModule)['createMemoryPair'];
  readonly serveNodeHttp: (typeof NodeHttpModule)['serveNodeHttp'];
  /** Absent in a layout of lib/ from before the stdio front. */
  readonly serveStdio?: (typeof StdioFrontModule)['serveStdio'];
}

export type Wrap = WrapModule.LegacyServerWrap;

/** Each module the bench uses, by its path in each layout of lib/, the current one first. */
const MODULES = {
  wrap: ['wrap/legacyServer/wrapLegacyServer', 'wrap/wrapLegacyServer'],
  mrtr: ['wrap/mrtr/suspend', 'wrap/mrtr'],
  memory: ['transport/memory'],
  nodeHttp: ['transport/nodeHttp'],
  stdioFront: ['fronts/stdioFront'],
} as const;

/** Loads the library from `dir` (files ending in `ext`: `.js` compiled, `.ts` under tsx). */
export async function loadLib(dir: string, ext: string): Promise<Lib> {
  const load = async (paths: readonly string[]): Promise<unknown> => {
    const file = paths.map((p) => join(dir, `${p}${ext}`)).find((f) => existsSync(f));
    if (!file) throw new Error(`none of ${paths.map((p) => `${p}${ext}`).join(', ')} in ${dir}`);
    return import(pathToFileURL(file).href);
  };
  const wrap = (await load(MODULES.wrap)) as typeof WrapModule;
  const mrtr = (await load(MODULES.mrtr)) as typeof MrtrModule;
  const memory = (await load(MODULES.memory)) as typeof MemoryModule;
  const nodeHttp = (await load(MODULES.nodeHttp)) as typeof NodeHttpModule;
  const stdioFront = (await load(MODULES.stdioFront).catch(() => undefined)) as typeof StdioFrontModule | undefined;
  return {
    wrapLegacyServer: wrap.wrapLegacyServer,
    MrtrBroker: mrtr.MrtrBroker,
    createMemoryPair: memory.createMemoryPair,
    serveNodeHttp: nodeHttp.serveNodeHttp,
    ...(stdioFront ? { serveStdio: stdioFront.serveStdio } : {}),
  };
}

/** The options of one child process, as bench/mrtr/child.ts reads them from its arguments. */
export interface ScenarioOptions {
  /** Parked calls at once (memory scenarios). */
  readonly n: number;
  /** Where the calls enter the wrap: `serveModern` or `wrap.fetch`. */
  readonly transport: 'direct' | 'http';
  /** `node` (compiled) or `tsx`, for the record. */
  readonly loader: string;
  readonly quick: boolean;
  /** Where to write heap snapshots (`<prefix>-baseline.heapsnapshot`, `-parked`), if at all. */
  readonly snapshotPrefix?: string;
  /** What the latency cells through processes run (none without). */
  readonly processes?: Processes;
}

/** The CLI's JavaScript, and the push server's (fixtures/servers/pushServerStdio.ts). */
export interface Processes {
  readonly cli: string;
  readonly pushServer: string;
}
