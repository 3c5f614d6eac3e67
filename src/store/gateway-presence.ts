import type { Clock } from '../clock.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { ExpiringSet } from '../redis/expiring-set.ts';

/**
 * What the gateway processes tell the CLI: that they are running (each says so every few seconds,
 * in a sorted set scored by when its word lapses), so `source add --wait` can tell "queued, a gateway
 * will take it" from "no gateway is running"; the PUBLIC_URL they are reached at, from which the
 * CLI builds the links it prints; and whether they crawl private addresses, which decides the url
 * sources the CLI accepts.
 */
export class GatewayPresence {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly members: ExpiringSet;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>) {
    this.redis = redis;
    this.keys = keys;
    this.members = new ExpiringSet(redis, clock);
  }

  /** This gateway is running for `ttlMs` more unless it says so again; lapsed ones are dropped. */
  async beat(gatewayId: string, ttlMs: number): Promise<void> {
    await this.members.enter(this.keys.gateways(), gatewayId, ttlMs);
  }

  async leave(gatewayId: string): Promise<void> {
    await this.members.leave(this.keys.gateways(), gatewayId);
  }

  /** How many gateways are running now. */
  async running(): Promise<number> {
    return this.members.count(this.keys.gateways());
  }

  /** The ids of the gateways running now. */
  async ids(): Promise<string[]> {
    return this.members.members(this.keys.gateways());
  }

  async publishUrl(publicUrl: string): Promise<void> {
    await this.redis.set(this.keys.gatewayPublicUrl(), publicUrl);
  }

  /** The PUBLIC_URL the gateways published, if any did. */
  async publicUrl(): Promise<string | undefined> {
    return (await this.redis.get(this.keys.gatewayPublicUrl())) ?? undefined;
  }

  /** Publishes the gateways' `CRAWL_ALLOW_PRIVATE`, which the CLI's url source check follows. */
  async publishCrawlAllowsPrivate(allowPrivate: boolean): Promise<void> {
    await this.redis.set(this.keys.gatewayCrawlAllowsPrivate(), allowPrivate ? '1' : '0');
  }

  /** Whether the gateways crawl private addresses, if one has said so. */
  async crawlAllowsPrivate(): Promise<boolean | undefined> {
    const value = await this.redis.get(this.keys.gatewayCrawlAllowsPrivate());
    return value === null ? undefined : value === '1';
  }
}
