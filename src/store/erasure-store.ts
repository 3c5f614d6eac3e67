import type { Lead } from '../contract/lead.ts';
import { plainConnection, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import {
  DELETE_CONVERSATION,
  DELETE_LEAD,
  UNLINK_SESSIONS,
  type ConversationDeletion,
  type ConversationKeys,
} from './erasure-scripts.ts';

/** What deleting one conversation did. */
export type ConversationDeleted =
  | { kind: 'missing' }
  /** Kept: it was active after the cutoff, or a turn holds it now. */
  | { kind: 'active' }
  | { kind: 'deleted'; messages: number; existed: boolean };

/**
 * Deleting conversations and leads with everything keyed by them, for retention (only what is older
 * than a cutoff, re-checked atomically) and for a visitor's erasure request (unconditionally). Each
 * deletion is one short script over one conversation or lead, so a sweep of thousands never holds
 * Redis for long.
 */
export class ErasureStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  /**
   * Up to `limit` sessions of the chatbot whose conversation's last activity is before `cutoffMicros`,
   * oldest first, from the `offset`th.
   */
  inactiveSessions(chatbotId: string, cutoffMicros: number, limit: number, offset = 0): Promise<string[]> {
    return plainConnection(this.redis).zRangeByScore(this.keys.conversationsOf(chatbotId), '-inf', `(${cutoffMicros}`, {
      LIMIT: { offset, count: limit },
    });
  }

  /** Up to `limit` leads of the chatbot captured before `cutoffMicros`, oldest first, from the `offset`th. */
  leadsBefore(chatbotId: string, cutoffMicros: number, limit: number, offset = 0): Promise<string[]> {
    return this.redis.zRangeByScore(this.keys.leadsOf(chatbotId), '-inf', `(${cutoffMicros}`, {
      LIMIT: { offset, count: limit },
    });
  }

  /**
   * Deletes the conversation with everything keyed by it (see DELETE_CONVERSATION); with
   * `cutoffMicros`, only if it has not been active since and no turn holds it.
   */
  async deleteConversation(chatbotId: string, sessionId: string, cutoffMicros?: number): Promise<ConversationDeleted> {
    const reply: ConversationDeletion = await DELETE_CONVERSATION.run(
      this.redis,
      this.conversationKeys(chatbotId, sessionId),
      [sessionId, cutoffMicros === undefined ? '' : String(cutoffMicros)],
    );
    if (reply[0] === 'deleted') return { kind: 'deleted', messages: reply[1], existed: reply[2] === 1 };
    return { kind: reply[0] };
  }

  /** The id of the lead the session left, if it left one. */
  async leadOfSession(chatbotId: string, sessionId: string): Promise<string | undefined> {
    return (await this.redis.get(this.keys.leadOfSession(chatbotId, sessionId))) ?? undefined;
  }

  /** Deletes a lead (with `cutoffMicros`: only one captured before it); true when one was deleted. */
  async deleteLead(chatbotId: string, leadId: string, cutoffMicros?: number): Promise<boolean> {
    const record = await this.redis.get(this.keys.lead(chatbotId, leadId));
    // The session's pointer is cleared only where it names this lead (checked in the script).
    const sessionId = record ? (JSON.parse(record) as Lead).session_id : '';
    const deleted = await DELETE_LEAD.run(
      this.redis,
      [this.keys.lead(chatbotId, leadId), this.keys.leadsOf(chatbotId), this.keys.leadOfSession(chatbotId, sessionId)],
      [leadId, cutoffMicros === undefined ? '' : String(cutoffMicros)],
    );
    return deleted === 1;
  }

  /** The unanswered inbox's groups that named one of these (deleted) sessions name none; how many changed. */
  async unlinkUnanswered(chatbotId: string, sessionIds: readonly string[]): Promise<number> {
    if (sessionIds.length === 0) return 0;
    return UNLINK_SESSIONS.run(this.redis, [this.keys.unansweredGroups(chatbotId)], [...sessionIds]);
  }

  private conversationKeys(chatbotId: string, sessionId: string): ConversationKeys {
    const k = this.keys;
    return [
      k.conversation(chatbotId, sessionId),
      k.conversationLease(chatbotId, sessionId),
      k.conversationMessages(chatbotId, sessionId),
      k.conversationFailures(chatbotId, sessionId),
      k.conversationFeedback(chatbotId, sessionId),
      k.conversationUnanswered(chatbotId, sessionId),
      k.conversationDiscarded(chatbotId, sessionId),
      k.conversationRateWindow(chatbotId, sessionId),
      k.conversationsOf(chatbotId),
      k.conversationIds(chatbotId),
      k.widgetSession(chatbotId, sessionId),
      k.previewSessions(chatbotId),
      k.previewSession(chatbotId),
      k.whatsappCloudWindow(chatbotId, sessionId),
    ];
  }
}
