import { randomUUID } from 'node:crypto';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/**
 * A chatbot's retention sweep taken by one process. `token` is this claim's own: a claim whose lease
 * lapsed (its process died or stalled) and went to another process can neither renew nor end the new one.
 */
export interface RetentionClaim {
  chatbotId: string;
  token: string;
  /** When the lease runs out unless renewed (µs). */
  until: number;
}

// Takes up to `limit` chatbots whose sweep is due: each one's score moves to the lease's end, so no
// other process takes it while the lease holds, and a claim that lapses (its process died) leaves it
// due again for whoever polls next. The token replaces any lapsed claim's.
const CLAIM = new LuaScript<{
  keys: [due: string, claims: string];
  args: [nowMicros: number, limit: number, leaseUntilMicros: number, token: string];
  reply: string[];
}>(`
if tonumber(ARGV[2]) < 1 then return {} end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[3], member)
  redis.call('HSET', KEYS[2], member, ARGV[4])
end
return due
`);

// Extends the lease only for the claim that holds it.
const RENEW = new LuaScript<{
  keys: [due: string, claims: string];
  args: [member: string, token: string, leaseUntilMicros: number];
  reply: 0 | 1;
}>(`
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
`);

// Ends the claim that holds the lease: the next sweep is due at `next`, or never ('': the chatbot is
// gone). 0, nothing done, for a claim that lost its lease.
const FINISH = new LuaScript<{
  keys: [due: string, claims: string];
  args: [member: string, token: string, nextMicros: string];
  reply: 0 | 1;
}>(`
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
`);

/**
 * When each chatbot's retention sweep is due, and which process sweeps it now: one sorted set by due
 * time, claimed with a lease (the source re-sync schedule's pattern), so that across any number of
 * gateways a due chatbot is swept by one of them, and by another once a dead one's lease lapses.
 */
export class RetentionSchedule {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  /**
   * Makes sure the chatbot's sweep is scheduled, at `atMicros` when it is not yet; one scheduled or
   * under way already keeps its time (it reads the settings afresh when it runs).
   */
  async ensure(chatbotId: string, atMicros: number): Promise<void> {
    await this.redis.zAdd(this.keys.retentionDue(), { score: atMicros, value: chatbotId }, { condition: 'NX' });
  }

  /** When the chatbot's next sweep is due, or its claim lapses, if it is scheduled (µs). */
  async dueAt(chatbotId: string): Promise<number | undefined> {
    return (await this.redis.zScore(this.keys.retentionDue(), chatbotId)) ?? undefined;
  }

  /** Takes up to `limit` chatbots due by `nowMicros`, each for `leaseMs`. */
  async claim(limit: number, nowMicros: number, leaseMs: number): Promise<RetentionClaim[]> {
    const token = randomUUID();
    const until = nowMicros + leaseMs * 1000;
    const ids = await CLAIM.run(
      this.redis,
      [this.keys.retentionDue(), this.keys.retentionClaims()],
      [nowMicros, limit, until, token],
    );
    return ids.map((chatbotId) => ({ chatbotId, token, until }));
  }

  /** Extends the claim's lease to `leaseMs` from `nowMicros`; false once the claim has lost it. */
  async renew(claim: RetentionClaim, nowMicros: number, leaseMs: number): Promise<boolean> {
    const until = nowMicros + leaseMs * 1000;
    const held = await RENEW.run(
      this.redis,
      [this.keys.retentionDue(), this.keys.retentionClaims()],
      [claim.chatbotId, claim.token, until],
    );
    if (held === 1) claim.until = until;
    return held === 1;
  }

  /**
   * Ends the claim, the next sweep due at `nextMicros` (undefined: never, the chatbot is gone). False,
   * and nothing changed, when the claim had lost its lease.
   */
  async finish(claim: RetentionClaim, nextMicros: number | undefined): Promise<boolean> {
    const ended = await FINISH.run(
      this.redis,
      [this.keys.retentionDue(), this.keys.retentionClaims()],
      [claim.chatbotId, claim.token, nextMicros === undefined ? '' : String(nextMicros)],
    );
    return ended === 1;
  }
}
