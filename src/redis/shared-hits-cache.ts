import { BasicClientSideCache, BasicPooledClientSideCache } from 'redis';

type CacheArguments = Parameters<BasicClientSideCache['handleCache']>;

/**
 * node-redis's client-side cache, answering a hit with the cached reply itself instead of a
 * structuredClone of it (15% of the read benchmark's CPU went to those clones: a request reads its
 * key owner and each listed chatbot from the cache). A reply made only of strings, numbers, booleans,
 * nulls, arrays and plain objects is deep-frozen the first time it is shared, so a caller that
 * tried to change one would throw instead of changing every later reader's copy; any other reply
 * (Buffers, Maps) is cloned as the library does. Misses and reads that wait for an earlier miss go
 * through the library unchanged.
 */
export class SharedHitsCache extends BasicClientSideCache {
  override handleCache(...args: CacheArguments): Promise<unknown> {
    return sharedHit(this, args) ?? super.handleCache(...args);
  }
}

/** The same, for a cluster's pooled cache (one cache for every node's client). */
export class SharedHitsPooledCache extends BasicPooledClientSideCache {
  override handleCache(...args: CacheArguments): Promise<unknown> {
    return sharedHit(this, args) ?? super.handleCache(...args);
  }
}

function sharedHit(cache: BasicClientSideCache, [, parser]: CacheArguments): Promise<unknown> | undefined {
  const entry = cache.get(cacheKey(parser.redisArgs));
  if (entry === undefined || !('value' in entry)) return undefined;
  const { value } = entry as { value: unknown };
  if (!freezeShareable(value)) return undefined;
  cache.recordHits(1);
  return Promise.resolve(value);
}

/**
 * The key node-redis's cache files a command's reply under (`generateCacheKey`, not exported). Were
 * it to change, every lookup here would miss and the library would answer, cloning as before (a test
 * checks that hits are shared).
 */
export function cacheKey(redisArgs: readonly (string | Buffer)[]): string {
  const parts = new Array<string | number | Buffer>(redisArgs.length * 2);
  for (let i = 0; i < redisArgs.length; i++) {
    parts[i] = redisArgs[i]!.length;
    parts[i + redisArgs.length] = redisArgs[i]!;
  }
  return parts.join('_');
}

/** Freezes a reply made only of plain data, deeply; false (leaving it as it is) for anything else. */
export function freezeShareable(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return false;
  // Frozen here before, children first: shared already.
  if (Object.isFrozen(value)) return true;
  if (!Object.values(value).every(freezeShareable)) return false;
  Object.freeze(value);
  return true;
}
