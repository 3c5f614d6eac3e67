import type { Provider } from '../chatbots/chatbot.ts';
import type { Clock } from '../clock.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { ExpiringSet } from '../redis/expiring-set.ts';

/** What a gateway is set up with, as `doctor` checks it: whether each thing is set, never a secret. */
export interface GatewaySetup {
  /** Whether the gateway can call each provider (an API key where the provider needs one). */
  providers: Record<Provider, boolean>;
  /** Where it listens (`http://HOST:PORT`), the base of links when no PUBLIC_URL is published. */
  listen_url: string;
  /** `DEFAULT_PLAN`: the plan of an account created without one. */
  default_plan: string;
}

/** How far a gateway's in-process search index has loaded, as it says with its presence. */
export interface SearchIndexProgress {
  /** Listed chunks read so far (skipped and vanished ones included, so it reaches `total`). */
  loaded: number;
  /** Chunks listed when the load began; undefined while they are being listed. */
  total: number | undefined;
  /** Whether every chatbot listed is loaded. */
  done: boolean;
}

/**
 * What the gateway processes tell the CLI: that they are running (each says so every few seconds,
 * in a sorted set scored by when its word lapses), so `source add --wait` can tell "queued, a gateway
 * will take it" from "no gateway is running"; the PUBLIC_URL they are reached at, or else where the
 * last one started listens, from which the CLI builds the links it prints; and whether they crawl private addresses, which decides the url
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
    await this.redis.del(this.keys.gatewaySearchIndex(gatewayId));
  }

  /** How far this gateway's search index has loaded, said for `ttlMs` (as long as its presence). */
  async recordSearchIndex(gatewayId: string, progress: SearchIndexProgress, ttlMs: number): Promise<void> {
    await this.redis.set(this.keys.gatewaySearchIndex(gatewayId), JSON.stringify(progress), { PX: ttlMs });
  }

  /**
   * Each running gateway's search index, by gateway id: `loaded`, or `<loaded>/<total> chunks` while it
   * loads (`listing chunks` before it knows the total), or `unknown` when the gateway has not said.
   */
  async searchIndexes(): Promise<Record<string, string>> {
    const ids = (await this.ids()).toSorted();
    // One GET per gateway: in a Redis Cluster their keys are in different slots.
    const records = await Promise.all(ids.map((id) => this.redis.get(this.keys.gatewaySearchIndex(id))));
    return Object.fromEntries(ids.map((id, i) => [id, searchIndexView(records[i] ?? null)]));
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

  /**
   * The base of links to a gateway: the published PUBLIC_URL, else where the last gateway to start
   * listens; undefined when no gateway has run on this Redis.
   */
  async linkBase(): Promise<string | undefined> {
    return (await this.publicUrl()) ?? (await this.setup())?.listen_url;
  }

  /** What this gateway is set up with, replacing what the last one to start published. */
  async publishSetup(setup: GatewaySetup): Promise<void> {
    await this.redis.set(this.keys.gatewaySetup(), JSON.stringify(setup));
  }

  /** What the last gateway to start was set up with; undefined when none has run on this Redis. */
  async setup(): Promise<GatewaySetup | undefined> {
    const value = await this.redis.get(this.keys.gatewaySetup());
    return value === null ? undefined : (JSON.parse(value) as GatewaySetup);
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

function searchIndexView(record: string | null): string {
  if (record === null) return 'unknown';
  const progress = JSON.parse(record) as SearchIndexProgress;
  if (progress.done) return 'loaded';
  if (progress.total === undefined) return 'listing chunks';
  return `${progress.loaded}/${progress.total} chunks`;
}
