import type { StoredPendingEntry } from '../events/pending-event.ts';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/** A lead as stored: SPEC's payload fields plus where and when it was left. */
export interface Lead {
  lead_id: string;
  chatbot_id: string;
  session_id: string;
  name: string;
  email: string;
  phone: string;
  custom_data: Record<string, string>;
  created_at: string;
}

/** Leads per chatbot, newest first. */
export class LeadStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  /**
   * Writes the record, lists it and records the pending entry of its `lead.captured` event in one
   * transaction, so a lead is never half-written and its event never lost.
   */
  async add(lead: Lead, atMicros: number, pending: StoredPendingEntry & { dueAt: number }): Promise<void> {
    await this.redis
      .multi()
      .set(this.keys.lead(lead.chatbot_id, lead.lead_id), JSON.stringify(lead))
      .zAdd(this.keys.leadsOf(lead.chatbot_id), { score: atMicros, value: lead.lead_id })
      .hSet(this.keys.pendingEvents(lead.chatbot_id), pending.id, pending.json)
      .zAdd(this.keys.pendingEventsDue(lead.chatbot_id), { score: pending.dueAt, value: pending.id })
      .exec();
  }

  async list(chatbotId: string): Promise<Lead[]> {
    const ids = await this.redis.zRange(this.keys.leadsOf(chatbotId), 0, -1, { REV: true });
    if (ids.length === 0) return [];
    const rows = await this.redis.mGet(ids.map((id) => this.keys.lead(chatbotId, id)));
    return rows.filter((row): row is string => row !== null).map((row) => JSON.parse(row) as Lead);
  }
}
