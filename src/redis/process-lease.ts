import { LuaScript } from './lua-script.ts';
import { readPastCache, type RedisClient } from './redis-client.ts';

// Takes the right when free, renews it when already held.
const HOLD = new LuaScript<{ keys: [lease: string]; args: [holder: string, ttlMs: number]; reply: 0 | 1 }>(`
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`);

const LET_GO = new LuaScript<{ keys: [lease: string]; args: [holder: string]; reply: 0 }>(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`);

/**
 * The right of one process at a time to run something that must not run twice (a Telegram long
 * poller, a WhatsApp socket): a Redis key holding the holder's id with an expiry. The holder renews
 * it well before it lapses; when the holder dies, another process takes it once it has lapsed.
 */
export class ProcessLease {
  private readonly redis: RedisClient;

  constructor(redis: RedisClient) {
    this.redis = redis;
  }

  /** Takes or renews the right behind `key` for `ttlMs`; true while `holder` has it. */
  async hold(key: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await HOLD.run(this.redis, [key], [holder, ttlMs])) === 1;
  }

  /** Lets go of the right if `holder` has it. */
  async release(key: string, holder: string): Promise<void> {
    await LET_GO.run(this.redis, [key], [holder]);
  }

  /** Whether any process holds the right now. */
  async held(key: string): Promise<boolean> {
    // Not from the client-side cache: an expiry may not have reached it yet.
    const exists = await readPastCache<number>(this.redis, (multi) => multi.exists(key));
    return exists === 1;
  }
}
