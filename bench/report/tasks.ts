/**
 * RESULTS.md's Tasks section, from the tasks bench's report (bench/tasks.ts): what was measured,
 * each kind of request's latency, and the ratios, side by side in the same run.
 */
import { formatRatio, int, markdownTable as table, us } from '../shared/format.ts';
import type { PollCell } from '../tasks/polls.ts';
import { KIND_LABELS } from '../tasks/summary.ts';
import type { Run } from './types.ts';

function cellTables(c: PollCell): string[] {
  return [
    table(
      ['request', 'n', 'p50', 'p99', 'mean'],
      Object.entries(c.kinds).map(([key, s]) => [KIND_LABELS[key] ?? key, int.format(s.n), us(s.p50Us), us(s.p99Us), us(s.meanUs)]),
      new Set([1, 2, 3, 4]),
    ),
    '',
    table(
      ['ratio', 'p50', 'p99', 'paired'],
      c.ratios.map((r) => [r.label, formatRatio(r.ratioP50), formatRatio(r.ratioP99), formatRatio(r.pairedRatio)]),
      new Set([1, 2, 3]),
    ),
  ];
}

export function tasksSection(run: Run): string {
  const t = run.parts.tasks;
  if (!t) return '_Not measured in this run._';
  const parts: string[] = [
    `A modern client that declares the tasks extension (\`io.modelcontextprotocol/tasks\`) starts one task and, while it stays \`working\`, polls it with ` +
      `\`tasks/get\`, in turn with plain calls through the same front and the same connection, one request at a time; the order of the kinds rotates ` +
      `from round to round, every answer is checked (the task still working, the greeting right). The server: ${t.server}. ` +
      'Paired: the median over the rounds of the ratio within each round.',
  ];
  if (t.oneProcess)
    parts.push(
      '',
      `**One process.** \`wrapLegacyServer\` served by Node's HTTP server (\`serveNodeHttp\`, as \`serve\` runs it), the fixture in the same process; ` +
        `${int.format(t.oneProcess.rounds)} rounds after ${t.oneProcess.warm} unmeasured.`,
      '',
      ...cellTables(t.oneProcess),
    );
  if (t.fleetSkipped) parts.push('', `**Forwarded.** _Not measured in this run: ${t.fleetSkipped}._`);
  if (t.fleet)
    parts.push(
      '',
      `**Forwarded.** Two replicas, A and B, of \`mcp-dual-era serve --fleet\` (compiled, as installed${t.serveOptions.length ? `, with \`${t.serveOptions.join(' ')}\`` : ''}) ` +
        `in front of the fixture over stdio, on the machine's Redis (${t.redis ? `Redis ${t.redis.version}` : 'version unknown'}). The task is started on A; ` +
        "`tasks/get` sent to B is forwarded to A, which the task's id names; beside it a plain call to B, `tasks/get` sent to A itself, and a plain call to A. " +
        `${int.format(t.fleet.rounds)} rounds after ${t.fleet.warm} unmeasured.`,
      '',
      ...cellTables(t.fleet),
    );
  const problems = [...t.wrongSamples.map((w) => `wrong answer: ${w}`), ...t.failures.map((x) => `failure: ${x}`)];
  if (problems.length > 0)
    parts.push(
      '',
      `**${t.wrongAnswers} wrong answer(s), ${t.failures.length} failure(s):**`,
      '',
      ...problems.map((p) => `- ${p.split('\n')[0]}`),
    );
  return parts.join('\n');
}
