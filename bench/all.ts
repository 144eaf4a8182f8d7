/**
 * `npm run bench [-- --quick] [-- --filter=TEXT] [-- --profile] [-- --tsx] [-- --ref=GITREF]`: the
 * translator bench (bench/run.ts), the wrap bench (bench/wrap.ts), then the MRTR bench (bench/mrtr.ts:
 * memory per parked call, latency of a round), each in a fresh process so
 * neither's JIT or heap state leaks into the other. `--quick` and `--filter` go to both; `--profile`,
 * `--tsx` and `--ref` only concern the wrap bench. Exits non-zero when either does (a wrong answer, never a timing).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const args = process.argv.slice(2);
const wrapOnly = (a: string) => a === '--profile' || a === '--tsx' || a.startsWith('--ref=');
const known = (a: string) => a === '--quick' || a.startsWith('--filter=') || wrapOnly(a);
const unknown = args.filter((a) => !known(a));
if (unknown.length > 0) {
  console.error(`unknown argument(s): ${unknown.join(' ')}\nusage: npm run bench -- [--quick] [--filter=TEXT] [--profile] [--tsx] [--ref=GITREF]`);
  process.exit(2);
}

const run = (script: string, scriptArgs: readonly string[]): number => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, script), ...scriptArgs], { stdio: 'inherit', cwd: join(import.meta.dirname, '..') });
  return r.status ?? 1;
};

const translate = run('run.ts', args.filter((a) => !wrapOnly(a)));
console.log('');
const wrap = run('wrap.ts', args);
console.log('');
const mrtr = filterOnly(args) ? 0 : run('mrtr.ts', args.filter((a) => a === '--quick'));
process.exitCode = translate !== 0 || wrap !== 0 || mrtr !== 0 ? 1 : 0;

function filterOnly(list: readonly string[]): boolean {
  return list.some((a) => a.startsWith('--filter='));
}
