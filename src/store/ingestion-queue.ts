import { LuaScript } from './lua-script.ts';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/** A source taken off the queue. `interrupted` counts earlier claims that never finished. */
export interface IngestionClaim {
  chatbotId: string;
  sourceId: string;
  interrupted: number;
}

// KEYS: queue, leases. ARGV: now µs, limit, lease until µs.
// Expired leases (a process died mid-ingestion) go back to the head of the queue first, then up to
// `limit` queued sources are leased. Each claim counts an attempt, so a source that keeps killing its
// worker can be failed instead of retried for ever.
const CLAIM = new LuaScript(`
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
for _, member in ipairs(expired) do
  redis.call('ZREM', KEYS[2], member)
  redis.call('ZADD', KEYS[1], 0, member)
end
local members = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local out = {}
for _, member in ipairs(members) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZADD', KEYS[2], ARGV[3], member)
  local attempts = redis.call('HINCRBY', KEYS[1] .. ':attempts', member, 1)
  table.insert(out, {member, attempts - 1})
end
return out
`);

// KEYS: queue, leases. ARGV: member, lease until µs. Leases one specific queued source.
const CLAIM_ONE = new LuaScript(`
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return -1 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return redis.call('HINCRBY', KEYS[1] .. ':attempts', ARGV[1], 1) - 1
`);

// KEYS: queue, leases. ARGV: member.
const FINISH = new LuaScript(`
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1] .. ':attempts', ARGV[1])
return 1
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

  async enqueue(chatbotId: string, sourceId: string, atMicros: number): Promise<void> {
    await this.redis.zAdd(this.keys.ingestQueue(), { score: atMicros, value: `${chatbotId}/${sourceId}` });
  }

  async claim(limit: number, nowMicros: number, leaseMs: number): Promise<IngestionClaim[]> {
    const rows = (await CLAIM.run(
      this.redis,
      [this.keys.ingestQueue(), this.keys.ingestLeases()],
      [nowMicros, limit, nowMicros + leaseMs * 1000],
    )) as Array<[string, number]>;
    return rows.map(([member, interrupted]) => ({ ...split(member), interrupted }));
  }

  /** Leases one particular queued source; undefined when another process has it already. */
  async claimOne(
    chatbotId: string,
    sourceId: string,
    nowMicros: number,
    leaseMs: number,
  ): Promise<IngestionClaim | undefined> {
    const interrupted = (await CLAIM_ONE.run(
      this.redis,
      [this.keys.ingestQueue(), this.keys.ingestLeases()],
      [`${chatbotId}/${sourceId}`, nowMicros + leaseMs * 1000],
    )) as number;
    return interrupted < 0 ? undefined : { chatbotId, sourceId, interrupted };
  }

  async renew(claim: IngestionClaim, nowMicros: number, leaseMs: number): Promise<void> {
    await this.redis.zAdd(
      this.keys.ingestLeases(),
      { score: nowMicros + leaseMs * 1000, value: `${claim.chatbotId}/${claim.sourceId}` },
      { condition: 'XX' },
    );
  }

  async finish(claim: IngestionClaim): Promise<void> {
    await FINISH.run(
      this.redis,
      [this.keys.ingestQueue(), this.keys.ingestLeases()],
      [`${claim.chatbotId}/${claim.sourceId}`],
    );
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
}

function split(member: string): { chatbotId: string; sourceId: string } {
  const [chatbotId, sourceId] = member.split('/') as [string, string];
  return { chatbotId, sourceId };
}
