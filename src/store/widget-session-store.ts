import { randomUUID } from 'node:crypto';
import { addressKey } from './login-gate.ts';
import { LuaScript } from './lua-script.ts';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/** How long a session handed out stays resumable, and how many one client address gets per window. */
export interface WidgetSessionLimits {
  ttlSeconds: number;
  /** New sessions one client address may start on one chatbot in any `windowMs`. */
  perAddress: number;
  windowMs: number;
}

/** A new session, or how long until the address may start another. */
export type Issued = { kind: 'issued'; sessionId: string } | { kind: 'limited'; retryAfterSeconds: number };

// KEYS: the address's new-session window on the chatbot, the new session. ARGV: limit, window µs,
// session id, session TTL s. A sliding window with the server's clock (every gateway counts in it);
// the session is written only when admitted. Returns {1} or {0, µs until a slot frees}.
const ISSUE = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  local oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
  return {0, oldest + window - now}
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
redis.call('SET', KEYS[2], '1', 'EX', ARGV[4])
return {1}
`);

/**
 * Widget sessions (`embed-<uuid>`): handed out to new visitors, and recognised when a widget comes
 * back with one, whether or not its visitor has written yet. A client address starts at most
 * `perAddress` new sessions on a chatbot per window: each is a new conversation that may spend the
 * owner's monthly quota.
 */
export class WidgetSessionStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly limits: WidgetSessionLimits;

  constructor(redis: RedisClient, keys: RedisKeys, limits: WidgetSessionLimits) {
    this.redis = redis;
    this.keys = keys;
    this.limits = limits;
  }

  async issue(chatbotId: string, address: string): Promise<Issued> {
    const sessionId = `embed-${randomUUID()}`;
    const { ttlSeconds, perAddress, windowMs } = this.limits;
    const reply = (await ISSUE.run(
      this.redis,
      [this.keys.newWidgetSessions(chatbotId, addressKey(address)), this.keys.widgetSession(chatbotId, sessionId)],
      [perAddress, windowMs * 1000, sessionId, ttlSeconds],
    )) as [number, number?];
    if (reply[0] === 1) return { kind: 'issued', sessionId };
    return { kind: 'limited', retryAfterSeconds: Math.max(1, Math.ceil((reply[1] ?? 0) / 1_000_000)) };
  }

  /** Whether this chatbot handed the session out, or has a conversation under it. */
  async known(chatbotId: string, sessionId: string): Promise<boolean> {
    const found = await this.redis.exists([
      this.keys.widgetSession(chatbotId, sessionId),
      this.keys.conversation(chatbotId, sessionId),
    ]);
    return found > 0;
  }
}
