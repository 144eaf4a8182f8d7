/**
 * `mcp-dual-era probe`: which era a server speaks, by the rules of `probe` — a stdio command
 * (`-- command args…`) or an HTTP endpoint (`--url`). Prints the verdict and each step as JSON lines
 * on stdout; exit 0 with a verdict, 1 when the probe was refused (401, 5xx, network…).
 */
import { parseArgs } from 'node:util';
import { createProbeEvents, probe, type ProbeTarget } from '../wrap/probe.ts';
import { PROBE_USAGE } from './probeUsage.ts';

/** Runs the probe command; resolves with the exit code. */
export async function probeCommand(argv: readonly string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const own = dash === -1 ? [...argv] : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  const { values } = parseArgs({
    args: own,
    options: { url: { type: 'string' }, header: { type: 'string', multiple: true }, timeout: { type: 'string' }, cwd: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(PROBE_USAGE);
    return 0;
  }
  let target: ProbeTarget;
  if (values.url) {
    const headers = Object.fromEntries((values.header ?? []).map((h) => [h.slice(0, h.indexOf(':')).trim(), h.slice(h.indexOf(':') + 1).trim()]));
    target = { url: values.url, headers };
  } else if (command.length > 0) target = { command: command[0]!, args: command.slice(1), stderr: 'ignore', ...(values.cwd ? { cwd: values.cwd } : {}) };
  else {
    process.stderr.write(`mcp-dual-era probe: name the server (-- <command> or --url <url>)\n\n${PROBE_USAGE}`);
    return 2;
  }
  const events = createProbeEvents();
  const line = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
  events.on('probe', (e) => line({ event: 'probe', method: e.method, version: e.version }));
  events.on('fallback', (e) => line({ event: 'fallback', from: e.from, to: e.to, reason: e.reason }));
  try {
    const result = await probe(target, { cache: false, events, ...(values.timeout ? { timeoutMs: Number(values.timeout) } : {}) });
    const { verdict } = result;
    line({ event: 'verdict', era: verdict.era, ...(verdict.era === 'modern' ? { version: verdict.version } : verdict.http ? { http: verdict.http } : {}), roundTrips: result.roundTrips });
    return 0;
  } catch (e) {
    line({ event: 'error', message: e instanceof Error ? e.message : String(e) });
    return 1;
  }
}
