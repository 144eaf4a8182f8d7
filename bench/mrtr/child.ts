/**
 * One MRTR measurement in a process of its own (`node --expose-gc`), as bench/mrtr/children.ts
 * starts it: `child.js --scenario=wrap-memory|server-memory|latency --libdir=DIR --ext=.js
 * --out=FILE [--n=N] [--transport=direct|http] [--loader=node|tsx] [--quick] [--snapshot=PREFIX]
 * [--cli=FILE --push-server=FILE]`.
 * Loads the library from DIR, runs the scenario, writes its result as JSON to FILE, and exits.
 */
import { writeFileSync } from 'node:fs';
import { latency } from './latency.ts';
import { loadLib, type ScenarioOptions } from './scenario.ts';
import { serverMemory } from './serverMemory.ts';
import { wrapMemory } from './wrapMemory.ts';

const SCENARIOS = { 'wrap-memory': wrapMemory, 'server-memory': serverMemory, latency } as const;

const args = process.argv.slice(2);
const option = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

const scenario = SCENARIOS[option('scenario') as keyof typeof SCENARIOS];
const libDir = option('libdir');
const out = option('out');
if (!scenario || !libDir || !out)
  throw new Error(
    `bench/mrtr/child: needs --scenario (one of ${Object.keys(SCENARIOS).join(', ')}), --libdir and --out; got ${args.join(' ')}`,
  );
const snapshotPrefix = option('snapshot');
const cli = option('cli');
const pushServer = option('push-server');
const options: ScenarioOptions = {
  n: Number(option('n') ?? 10_000),
  transport: option('transport') === 'http' ? 'http' : 'direct',
  loader: option('loader') ?? 'node',
  quick: args.includes('--quick'),
  ...(snapshotPrefix ? { snapshotPrefix } : {}),
  ...(cli && pushServer ? { processes: { cli, pushServer } } : {}),
};
const result = await scenario(await loadLib(libDir, option('ext') ?? '.js'), options);
writeFileSync(out, JSON.stringify(result, null, 1));
// The legacy server's pending pushes hold timers; nothing else is left to wait for.
process.exit(0);
