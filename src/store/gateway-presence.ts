import type { Clock } from '../clock.ts';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/**
 * What the gateway processes tell the CLI: that they are running (each says so every few seconds,
 * in a sorted set scored by when its word lapses), so `source add --wait` can tell "queued, a gateway
 * will take it" from "no gateway is running"; and the PUBLIC_URL they are reached at, from which the
 * CLI builds the links it prints.
 */
export class GatewayPresence {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Clock;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Clock) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
  }

  /** This gateway is running for `ttlMs` more unless it says so again; lapsed ones are dropped. */
  async beat(gatewayId: string, ttlMs: number): Promise<void> {
    const now = this.nowMs();
    await this.redis
      .multi()
      .zRemRangeByScore(this.keys.gateways(), '-inf', now)
      .zAdd(this.keys.gateways(), { score: now + ttlMs, value: gatewayId })
      .exec();
  }

  async leave(gatewayId: string): Promise<void> {
    await this.redis.zRem(this.keys.gateways(), gatewayId);
  }

  /** How many gateways are running now. */
  async running(): Promise<number> {
    return this.redis.zCount(this.keys.gateways(), `(${this.nowMs()}`, '+inf');
  }

  async publishUrl(publicUrl: string): Promise<void> {
    await this.redis.set(this.keys.gatewayPublicUrl(), publicUrl);
  }

  /** The PUBLIC_URL the gateways published, if any did. */
  async publicUrl(): Promise<string | undefined> {
    return (await this.redis.get(this.keys.gatewayPublicUrl())) ?? undefined;
  }

  private nowMs(): number {
    return Math.floor(this.clock.nowMicros() / 1000);
  }
}
