import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../auth/secret-hash.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/** How a setup token looks: 32 random bytes, base64url. */
const SETUP_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * First-run setup tokens: a gateway that starts while no owner account exists prints one, and the
 * dashboard's setup page takes it to create the first owner. Only the SHA-256 of a token is kept,
 * with an expiry; each gateway start adds its own, and any one of them works once.
 */
export class SetupStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  async issue(ttlSeconds: number): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.redis.set(this.keys.setupToken(sha256Hex(token)), '1', { EX: ttlSeconds });
    return token;
  }

  /** Whether the token was issued and is neither used nor expired. */
  async pending(token: unknown): Promise<boolean> {
    if (typeof token !== 'string' || !SETUP_TOKEN.test(token)) return false;
    return (await this.redis.exists(this.keys.setupToken(sha256Hex(token)))) === 1;
  }

  /** Uses the token up: true for exactly one caller of a pending token. */
  async consume(token: unknown): Promise<boolean> {
    if (typeof token !== 'string' || !SETUP_TOKEN.test(token)) return false;
    return (await this.redis.del(this.keys.setupToken(sha256Hex(token)))) === 1;
  }
}
