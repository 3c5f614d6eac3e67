import type { Clock } from '../clock.ts';
import { formatTimestamp } from '../timestamp.ts';
import { newOwnerToken, parseOwnerToken, type OwnerToken } from '../auth/owner-token.ts';
import { readPastCache, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/** An invitation to set a dashboard password: its one-time token and when it stops working. */
export interface Invite {
  token: string;
  expires_at: string;
}

/**
 * One pending invitation per owner (a new one replaces the last), kept as the SHA-256 of its token
 * with an expiry. Accepting it (`PasswordStore.set` with the invitation) deletes it in the
 * script that sets the password, so a link works once.
 */
export class InviteStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
  }

  async create(userId: string, ttlSeconds: number): Promise<Invite> {
    const { token, hash } = newOwnerToken(userId);
    await this.redis.set(this.keys.invite(userId), hash, { EX: ttlSeconds });
    return {
      token,
      expires_at: formatTimestamp(this.clock.nowMicros() + ttlSeconds * 1_000_000),
    };
  }

  /** The invitation a token presents while it is pending (unused, unexpired); undefined otherwise. */
  async find(token: unknown): Promise<OwnerToken | undefined> {
    const presented = parseOwnerToken(token);
    if (!presented) return undefined;
    // An invitation just replaced or used through another gateway must not look pending here.
    const stored = await readPastCache<string | null>(this.redis, (multi) =>
      multi.get(this.keys.invite(presented.userId)),
    );
    return stored === presented.hash ? presented : undefined;
  }
}
