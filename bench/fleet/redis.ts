/**
 * The machine's Redis, as the benches that run a fleet on it see it: which one (`--redis=URL`,
 * with `--quick`, the arguments such a bench takes), whether it answers (and its version), and
 * deleting a fleet's keys once the bench is done with them.
 */
import { createClient } from 'redis';

/** The arguments of a bench that runs a fleet (`--quick`, `--redis=URL`); exits 2 with `usage` on any other. */
export function fleetBenchArgs(usage: string): { quick: boolean; redisUrl: string } {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--quick' && !a.startsWith('--redis='));
  if (unknown.length > 0) {
    console.error(`unknown argument(s): ${unknown.join(' ')}\n${usage}`);
    process.exit(2);
  }
  const redisUrl =
    args.find((a) => a.startsWith('--redis='))?.slice('--redis='.length) ?? process.env['MCP_DUAL_ERA_REDIS'] ?? 'redis://127.0.0.1:6379';
  return { quick: args.includes('--quick'), redisUrl };
}

/** The Redis's version, or why it cannot be reached. */
export async function redisVersion(url: string): Promise<{ version: string } | { error: string }> {
  const client = createClient({ url, socket: { connectTimeout: 3000, reconnectStrategy: false } });
  client.on('error', () => {});
  try {
    await client.connect();
    const info = await client.info('server');
    return { version: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown' };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  } finally {
    if (client.isOpen) await client.close().catch(() => client.destroy());
  }
}

/** Deletes every key of the fleet `prefix`; how many. */
export async function deleteKeys(url: string, prefix: string): Promise<number> {
  const client = createClient({ url });
  client.on('error', () => {});
  await client.connect();
  let deleted = 0;
  try {
    for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 100 }))
      if (batch.length > 0) deleted += await client.del(batch);
  } finally {
    await client.close().catch(() => client.destroy());
  }
  return deleted;
}
