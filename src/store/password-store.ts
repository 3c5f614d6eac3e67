import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/** Owners' dashboard passwords, stored only as scrypt hashes (see src/dashboard/password-hash.ts). */
export class PasswordStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  async set(userId: string, hash: string): Promise<void> {
    await this.redis.set(this.keys.password(userId), hash);
  }

  /** The stored hash, or undefined when the owner has not set a password yet. */
  async get(userId: string): Promise<string | undefined> {
    return (await this.redis.get(this.keys.password(userId))) ?? undefined;
  }
}
