import { randomUUID } from 'node:crypto';
import type { ApiKeyStore } from '../store/api-key-store.ts';
import { API_PLAN, type KeyOwner } from '../auth/api-key.ts';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import type { Clock } from '../clock.ts';
import { SLIDING_WINDOW } from './sliding-window.ts';
import { COUNT_MESSAGE, type MessageCount, type QuotaDecision, type QuotaStore } from './quota-store.ts';

/** How often one process writes a key's `last_used_at`: once in each such interval the key is used. */
const TOUCH_INTERVAL_MICROS = 1_000_000;

/** What the gate decided for one API request. */
export type GateDecision =
  | { kind: 'unauthorized' }
  | { kind: 'limited'; limit: number; remaining: 0 }
  | {
      kind: 'admitted';
      userId: string;
      limit: number;
      remaining: number;
      /** The monthly quota's decision on the request's message, when it was asked to count one. */
      quota?: QuotaDecision;
    };

/** The gate's limits: `limit` accepted requests per key in any `windowMs`. */
export interface GateOptions {
  limit: number;
  windowMs: number;
}

/** A token and the account and key its lookup entry names (the gate's script still checks both). */
export interface IdentifiedKey extends KeyOwner {
  token: string;
}

// One script decides authorization and the rolling window with the server's TIME, so the check is
// exact across every gateway process and a rejected request leaves no trace in the window.
// `admit_request` returns {1, remaining}, {2, 0} when limited, {0, 0} for another plan, {3, 0} for a
// key no longer active (its lookup entry is stale). `touch` '1' writes the key's last_used_at (the
// server's time).
const ADMISSION = `${SLIDING_WINDOW}
local function admit_request(user, key, key_window, limit, window, nonce, plan, touch)
  if redis.call('HGET', key, 'active') ~= '1' then return {3, 0} end
  if redis.call('HGET', user, 'plan') ~= plan then return {0, 0} end
  local now = server_now()
  window = tonumber(window)
  limit = tonumber(limit)
  local used = window_used(key_window, now, window)
  if used >= limit then return {2, 0} end
  window_add(key_window, now, window, now .. ':' .. nonce)
  if touch == '1' then redis.call('HSET', key, 'last_used_at', now) end
  return {1, limit - used - 1}
end
`;

type AdmitKeys = [user: string, key: string, keyWindow: string];
type AdmitArgs = [limit: number, windowMicros: number, nonce: string, plan: string, touch: '1' | '0'];

const ADMIT = new LuaScript<{ keys: AdmitKeys; args: AdmitArgs; reply: [verdict: 0 | 1 | 2 | 3, remaining: number] }>(
  `${ADMISSION}
return admit_request(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
`,
  { plain: true },
);

// The REST chat's request and its message in one round trip: the gate's script, then, for an admitted
// request, the quota's count (its keys share the account's hash tag). Replies as ADMIT, with the count's
// 1 (counted) or 0 (the month's quota used up) third for an admitted request.
const ADMIT_MESSAGE = new LuaScript<{
  keys: [...AdmitKeys, ...MessageCount['keys']];
  args: [...AdmitArgs, ...MessageCount['args']];
  reply: [verdict: 0 | 2 | 3, remaining: 0] | [verdict: 1, remaining: number, counted: 0 | 1];
}>(
  `${ADMISSION}${COUNT_MESSAGE}
local admitted = admit_request(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if admitted[1] ~= 1 then return admitted end
return {1, admitted[2], count_message(KEYS[4], KEYS[5], ARGV[6], ARGV[7], ARGV[8])}
`,
  { plain: true },
);

/**
 * Admits public API requests: key lookup, key and plan check, and the per-key sliding-window rate
 * limit, in SPEC's order (401 before 429). Each process writes a key's `last_used_at` once in each
 * second the key is used (it remembers which keys it wrote, so a request need not read the field).
 * A REST chat's message is counted against the monthly quota in the same script (see `admitKey`).
 */
export class RequestGate {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly apiKeys: ApiKeyStore;
  private readonly quota: QuotaStore;
  private readonly options: GateOptions;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  /** The keys whose `last_used_at` this process wrote in the second that began at `touchedSince` (µs). */
  private touched = new Set<string>();
  private touchedSince = 0;

  constructor(
    redis: RedisClient,
    keys: RedisKeys,
    apiKeys: ApiKeyStore,
    quota: QuotaStore,
    options: GateOptions,
    clock: Pick<Clock, 'nowMicros'>,
  ) {
    this.redis = redis;
    this.clock = clock;
    this.keys = keys;
    this.apiKeys = apiKeys;
    this.quota = quota;
    this.options = options;
  }

  async admit(token: string | undefined): Promise<GateDecision> {
    const key = await this.identify(token);
    return key ? this.admitKey(key) : { kind: 'unauthorized' };
  }

  /** Whose key the token is, by its lookup entry (a read through the client-side cache); undefined is a 401. */
  async identify(token: string | undefined): Promise<IdentifiedKey | undefined> {
    if (token === undefined) return undefined;
    const owner = await this.apiKeys.lookup(token);
    return owner && { ...owner, token };
  }

  /**
   * Admits a request of an identified key. With `countMessage`, an admitted request's message is
   * counted against its account's monthly quota in the same script, and the decision carries the
   * quota's answer: the REST chat checks everything SPEC answers before the quota first, then spends
   * one round trip where the gate and the quota would take two.
   */
  async admitKey(key: IdentifiedKey, countMessage = false): Promise<GateDecision> {
    const { limit, windowMs } = this.options;
    const touch = this.book(key.keyId);
    const redisKeys: AdmitKeys = [
      this.keys.user(key.userId),
      this.keys.apiKey(key.userId, key.keyId),
      this.keys.rateWindow(key.userId, key.keyId),
    ];
    const args: AdmitArgs = [limit, windowMs * 1000, randomUUID(), API_PLAN, touch ? '1' : '0'];
    // An account whose plan has no quota counts no message (the pipeline refuses it the same way).
    const count = countMessage ? this.quota.counting(key.userId, API_PLAN) : undefined;
    const reply = count
      ? await ADMIT_MESSAGE.run(this.redis, [...redisKeys, ...count.keys], [...args, ...count.args])
      : await ADMIT.run(this.redis, redisKeys, args);
    // Only an admitted request writes `last_used_at`: a refused one gives its second's write back. (An
    // admitted request that overlapped it and found the write booked goes without; the next one writes.)
    if (touch && reply[0] !== 1) this.touched.delete(key.keyId);
    // A revoked key whose lookup entry survived (revoked by an older version, or a crash between
    // the two steps of revoke): dropped now, so its next 401 is an unknown key's.
    if (reply[0] === 3) await this.apiKeys.forget(key.token);
    if (reply[0] === 0 || reply[0] === 3) return { kind: 'unauthorized' };
    if (reply[0] === 2) return { kind: 'limited', limit, remaining: 0 };
    const admitted = { kind: 'admitted' as const, userId: key.userId, limit, remaining: reply[1] };
    if (!countMessage) return admitted;
    const quota: QuotaDecision = reply.length === 3 ? (reply[2] === 1 ? 'counted' : 'exhausted') : 'unknown-account';
    return { ...admitted, quota };
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
