import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/**
 * Which gateway processes are running: each one says so every few seconds (a sorted set scored by
 * when its word lapses), so the CLI can tell "queued, a gateway will take it" from "no gateway is
 * running" instead of waiting for ever.
 */
export class GatewayPresence {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  /** This gateway is running until `untilMs` unless it says so again. */
  async beat(gatewayId: string, untilMs: number): Promise<void> {
    await this.redis.zAdd(this.keys.gateways(), { score: untilMs, value: gatewayId });
  }

  async leave(gatewayId: string): Promise<void> {
    await this.redis.zRem(this.keys.gateways(), gatewayId);
  }

  /** How many gateways are running at `nowMs` (lapsed ones are dropped on the way). */
  async running(nowMs: number): Promise<number> {
    const [, count] = (await this.redis
      .multi()
      .zRemRangeByScore(this.keys.gateways(), '-inf', nowMs)
      .zCard(this.keys.gateways())
      .exec()) as unknown as [number, number];
    return count;
  }
}
