/** Anything that answers INFO: a node client, a cluster node, the benchmarks' own connections. */
interface InfoSource {
  info(section: string): Promise<unknown>;
}

/**
 * Calls of every command Redis has executed since it started, by name (INFO commandstats: lower case,
 * `client|tracking` style for subcommands, the commands scripts call counted as well as the scripts).
 */
export async function commandCalls(redis: InfoSource): Promise<Map<string, number>> {
  const info = String(await redis.info('commandstats'));
  return new Map([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map(([, name, count]) => [name!, Number(count)]));
}

/** The calls made between two {@link commandCalls} readings, commands called no time left out. */
export function commandCallsBetween(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [name, count] of after) {
    const change = count - (before.get(name) ?? 0);
    if (change > 0) delta.set(name, change);
  }
  return delta;
}

/**
 * The commands Redis executed while `work` ran, by name, leaving out the INFO calls that count them.
 * Nothing else may use the server meanwhile.
 */
export async function commandsExecutedDuring(
  redis: InfoSource,
  work: () => Promise<unknown>,
): Promise<Record<string, number>> {
  const before = await commandCalls(redis);
  await work();
  const delta = commandCallsBetween(before, await commandCalls(redis));
  delta.delete('info');
  return Object.fromEntries(delta);
}
