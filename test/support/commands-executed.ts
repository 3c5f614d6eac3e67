import type { RedisClient } from '../../src/redis/redis-client.ts';

/**
 * The commands Redis executed while `work` ran (INFO commandstats, so the commands scripts call are
 * counted as well as the scripts), by name, leaving out the INFO calls that count them and those
 * executed no time. Nothing else may use the server meanwhile.
 */
export async function commandsExecutedDuring(
  redis: RedisClient,
  work: () => Promise<unknown>,
): Promise<Record<string, number>> {
  const before = await calls(redis);
  await work();
  const after = await calls(redis);
  return Object.fromEntries(
    [...after]
      .map(([name, count]) => [name, count - (before.get(name) ?? 0)] as const)
      .filter(([name, count]) => count !== 0 && name !== 'info'),
  );
}

async function calls(redis: RedisClient): Promise<Map<string, number>> {
  const info = String(await redis.info('commandstats'));
  return new Map(
    [...info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)].map(([, name, count]) => [name!, Number(count)]),
  );
}
