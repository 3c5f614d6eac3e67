import { randomUUID } from 'node:crypto';
import { addressKey } from '../../admission/login-gate.ts';
import { LuaScript } from '../../redis/lua-script.ts';
import { plainConnection, type RedisClient } from '../../redis/redis-client.ts';
import type { RedisKeys } from '../../redis/redis-keys.ts';
import { retryAfterSeconds, SLIDING_WINDOW } from '../../admission/sliding-window.ts';

/** How long a session handed out stays resumable, and how many one client address gets per window. */
export interface WidgetSessionLimits {
  ttlSeconds: number;
  /** New sessions one client address may start on one chatbot in any `windowMs`. */
  perAddress: number;
  windowMs: number;
}

/** A new session, or how long until the address may start another. */
export type Issued = { kind: 'issued'; sessionId: string } | { kind: 'limited'; retryAfterSeconds: number };

// The session is written only when admitted. Returns {1} or {0, µs until a slot frees}.
const ISSUE = new LuaScript<{
  keys: [addressWindow: string, session: string];
  args: [limit: number, windowMicros: number, sessionId: string, ttlSeconds: number];
  reply: [1] | [0, waitMicros: number];
}>(`${SLIDING_WINDOW}
local wait = admit(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
if wait > 0 then return {0, wait} end
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
    const reply = await ISSUE.run(
      this.redis,
      [this.keys.newWidgetSessions(chatbotId, addressKey(address)), this.keys.widgetSession(chatbotId, sessionId)],
      [perAddress, windowMs * 1000, sessionId, ttlSeconds],
    );
    if (reply[0] === 1) return { kind: 'issued', sessionId };
    return { kind: 'limited', retryAfterSeconds: retryAfterSeconds(reply[1]) };
  }

  /** Whether this chatbot handed the session out, or has a conversation under it. */
  async known(chatbotId: string, sessionId: string): Promise<boolean> {
    const found = await plainConnection(this.redis).exists([
      this.keys.widgetSession(chatbotId, sessionId),
      this.keys.conversation(chatbotId, sessionId),
    ]);
    return found > 0;
  }
}
