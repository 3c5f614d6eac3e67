import { randomUUID } from 'node:crypto';
import { RateLimitError } from '../errors.ts';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { SLIDING_WINDOW } from './sliding-window.ts';

/** How many reply suggestions one agent may ask for, and how long one may hold its turn. */
export interface SuggestionLimits {
  /** Suggestions per `windowMs` per agent. */
  limit: number;
  windowMs: number;
  /** How long an unfinished suggestion blocks the next (its gateway died: the hold lapses). */
  holdMs: number;
}

// 'busy' while the agent's last suggestion is being written; otherwise the sliding window, where a
// refused request is not counted; an admitted one takes the hold with its token.
const ADMIT = new LuaScript<{
  keys: [hold: string, window: string];
  args: [token: string, holdMs: number, limit: number, windowMicros: number];
  reply: 'busy' | 'limited' | 'ok';
}>(`${SLIDING_WINDOW}
if redis.call('EXISTS', KEYS[1]) == 1 then return 'busy' end
if admit(KEYS[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[1]) > 0 then return 'limited' end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 'ok'
`);

// Only the suggestion that took the hold ends it (a lapsed one may have been taken by the next).
const RELEASE = new LuaScript<{ keys: [hold: string]; args: [token: string]; reply: number }>(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/**
 * Reply suggestions per agent: one at a time and `limit` per window, counted in Redis with the
 * server's clock, so every gateway an agent's sockets reach agrees. Each is a billed LLM call.
 */
export class SuggestionGate {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly limits: SuggestionLimits;

  constructor(redis: RedisClient, keys: RedisKeys, limits: SuggestionLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer`);
    }
    this.redis = redis;
    this.keys = keys;
    this.limits = limits;
  }

  /**
   * Admits one suggestion for the agent (a RateLimitError when one is being written or the window is
   * full); the answer ends it, and must be called once it is written or failed.
   */
  async admit(agent: { id: string; user_id: string }): Promise<() => Promise<void>> {
    const hold = this.keys.suggestionBusy(agent.user_id, agent.id);
    const token = randomUUID();
    const { limit, windowMs, holdMs } = this.limits;
    const outcome = await ADMIT.run(
      this.redis,
      [hold, this.keys.suggestionWindow(agent.user_id, agent.id)],
      [token, holdMs, limit, windowMs * 1000],
    );
    if (outcome === 'busy') throw new RateLimitError('A suggestion is already being written for you; wait for it.');
    if (outcome === 'limited') {
      throw new RateLimitError(`Suggestion rate limit exceeded. Max ${limit} per ${windowText(windowMs)}.`);
    }
    return async () => void (await RELEASE.run(this.redis, [hold], [token]));
  }
}

/** `minute` for 60 s, else the window in seconds (tests shorten it). */
function windowText(windowMs: number): string {
  return windowMs === 60_000 ? 'minute' : `${windowMs / 1000} s`;
}
