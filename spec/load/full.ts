/**
 * `npm run load`: the full mixed-era load — 200 clients (half modern, half legacy) × 50 calls, one
 * in five an MRTR round — through one wrap over HTTP. Exit code 1 on any wrong answer or anything
 * left behind.
 */
import { runMixedLoad } from './mixed.ts';

const clients = Number(process.env['LOAD_CLIENTS'] ?? 200);
const callsPerClient = Number(process.env['LOAD_CALLS'] ?? 50);
const heapBefore = process.memoryUsage().heapUsed;
const report = await runMixedLoad({ clients, callsPerClient });
(globalThis as { gc?: () => void }).gc?.();
const heapAfter = process.memoryUsage().heapUsed;
console.log(
  `${report.calls} calls (${report.rounds} MRTR rounds) from ${clients} clients in ${report.seconds.toFixed(1)} s; wrong: ${report.wrong.length}; left behind: ${JSON.stringify(report.left)}; heap ${(heapBefore / 1e6).toFixed(1)} MB before, ${(heapAfter / 1e6).toFixed(1)} MB after`,
);
for (const w of report.wrong.slice(0, 20)) console.log(`  ${w}`);
const clean = report.wrong.length === 0 && report.calls === clients * callsPerClient && Object.values(report.left).every((n) => n === 0);
process.exitCode = clean ? 0 : 1;
