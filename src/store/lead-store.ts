import type { Lead } from '../contract/lead.ts';
import type { StoredPendingEntry } from '../webhooks/pending-event.ts';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

// A lead goes to the dashboard as it is stored.
export type { Lead };

// 0 when the session has a lead.
const CREATE = new LuaScript<{
  keys: [sessionLead: string, lead: string, chatbotLeads: string, pendingEvents: string, pendingEventsDue: string];
  args: [
    leadId: string,
    leadJson: string,
    atMicros: number,
    pendingId: string,
    pendingJson: string,
    pendingDueMicros: number,
  ];
  reply: 0 | 1;
}>(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX') == false then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[4], ARGV[5])
redis.call('ZADD', KEYS[5], ARGV[6], ARGV[4])
return 1
`);

// 0 when the session's lead is another.
const UPDATE = new LuaScript<{
  keys: [sessionLead: string, lead: string];
  args: [leadId: string, leadJson: string];
  reply: 0 | 1;
}>(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
`);

// A lead brought from another install: written unless the chatbot has it or its session has a lead.
// No event: it was captured there. 0 when nothing was written.
const RESTORE = new LuaScript<{
  keys: [sessionLead: string, lead: string, chatbotLeads: string];
  args: [leadId: string, leadJson: string, atMicros: number];
  reply: 0 | 1;
}>(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX') == false then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return 1
`);

/** Leads per chatbot, newest first; one per conversation. */
export class LeadStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  /**
   * Saves a conversation's lead: the first one of a session is written, listed and the pending entry
   * of its `lead.captured` event recorded in one script, so a lead is never half-written and its
   * event never lost; a later form of the same session updates that lead (same id, same place in the
   * list, no second event). `lead` carries a fresh id, used only when the session has no lead yet.
   */
  async save(
    lead: Lead,
    atMicros: number,
    pending: StoredPendingEntry & { dueAt: number },
  ): Promise<{ lead: Lead; created: boolean }> {
    const { chatbot_id: chatbotId, session_id: sessionId } = lead;
    const ofSession = this.keys.leadOfSession(chatbotId, sessionId);
    // Two forms of one session at once: one creates, the other finds it and updates (or, when the
    // session's lead changed under it, reads again).
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const existingId = await this.redis.get(ofSession);
      if (existingId === null) {
        const created = await CREATE.run(
          this.redis,
          [
            ofSession,
            this.keys.lead(chatbotId, lead.lead_id),
            this.keys.leadsOf(chatbotId),
            this.keys.pendingEvents(chatbotId),
            this.keys.pendingEventsDue(chatbotId),
          ],
          [lead.lead_id, JSON.stringify(lead), atMicros, pending.id, pending.json, pending.dueAt],
        );
        if (created === 1) return { lead, created: true };
        continue;
      }
      const record = await this.redis.get(this.keys.lead(chatbotId, existingId));
      if (record === null) continue;
      const previous = JSON.parse(record) as Lead;
      const updated: Lead = { ...lead, lead_id: previous.lead_id, created_at: previous.created_at };
      const done = await UPDATE.run(
        this.redis,
        [ofSession, this.keys.lead(chatbotId, existingId)],
        [existingId, JSON.stringify(updated)],
      );
      if (done === 1) return { lead: updated, created: false };
    }
    throw new Error(`the lead of session ${sessionId} kept changing`);
  }

  /**
   * Writes a lead brought from another install (`import`) as it was, captured at `atMicros`, without
   * its `lead.captured` event; false when the chatbot has a lead with its id, or its session a lead.
   */
  async restore(lead: Lead, atMicros: number): Promise<boolean> {
    const { chatbot_id: chatbotId, session_id: sessionId } = lead;
    const written = await RESTORE.run(
      this.redis,
      [
        this.keys.leadOfSession(chatbotId, sessionId),
        this.keys.lead(chatbotId, lead.lead_id),
        this.keys.leadsOf(chatbotId),
      ],
      [lead.lead_id, JSON.stringify(lead), atMicros],
    );
    return written === 1;
  }

  /** The leads the given sessions of one chatbot left, by session id (sessions without one are absent). */
  async ofSessions(chatbotId: string, sessionIds: readonly string[]): Promise<Map<string, Lead>> {
    const found = new Map<string, Lead>();
    if (sessionIds.length === 0) return found;
    const leadIds = await this.redis.mGet(sessionIds.map((id) => this.keys.leadOfSession(chatbotId, id)));
    const present = leadIds.flatMap((leadId, i) => (leadId === null ? [] : [{ leadId, sessionId: sessionIds[i]! }]));
    if (present.length === 0) return found;
    const rows = await this.redis.mGet(present.map(({ leadId }) => this.keys.lead(chatbotId, leadId)));
    rows.forEach((row, i) => {
      if (row !== null) found.set(present[i]!.sessionId, JSON.parse(row) as Lead);
    });
    return found;
  }

  async list(chatbotId: string): Promise<Lead[]> {
    const ids = await this.redis.zRange(this.keys.leadsOf(chatbotId), 0, -1, { REV: true });
    if (ids.length === 0) return [];
    const rows = await this.redis.mGet(ids.map((id) => this.keys.lead(chatbotId, id)));
    return rows.filter((row): row is string => row !== null).map((row) => JSON.parse(row) as Lead);
  }
}
