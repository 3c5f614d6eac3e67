import type { Clock } from '../clock.ts';
import type { RedisClient } from './redis-client.ts';

/**
 * Members that count only while they keep saying so: a sorted set scored by when each member's word
 * lapses (ms), the lapsed ones dropped on every entry, and the key itself expiring with its last
 * word. Agent connections of an owner and the running gateways are kept this way, so a process that
 * dies stops counting on its own.
 */
export class ExpiringSet {
  private readonly redis: RedisClient;
  private readonly clock: Pick<Clock, 'nowMicros'>;

  constructor(redis: RedisClient, clock: Pick<Clock, 'nowMicros'>) {
    this.redis = redis;
    this.clock = clock;
  }

  /** `member` counts for `ttlMs` more unless it enters again. */
  async enter(key: string, member: string, ttlMs: number): Promise<void> {
    const now = this.nowMs();
    await this.redis
      .multi()
      .zRemRangeByScore(key, '-inf', now)
      .zAdd(key, { score: now + ttlMs, value: member })
      .pExpire(key, ttlMs)
      .exec();
  }

  async leave(key: string, member: string): Promise<void> {
    await this.redis.zRem(key, member);
  }

  /** How many members count now. */
  async count(key: string): Promise<number> {
    return this.redis.zCount(key, `(${this.nowMs()}`, '+inf');
  }

  /** The members that count now. */
  async members(key: string): Promise<string[]> {
    return this.redis.zRangeByScore(key, `(${this.nowMs()}`, '+inf');
  }

  private nowMs(): number {
    return Math.floor(this.clock.nowMicros() / 1000);
  }
}
