import type { Clock } from '../clock.ts';
import { LuaScript } from './lua-script.ts';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

// KEYS: user, month counter. ARGV: ttl seconds, then plan/limit pairs.
// Reading the plan, comparing and counting in one script makes the quota exact under any race.
const CONSUME = new LuaScript(`
local plan = redis.call('HGET', KEYS[1], 'plan')
if not plan then return -1 end
local limit = nil
for i = 2, #ARGV, 2 do
  if ARGV[i] == plan then limit = tonumber(ARGV[i + 1]) end
end
if limit == nil then return -1 end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
if used >= limit then return 0 end
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1
`);

// KEYS: month counter. Gives back one message when the turn it was counted for was refused later.
const REFUND = new LuaScript(`
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
return 1
`);

/** What the quota said about one user message. */
export type QuotaDecision = 'counted' | 'exhausted' | 'unknown-account';

/**
 * The monthly message quota per account: calendar months in UTC, counting `role=user` messages from
 * every channel, limits per plan from PLAN_QUOTAS.
 */
export class QuotaStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Clock;
  private readonly quotas: Record<string, number>;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Clock, quotas: Record<string, number>) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.quotas = quotas;
  }

  /** Counts one user message if the account's plan still allows one this month. */
  async consume(userId: string): Promise<QuotaDecision> {
    const args: Array<string | number> = [40 * 24 * 3600];
    for (const [plan, limit] of Object.entries(this.quotas)) args.push(plan, limit);
    const reply = await CONSUME.run(this.redis, [this.keys.user(userId), this.counter(userId)], args);
    return reply === 1 ? 'counted' : reply === 0 ? 'exhausted' : 'unknown-account';
  }

  /** Gives back a message counted for a turn that was then refused. */
  async refund(userId: string): Promise<void> {
    await REFUND.run(this.redis, [this.counter(userId)], []);
  }

  /** Messages counted this month. */
  async used(userId: string): Promise<number> {
    return Number((await this.redis.get(this.counter(userId))) ?? 0);
  }

  private counter(userId: string): string {
    const month = new Date(this.clock.nowMicros() / 1000).toISOString().slice(0, 7);
    return this.keys.quota(userId, month);
  }
}
