/**
 * `mcp-dual-era probe`: what a server is — a stdio command (`-- command args…`) or an HTTP endpoint
 * (`<url>`): era and kind, versions, server info, capabilities, offer, probe cost, and which
 * clients can use it directly. A report for people, or one JSON object with `--json`.
 */
import { parseArgs } from 'node:util';
import { inspectServer, type ServerReport } from '../probe/inspect.ts';
import { createProbeEvents } from '../probe/probe.ts';
import type { ProbeTarget } from '../probe/probeTypes.ts';
import { readEnv, readHeaders, readHttpUrl, splitAtDash, usageError } from './options.ts';
import { PROBE_USAGE } from './probeUsage.ts';

/** Runs the probe command; resolves with the exit code. */
export async function probeCommand(argv: readonly string[]): Promise<number> {
  const { own, command } = splitAtDash(argv);
  const usage = usageError('probe');
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        json: { type: 'boolean' },
        steps: { type: 'boolean' },
        header: { type: 'string', multiple: true },
        timeout: { type: 'string' },
        cwd: { type: 'string' },
        env: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
  } catch (e) {
    return usage(e instanceof Error ? e.message : String(e));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`Usage:\n${PROBE_USAGE}`);
    return 0;
  }
  const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1))
    return usage(`--timeout must be a whole number of milliseconds, not ${values.timeout}`);
  const url = values.url ?? positionals[0];
  let target: ProbeTarget;
  if (url !== undefined && command.length === 0) {
    if (positionals.length > (values.url ? 0 : 1)) return usage(`one URL only (a command goes after --): ${positionals.join(' ')}`);
    const parsedUrl = readHttpUrl(url, 'the server');
    if (!parsedUrl.ok) return usage(`${parsedUrl.message} (a command goes after --)`);
    const headers = readHeaders(values.header);
    if (!headers.ok) return usage(headers.message);
    target = { url: parsedUrl.value.href, headers: headers.value };
  } else if (command.length > 0 && url === undefined) {
    const env = readEnv(values.env);
    if (!env.ok) return usage(env.message);
    target = { command: command[0]!, args: command.slice(1), env: env.value, stderr: 'ignore', ...(values.cwd ? { cwd: values.cwd } : {}) };
  } else {
    return usage('name the server: <url> or -- <command> [args…], not both');
  }

  const steps: Array<Record<string, unknown>> = [];
  const events = createProbeEvents();
  events.on('probe', (e) => steps.push({ step: 'probe', method: e.method, version: e.version }));
  events.on('fallback', (e) => steps.push({ step: 'fallback', from: e.from, to: e.to, reason: e.reason }));
  events.on('waiting', (e) => {
    steps.push({ step: 'waiting', reason: e.reason });
    // What it waits for is said as it waits (stderr: stdout is the report).
    process.stderr.write(`mcp-dual-era probe: ${e.reason}\n`);
  });
  try {
    const report = await inspectServer(target, { ...(timeout !== undefined ? { timeoutMs: timeout } : {}), events });
    if (values.json) process.stdout.write(`${JSON.stringify({ ...report, ...(values.steps ? { steps } : {}) })}\n`);
    else process.stdout.write(render(report, values.steps ? steps : undefined, process.stdout.isTTY === true && !process.env['NO_COLOR']));
    return 0;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (values.json)
      process.stdout.write(
        `${JSON.stringify({ target: 'url' in target ? target.url : [target.command, ...(target.args ?? [])].join(' '), error: message, ...(values.steps ? { steps } : {}) })}\n`,
      );
    else if (values.steps)
      for (const step of steps)
        process.stdout.write(
          `  step  ${Object.entries(step)
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(' ')}\n`,
        );
    process.stderr.write(`mcp-dual-era probe: ${message}\n`);
    return 1;
  }
}

const KIND_TEXT: Record<ServerReport['kind'], string> = {
  'modern-only': 'modern-only (2026-07-28 era; refuses legacy clients)',
  'dual-era': 'dual-era (modern requests and legacy initialize both work)',
  legacy: 'legacy (initialize first; no server/discover)',
};

/** The report as aligned lines for a terminal. */
export function render(report: ServerReport, steps: ReadonlyArray<Record<string, unknown>> | undefined, colour: boolean): string {
  const bold = (s: string) => (colour ? `\u001b[1m${s}\u001b[22m` : s);
  const green = (s: string) => (colour ? `\u001b[32m${s}\u001b[39m` : s);
  const yellow = (s: string) => (colour ? `\u001b[33m${s}\u001b[39m` : s);
  const lines: string[] = [bold(report.target)];
  const row = (label: string, value: string) => lines.push(`  ${label.padEnd(14)}${value}`);
  row('era', KIND_TEXT[report.kind]);
  row(
    'versions',
    [...report.versions.modern, ...(report.versions.legacy ? [`${report.versions.legacy} (legacy)`] : [])].join(', ') || 'unknown',
  );
  row('transport', report.transport);
  if (report.serverInfo)
    row(
      'server',
      `${report.serverInfo.name} ${report.serverInfo.version}${report.serverInfo.title ? ` (${report.serverInfo.title})` : ''}`,
    );
  row('capabilities', describeCapabilities(report.capabilities) || 'none');
  const offer = (['tools', 'prompts', 'resources'] as const)
    .filter((k) => report.counts[k] !== undefined)
    .map((k) => `${report.counts[k]} ${k}`);
  row('offers', offer.join(', ').replace(/\b1 (tools|prompts|resources)\b/g, (_, k: string) => `1 ${k.slice(0, -1)}`) || 'nothing listed');
  row(
    'probe',
    `${report.timing.roundTrips} round trip${report.timing.roundTrips === 1 ? '' : 's'}, ${report.timing.probeMs} ms (inspection ${report.timing.inspectMs} ms)`,
  );
  for (const step of steps ?? [])
    row(
      '  step',
      Object.entries(step)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(' '),
    );
  lines.push('  who can use it');
  const labels: Record<keyof ServerReport['clients'], string> = {
    'modern-only': 'modern-only client',
    'dual-era': 'dual-era client',
    legacy: 'legacy client',
  };
  for (const key of ['modern-only', 'dual-era', 'legacy'] as const) {
    const reach = report.clients[key];
    lines.push(`    ${labels[key].padEnd(20)}${reach.direct ? green('directly') : yellow(`through ${reach.through}`)}`);
  }
  return `${lines.join('\n')}\n`;
}

function describeCapabilities(capabilities: Record<string, unknown>): string {
  return Object.entries(capabilities)
    .map(([name, value]) => {
      const flags =
        value !== null && typeof value === 'object' && !Array.isArray(value)
          ? Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] === true)
          : [];
      return flags.length > 0 ? `${name} (${flags.join(', ')})` : name;
    })
    .join(', ');
}
