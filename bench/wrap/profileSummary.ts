/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, as `npm run bench:wrap -- --profile` writes):
 * self time by where the code lives (this package's lib/, each npm package, Node's internals, GC,
 * idle) and the hottest functions by self and by inclusive time.
 *
 *   npx tsx bench/wrap/profileSummary.ts FILE.cpuprofile [--top=N] [--from=SECONDS] [--by-samples]
 *
 * `--from` leaves out the samples of the first seconds (start-up, module loading). Time is what
 * V8 records between samples, which on a busy machine includes time the thread waited for a core
 * (it lands on whatever was running when it was preempted, often a write that woke another
 * process); `--by-samples` counts each sample once instead (1 sample ≈ 1 ms of running), closer to
 * CPU time under contention.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

/** Where a frame's code lives. */
export function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/(lib|bench)\/(.*)$/.exec(url);
  if (own) return `${own[1]}/${own[2]!.split('/')[0]}`;
  return url;
}

function label(frame: CallFrame): string {
  const file = frame.url.replace(/^file:\/\/.*?\/(node_modules\/|lib\/|bench\/)/, '$1');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
}

/** Self and inclusive milliseconds per node, from the samples and their time deltas. */
export function summarise(
  profile: CpuProfile,
  fromUs = 0,
  bySamples = false,
): { totalMs: number; byArea: Map<string, number>; self: Map<string, number>; inclusive: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const dt = bySamples ? 1000 : (profile.timeDeltas[i + 1] ?? 0);
    if (at < fromUs) continue;
    selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + dt);
  }
  const byArea = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let totalMs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const ms = us / 1000;
    totalMs += ms;
    const area = areaOf(node.callFrame.url, node.callFrame.functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + ms);
    const name = label(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + ms);
    // Inclusive: every distinct function on the stack of this sample.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      const l = label(n.callFrame);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + ms);
    }
  }
  return { totalMs, byArea, self, inclusive };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  const top = Number(process.argv.find((a) => a.startsWith('--top='))?.slice(6) ?? 25);
  const fromS = Number(process.argv.find((a) => a.startsWith('--from='))?.slice(7) ?? 0);
  if (!file) {
    console.error('usage: npx tsx bench/wrap/profileSummary.ts FILE.cpuprofile [--top=N]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const bySamples = process.argv.includes('--by-samples');
  const { totalMs, byArea, self, inclusive } = summarise(profile, fromS * 1e6, bySamples);
  const busy = totalMs - (byArea.get('(idle)') ?? 0);
  const pct = (ms: number) => `${((ms / busy) * 100).toFixed(1).padStart(5)}%`;
  const show = (title: string, map: Map<string, number>, n: number) => {
    console.log(title);
    for (const [k, ms] of [...map]
      .filter(([k]) => k !== '(idle)' && k !== '(anonymous) :0')
      .sort((a, b) => b[1] - a[1])
      .slice(0, n))
      console.log(`  ${ms.toFixed(0).padStart(7)} ms ${pct(ms)}  ${k}`);
  };
  console.log(
    `${file}: ${fromS > 0 ? `from ${fromS} s on, ` : ''}${bySamples ? 'by sample count (1 sample = 1 ms), ' : ''}${(totalMs / 1000).toFixed(1)} s sampled, ${(busy / 1000).toFixed(1)} s not idle (percentages are of that)`,
  );
  show('self time by area:', byArea, 30);
  show(`top ${top} functions by self time:`, self, top);
  show(`top ${top} functions by inclusive time:`, inclusive, top);
}
