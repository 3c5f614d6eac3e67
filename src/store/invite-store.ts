import type { Clock } from '../clock.ts';
import { formatTimestamp } from '../timestamp.ts';
import { LuaScript } from './lua-script.ts';
import { newOwnerToken, parseOwnerToken } from './owner-token.ts';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/** An invitation to set a dashboard password: its one-time token and when it stops working. */
export interface Invite {
  token: string;
  expires_at: string;
}

// KEYS: invite. ARGV: hash of the presented secret. Used once: a match deletes it.
const CONSUME = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`);

/**
 * One pending invitation per owner (a new one replaces the last), kept as the SHA-256 of its token
 * with an expiry; accepting it deletes it, so a link works once.
 */
export class InviteStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Clock;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Clock) {
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

  /** The owner an unused, unexpired invitation belongs to (and it is used up); undefined otherwise. */
  async consume(token: unknown): Promise<string | undefined> {
    const presented = parseOwnerToken(token);
    if (!presented) return undefined;
    const used = await CONSUME.run(this.redis, [this.keys.invite(presented.userId)], [presented.hash]);
    return used === 1 ? presented.userId : undefined;
  }

  /** Whether the token is a live invitation, without using it up. */
  async isValid(token: unknown): Promise<boolean> {
    const presented = parseOwnerToken(token);
    if (!presented) return false;
    return (await this.redis.get(this.keys.invite(presented.userId))) === presented.hash;
  }
}
