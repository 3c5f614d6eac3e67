import type { Clock } from '../clock.ts';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/**
 * Which owners have a human agent online, across every gateway process: each agent connection
 * announces itself with a time-to-live and renews it while open, so a process that dies stops
 * counting on its own.
 */
export class AgentPresence {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Clock;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Clock) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
  }

  /** Marks (or keeps) a connection online for `ttlMs`. */
  async enter(userId: string, connectionId: string, ttlMs: number): Promise<void> {
    const key = this.keys.agentsOnline(userId);
    const now = this.nowMs();
    await this.redis
      .multi()
      .zRemRangeByScore(key, '-inf', now)
      .zAdd(key, { score: now + ttlMs, value: connectionId })
      .pExpire(key, ttlMs)
      .exec();
  }

  async leave(userId: string, connectionId: string): Promise<void> {
    await this.redis.zRem(this.keys.agentsOnline(userId), connectionId);
  }

  /** Whether any agent of the owner is online now. */
  async anyOnline(userId: string): Promise<boolean> {
    return (await this.redis.zCount(this.keys.agentsOnline(userId), `(${this.nowMs()}`, '+inf')) > 0;
  }

  private nowMs(): number {
    return Math.floor(this.clock.nowMicros() / 1000);
  }
}
