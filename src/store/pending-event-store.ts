import type { Clock } from '../clock.ts';
import type { StoredPendingEntry } from '../webhooks/pending-event.ts';
import { LuaScript } from '../redis/lua-script.ts';
import { readPastCache, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/**
 * Lua for the scripts that record or take pending entries (a chatbot's entries hash and their due
 * times): `record_entry` writes one, `claim_overdue` takes up to `limit` whose deliveries are overdue
 * and makes them due again later, so that takers side by side do not take one twice in a grace period.
 */
export const PENDING_ENTRIES = `
local function record_entry(entries, due, id, entry, due_at)
  redis.call('HSET', entries, id, entry)
  redis.call('ZADD', due, due_at, id)
end
local function claim_overdue(entries, due, now, limit, due_again)
  local out = {}
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, tonumber(limit))) do
    local entry = redis.call('HGET', entries, id)
    if entry then
      redis.call('ZADD', due, due_again, id)
      table.insert(out, {id, entry})
    else
      redis.call('ZREM', due, id)
    end
  end
  return out
end`;

const CLAIM_OVERDUE = new LuaScript<{
  keys: [entries: string, due: string];
  args: [nowMicros: number, limit: number, dueAgainMicros: number];
  reply: Array<[id: string, entry: string]>;
}>(`${PENDING_ENTRIES}
return claim_overdue(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
`);

// The entries of one conversation recorded before ARGV[1] (earlier due times) and still pending,
// oldest first: among the ARGV[3] recorded last before it, those naming the conversation (ARGV[2], as
// the scripts write it into an entry: `"conversation_id":<JSON string>`). None once ARGV[1] is gone.
const PENDING_BEFORE = new LuaScript<{
  keys: [entries: string, due: string];
  args: [entryId: string, conversationField: string, limit: number];
  reply: Array<[id: string, entry: string]>;
}>(`
local due = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not due then return {} end
local ids = redis.call('ZREVRANGEBYSCORE', KEYS[2], '(' .. due, '-inf', 'LIMIT', 0, tonumber(ARGV[3]))
if #ids == 0 then return {} end
local entries = redis.call('HMGET', KEYS[1], unpack(ids))
local out = {}
for i, id in ipairs(ids) do
  local entry = entries[i]
  if entry and string.find(entry, ARGV[2], 1, true) then table.insert(out, 1, {id, entry}) end
end
return out
`);

// Forgets a chatbot only if no event of it was recorded since the cutoff: an event recorded meanwhile
// registered the chatbot again (with a newer score) before it was written.
const FORGET_IF_QUIET = new LuaScript<{
  keys: [chatbotsWithPendingEvents: string];
  args: [chatbotId: string, cutoffMicros: number];
  reply: 0;
}>(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`);

/**
 * Pending events: entries written together with what they report (by the conversation, escalation
 * and lead scripts), acknowledged once their deliveries are in the outbox. Entries still there after
 * the grace period are taken over by any process (see PendingEventSweeper). Before an entry is
 * written its chatbot is registered in a global index, so that a sweeper can find it.
 */
export class PendingEventStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  /** How long an entry may stay pending before another process writes its deliveries. */
  readonly graceMs: number;
  /** When this process last registered each chatbot (µs), oldest first. */
  private readonly registered = new Map<string, number>();

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>, graceMs: number) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.graceMs = graceMs;
  }

  /**
   * Marks the chatbot as having events in flight; call it before writing an entry. A registration is
   * good for a quarter of the grace period, so a busy chatbot costs one write per chatbot and process
   * that often, not one per event: the sweeper forgets a chatbot only when its registration is a whole
   * grace period old, and then this process registers it again before its next entry.
   */
  async register(chatbotId: string): Promise<void> {
    const now = this.clock.nowMicros();
    const fresh = now - (this.graceMs * 1000) / 4;
    if ((this.registered.get(chatbotId) ?? -Infinity) > fresh) return;
    await this.redis.zAdd(this.keys.pendingEventBots(), { score: now, value: chatbotId });
    this.registered.delete(chatbotId);
    this.registered.set(chatbotId, now);
    // Oldest first: registrations that are no longer fresh are forgotten as new ones come.
    for (const [id, at] of this.registered) {
      if (at > fresh) break;
      this.registered.delete(id);
    }
  }

  /** A chatbot's entries hash and their due times. */
  private entryKeys(chatbotId: string): [string, string] {
    return [this.keys.pendingEvents(chatbotId), this.keys.pendingEventsDue(chatbotId)];
  }

  /** When an entry written now becomes overdue, in epoch microseconds. */
  dueAt(nowMicros: number): number {
    return nowMicros + this.graceMs * 1000;
  }

  /** Removes entries whose deliveries are written. */
  async ack(chatbotId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const [entries, due] = this.entryKeys(chatbotId);
    await this.redis.multi().hDel(entries, ids).zRem(due, ids).exec();
  }

  /** Up to `limit` overdue entries of the chatbot, taken for one more grace period. */
  async claimOverdue(chatbotId: string, limit: number): Promise<StoredPendingEntry[]> {
    const now = this.clock.nowMicros();
    const rows = await CLAIM_OVERDUE.run(this.redis, this.entryKeys(chatbotId), [now, limit, this.dueAt(now)]);
    return rows.map(([id, json]) => ({ id, json }));
  }

  /**
   * The entries of the conversation recorded before entry `id` (by their due times, which are the
   * recording processes' clocks) that are still pending, oldest first; up to `limit` looked at.
   */
  async pendingBefore(
    chatbotId: string,
    id: string,
    conversationId: string,
    limit: number,
  ): Promise<StoredPendingEntry[]> {
    const field = `"conversation_id":${JSON.stringify(conversationId)}`;
    const rows = await PENDING_BEFORE.run(this.redis, this.entryKeys(chatbotId), [id, field, limit]);
    return rows.map(([entryId, json]) => ({ id: entryId, json }));
  }

  /** Chatbots registered longer than a grace period ago (their entries may be overdue). */
  async quietChatbots(limit: number): Promise<string[]> {
    const cutoff = this.clock.nowMicros() - this.graceMs * 1000;
    return this.redis.zRangeByScore(this.keys.pendingEventBots(), '-inf', cutoff, {
      LIMIT: { offset: 0, count: limit },
    });
  }

  /** Whether the chatbot has any entry left. */
  async hasEntries(chatbotId: string): Promise<boolean> {
    const count = await readPastCache<number>(this.redis, (multi) =>
      multi.zCard(this.keys.pendingEventsDue(chatbotId)),
    );
    return count > 0;
  }

  /** Drops the chatbot from the index unless an event of it was recorded within the grace period. */
  async forgetIfQuiet(chatbotId: string): Promise<void> {
    const cutoff = this.clock.nowMicros() - this.graceMs * 1000;
    await FORGET_IF_QUIET.run(this.redis, [this.keys.pendingEventBots()], [chatbotId, cutoff]);
  }
}
