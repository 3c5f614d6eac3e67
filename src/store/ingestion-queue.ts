import { randomUUID } from 'node:crypto';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { REFRESH_INTERVAL_MS, type Refresh } from '../sources/source.ts';

/**
 * A source taken off the queue. `interrupted` counts earlier claims that never finished; `token` is
 * this claim's own, so a claim whose lease lapsed and went to another process can neither renew nor
 * end the new one.
 */
export interface IngestionClaim {
  chatbotId: string;
  sourceId: string;
  interrupted: number;
  token: string;
  /** When the lease runs out unless renewed (µs). */
  until: number;
}

// Expired leases (a process died mid-ingestion, or lost its lease) go back to the head of the queue
// first, then up to `limit` queued sources are leased - none while ingestion is paused (a
// re-embedding copies chunks), and none for a limit of 0 (ZRANGE 0 -1 would be all of them). Each
// claim counts an attempt, so a source that keeps killing its worker can be failed instead of
// retried for ever.
const CLAIM = new LuaScript<{
  keys: [queue: string, leases: string, paused: string, tokens: string];
  args: [nowMicros: number, limit: number, leaseUntilMicros: number, token: string];
  reply: Array<[member: string, interrupted: number]>;
}>(`
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
for _, member in ipairs(expired) do
  redis.call('ZREM', KEYS[2], member)
  redis.call('HDEL', KEYS[4], member)
  redis.call('ZADD', KEYS[1], 0, member)
end
if redis.call('EXISTS', KEYS[3]) == 1 or tonumber(ARGV[2]) < 1 then return {} end
local members = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local out = {}
for _, member in ipairs(members) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZADD', KEYS[2], ARGV[3], member)
  redis.call('HSET', KEYS[4], member, ARGV[4])
  local attempts = redis.call('HINCRBY', KEYS[1] .. ':attempts', member, 1)
  table.insert(out, {member, attempts - 1})
end
return out
`);

// Leases one specific queued source: how many earlier claims of it never finished, or -1.
const CLAIM_ONE = new LuaScript<{
  keys: [queue: string, leases: string, paused: string, tokens: string];
  args: [member: string, leaseUntilMicros: number, token: string];
  reply: number;
}>(`
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return -1 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
return redis.call('HINCRBY', KEYS[1] .. ':attempts', ARGV[1], 1) - 1
`);

// Extends a lease only for the claim that holds it: 0 once it lapsed and a claim by any process took it
// back (to the queue, or for itself).
const RENEW = new LuaScript<{
  keys: [leases: string, tokens: string];
  args: [member: string, token: string, leaseUntilMicros: number];
  reply: 0 | 1;
}>(`
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
`);

// Ends the claim that holds the lease (0, nothing done, for one that lost it); a source asked to sync
// during the run is queued again.
const FINISH = new LuaScript<{
  keys: [queue: string, leases: string, syncAgain: string, tokens: string];
  args: [member: string, nowMicros: number, token: string];
  reply: 0 | 1;
}>(`
if redis.call('HGET', KEYS[4], ARGV[1]) ~= ARGV[3] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[1] .. ':attempts', ARGV[1])
if redis.call('SREM', KEYS[3], ARGV[1]) == 1 then redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1]) end
return 1
`);

// Moves re-syncs that are due into the queue, each once whichever process runs it: one being ingested
// right now is left to that run, which schedules its next sync when it ends. Returns how many were due.
const PROMOTE_DUE = new LuaScript<{
  keys: [due: string, queue: string, leases: string];
  args: [nowMicros: number, limit: number];
  reply: number;
}>(`
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do
  redis.call('ZREM', KEYS[1], member)
  if not redis.call('ZSCORE', KEYS[3], member) then redis.call('ZADD', KEYS[2], 'NX', ARGV[1], member) end
end
return #due
`);

// Queues a source now; one being ingested is marked to be queued again when that run ends (two runs of
// one source never overlap). Its scheduled sync stays as it is until the run ends and schedules the next.
const SYNC_NOW = new LuaScript<{
  keys: [queue: string, leases: string, syncAgain: string];
  args: [member: string, nowMicros: number];
  reply: 'queued' | 'running';
}>(`
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('SADD', KEYS[3], ARGV[1])
  return 'running'
end
redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
return 'queued'
`);

/**
 * The ingestion queue in Redis: sources wait in a sorted set and are leased by whichever process
 * claims them; a lease that expires (its process died) puts the source back, so nothing stays stuck.
 */
export class IngestionQueue {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  /** Schedules a source's next re-sync (replacing any earlier one). */
  async scheduleSync(chatbotId: string, sourceId: string, atMicros: number): Promise<void> {
    await this.redis.zAdd(this.keys.syncDue(), { score: atMicros, value: `${chatbotId}/${sourceId}` });
  }

  /**
   * Schedules a source's next sync one `refresh` interval after `nowMicros`, or none when it is off
   * (or the source is a file or text, `''`).
   */
  async scheduleByRefresh(
    chatbotId: string,
    sourceId: string,
    refresh: Refresh | '',
    nowMicros: number,
  ): Promise<void> {
    if (refresh === '' || refresh === 'off') await this.cancelSync(chatbotId, sourceId);
    else await this.scheduleSync(chatbotId, sourceId, nowMicros + REFRESH_INTERVAL_MS[refresh] * 1000);
  }

  async cancelSync(chatbotId: string, sourceId: string): Promise<void> {
    await this.redis.zRem(this.keys.syncDue(), `${chatbotId}/${sourceId}`);
  }

  /** When a source's next re-sync is due (µs), if one is scheduled. */
  async nextSync(chatbotId: string, sourceId: string): Promise<number | undefined> {
    const score = await this.redis.zScore(this.keys.syncDue(), `${chatbotId}/${sourceId}`);
    return score ?? undefined;
  }

  /** Moves up to `limit` re-syncs due by `nowMicros` into the queue; returns how many were due. */
  async promoteDue(nowMicros: number, limit: number): Promise<number> {
    return PROMOTE_DUE.run(
      this.redis,
      [this.keys.syncDue(), this.keys.ingestQueue(), this.keys.ingestLeases()],
      [nowMicros, limit],
    );
  }

  /**
   * Queues a source for a re-sync now: `running` when a process is ingesting it already, in which
   * case it is queued again as soon as that run ends.
   */
  async syncNow(chatbotId: string, sourceId: string, nowMicros: number): Promise<'queued' | 'running'> {
    return SYNC_NOW.run(
      this.redis,
      [this.keys.ingestQueue(), this.keys.ingestLeases(), this.keys.syncAgain()],
      [`${chatbotId}/${sourceId}`, nowMicros],
    );
  }

  async enqueue(chatbotId: string, sourceId: string, atMicros: number): Promise<void> {
    await this.redis.zAdd(this.keys.ingestQueue(), { score: atMicros, value: `${chatbotId}/${sourceId}` });
  }

  async claim(limit: number, nowMicros: number, leaseMs: number): Promise<IngestionClaim[]> {
    const token = randomUUID();
    const until = nowMicros + leaseMs * 1000;
    const rows = await CLAIM.run(
      this.redis,
      [this.keys.ingestQueue(), this.keys.ingestLeases(), this.keys.ingestPaused(), this.keys.ingestLeaseTokens()],
      [nowMicros, limit, until, token],
    );
    return rows.map(([member, interrupted]) => ({ ...split(member), interrupted, token, until }));
  }

  /** Leases one particular queued source; undefined when another process has it already or ingestion is paused. */
  async claimOne(
    chatbotId: string,
    sourceId: string,
    nowMicros: number,
    leaseMs: number,
  ): Promise<IngestionClaim | undefined> {
    const token = randomUUID();
    const until = nowMicros + leaseMs * 1000;
    const interrupted = await CLAIM_ONE.run(
      this.redis,
      [this.keys.ingestQueue(), this.keys.ingestLeases(), this.keys.ingestPaused(), this.keys.ingestLeaseTokens()],
      [`${chatbotId}/${sourceId}`, until, token],
    );
    return interrupted < 0 ? undefined : { chatbotId, sourceId, interrupted, token, until };
  }

  /** Extends a claim's lease to `leaseMs` from `nowMicros`; false when the claim no longer holds it. */
  async renew(claim: IngestionClaim, nowMicros: number, leaseMs: number): Promise<boolean> {
    const held = await RENEW.run(
      this.redis,
      [this.keys.ingestLeases(), this.keys.ingestLeaseTokens()],
      [`${claim.chatbotId}/${claim.sourceId}`, claim.token, nowMicros + leaseMs * 1000],
    );
    return held === 1;
  }

  /**
   * Ends a claim; a sync asked for meanwhile (see `syncNow`) is queued at `nowMicros`. False, and
   * nothing changed, when the claim had lost its lease.
   */
  async finish(claim: IngestionClaim, nowMicros: number): Promise<boolean> {
    const ended = await FINISH.run(
      this.redis,
      [this.keys.ingestQueue(), this.keys.ingestLeases(), this.keys.syncAgain(), this.keys.ingestLeaseTokens()],
      [`${claim.chatbotId}/${claim.sourceId}`, nowMicros, claim.token],
    );
    return ended === 1;
  }

  /** Sources queued or leased. */
  async size(): Promise<number> {
    // One transaction: a claim moves a source from one set to the other between two separate reads.
    const [queued, leased] = (await this.redis
      .multi()
      .zCard(this.keys.ingestQueue())
      .zCard(this.keys.ingestLeases())
      .exec()) as unknown as [number, number];
    return queued + leased;
  }

  /** Sources waiting, sources being ingested under a live lease, and whether ingestion is paused. */
  async state(nowMicros: number): Promise<{ queued: number; running: number; paused: boolean }> {
    const [queued, running, paused] = (await this.redis
      .multi()
      .zCard(this.keys.ingestQueue())
      .zCount(this.keys.ingestLeases(), `(${nowMicros}`, '+inf')
      .exists(this.keys.ingestPaused())
      .exec()) as unknown as [number, number, number];
    return { queued, running, paused: paused === 1 };
  }
}

function split(member: string): { chatbotId: string; sourceId: string } {
  const [chatbotId, sourceId] = member.split('/') as [string, string];
  return { chatbotId, sourceId };
}
