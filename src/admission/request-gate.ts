import { randomUUID } from 'node:crypto';
import type { ApiKeyStore } from '../store/api-key-store.ts';
import { API_PLAN } from '../auth/api-key.ts';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import type { Clock } from '../clock.ts';
import { SLIDING_WINDOW } from './sliding-window.ts';

/** How often one process writes a key's `last_used_at`: once in each such interval the key is used. */
const TOUCH_INTERVAL_MICROS = 1_000_000;

/** What the gate decided for one API request. */
export type GateDecision =
  | { kind: 'unauthorized' }
  | { kind: 'limited'; limit: number; remaining: 0 }
  | { kind: 'admitted'; userId: string; limit: number; remaining: number };

/** The gate's limits: `limit` accepted requests per key in any `windowMs`. */
export interface GateOptions {
  limit: number;
  windowMs: number;
}

// One script decides authorization and the rolling window with the server's TIME, so the check is
// exact across every gateway process and a rejected request leaves no trace in the window.
// Replies {1, remaining}, {2, 0} when limited, {0, 0} for another plan, {3, 0} for a key no longer
// active (its lookup entry is stale). `touch` '1' writes the key's last_used_at (the server's time).
const ADMIT = new LuaScript<{
  keys: [user: string, key: string, keyWindow: string];
  args: [limit: number, windowMicros: number, nonce: string, plan: string, touch: '1' | '0'];
  reply: [verdict: 0 | 1 | 2 | 3, remaining: number];
}>(
  `${SLIDING_WINDOW}
if redis.call('HGET', KEYS[2], 'active') ~= '1' then return {3, 0} end
if redis.call('HGET', KEYS[1], 'plan') ~= ARGV[4] then return {0, 0} end
local now = server_now()
local window = tonumber(ARGV[2])
local used = window_used(KEYS[3], now, window)
local limit = tonumber(ARGV[1])
if used >= limit then return {2, 0} end
window_add(KEYS[3], now, window, now .. ':' .. ARGV[3])
if ARGV[5] == '1' then redis.call('HSET', KEYS[2], 'last_used_at', now) end
return {1, limit - used - 1}
`,
  { plain: true },
);

/**
 * Admits public API requests: key lookup, key and plan check, and the per-key sliding-window rate
 * limit, in SPEC's order (401 before 429). Each process writes a key's `last_used_at` once in each
 * second the key is used (it remembers which keys it wrote, so a request need not read the field).
 */
export class RequestGate {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly apiKeys: ApiKeyStore;
  private readonly options: GateOptions;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  /** The keys whose `last_used_at` this process wrote in the second that began at `touchedSince` (µs). */
  private touched = new Set<string>();
  private touchedSince = 0;

  constructor(
    redis: RedisClient,
    keys: RedisKeys,
    apiKeys: ApiKeyStore,
    options: GateOptions,
    clock: Pick<Clock, 'nowMicros'>,
  ) {
    this.redis = redis;
    this.clock = clock;
    this.keys = keys;
    this.apiKeys = apiKeys;
    this.options = options;
  }

  async admit(token: string | undefined): Promise<GateDecision> {
    if (token === undefined) return { kind: 'unauthorized' };
    const owner = await this.apiKeys.lookup(token);
    if (!owner) return { kind: 'unauthorized' };
    const { limit, windowMs } = this.options;
    const touch = this.book(owner.keyId);
    const reply = await ADMIT.run(
      this.redis,
      [
        this.keys.user(owner.userId),
        this.keys.apiKey(owner.userId, owner.keyId),
        this.keys.rateWindow(owner.userId, owner.keyId),
      ],
      [limit, windowMs * 1000, randomUUID(), API_PLAN, touch ? '1' : '0'],
    );
    // Only an admitted request writes `last_used_at`: a refused one gives its second's write back. (An
    // admitted request that overlapped it and found the write booked goes without; the next one writes.)
    if (touch && reply[0] !== 1) this.touched.delete(owner.keyId);
    // A revoked key whose lookup entry survived (revoked by an older version, or a crash between
    // the two steps of revoke): dropped now, so its next 401 is an unknown key's.
    if (reply[0] === 3) await this.apiKeys.forget(token);
    if (reply[0] === 0 || reply[0] === 3) return { kind: 'unauthorized' };
    if (reply[0] === 2) return { kind: 'limited', limit, remaining: 0 };
    return { kind: 'admitted', userId: owner.userId, limit, remaining: reply[1] };
  }

  /**
   * Whether this request writes its key's `last_used_at`: the first one of each second in this process
   * (booked here, given back if the request is refused). The memory starts afresh every second, so it
   * holds only the keys used in one.
   */
  private book(keyId: string): boolean {
    const now = this.clock.nowMicros();
    if (now - this.touchedSince >= TOUCH_INTERVAL_MICROS) {
      this.touched = new Set();
      this.touchedSince = now;
    }
    if (this.touched.has(keyId)) return false;
    this.touched.add(keyId);
    return true;
  }
}
