import type { Rating } from '../contract/conversation.ts';
import { LuaScript } from '../redis/lua-script.ts';
import { plainConnection, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { formatTimestamp, parseTimestamp } from '../timestamp.ts';
import { APPEND_MESSAGE, CREATE_CONVERSATION } from './conversation-scripts.ts';
import type { ConversationStore, ConversationTranscript, RawMessage } from './conversation-store.ts';

/** A conversation as an export carries it: what its transcript shows, and when it began and last moved. */
export interface ConversationRecord extends ConversationTranscript {
  created_at: string;
  last_activity_at: string;
}

// Writes a conversation brought from another install, as it was, in one step: the record and its
// id lookup (the one definition of a new conversation), its messages (the one definition of an
// appended message), escalation, holder, failure reasons, ratings (counted in the chatbot's monthly
// rating counts) and its place in the index by its last activity. No lease, no events: nothing
// happens in it. 0, nothing written, when the chatbot has a conversation under that session.
const RESTORE = new LuaScript<{
  keys: [
    meta: string,
    messages: string,
    failures: string,
    feedback: string,
    conversationIndex: string,
    idIndex: string,
    ratings: string,
  ];
  args: [
    id: string,
    chatbot: string,
    session: string,
    source: string,
    createdAtMicros: string,
    escalatedAtMicros: string,
    takenOverBy: string,
    lastActivityMicros: string,
    /** {user message's created_at: reason} */
    failuresJson: string,
    /** [[reply's created_at, rating, its month]] */
    feedbackJson: string,
    /** Each message's stored JSON, then its time (µs). */
    ...messages: string[],
  ];
  reply: 0 | 1;
}>(`${CREATE_CONVERSATION}${APPEND_MESSAGE}
local meta, session, last = KEYS[1], ARGV[3], ARGV[8]
if redis.call('EXISTS', meta) == 1 then return 0 end
create_conversation(meta, KEYS[6], ARGV[1], ARGV[2], session, ARGV[4], ARGV[5])
for i = 11, #ARGV, 2 do append_message(meta, KEYS[2], KEYS[5], ARGV[i], ARGV[i + 1], session) end
if ARGV[6] ~= '' then redis.call('HSET', meta, 'escalated_at', ARGV[6]) end
if ARGV[7] ~= '' then redis.call('HSET', meta, 'taken_over_by', ARGV[7], 'taken_over_at', last, 'human_served_at', last) end
redis.call('HSET', meta, 'last_message_at', last)
redis.call('ZADD', KEYS[5], last, session)
for at, reason in pairs(cjson.decode(ARGV[9])) do redis.call('HSET', KEYS[3], at, reason) end
for _, rated in ipairs(cjson.decode(ARGV[10])) do
  redis.call('HSET', KEYS[4], rated[1], rated[2])
  redis.call('HINCRBY', KEYS[7], rated[3] .. ':' .. rated[2], 1)
end
return 1
`);

/**
 * Conversations read whole for an export, and written back as they were by an import (another
 * install's, with their ids and times).
 */
export class TransferStore {
  private readonly redis: RedisClient;
  /** Where a conversation's keys are read: the turn's scripts write them there (plainConnection). */
  private readonly records: RedisClient;
  private readonly keys: RedisKeys;
  private readonly conversations: ConversationStore;

  constructor(redis: RedisClient, keys: RedisKeys, conversations: ConversationStore) {
    this.redis = redis;
    this.records = plainConnection(redis);
    this.keys = keys;
    this.conversations = conversations;
  }

  /**
   * The chatbot's sessions, oldest activity first, as of now: a list read at once, so that a
   * conversation moving in the index meanwhile (its visitor wrote) is neither read twice nor skipped.
   */
  sessions(chatbotId: string): Promise<string[]> {
    return this.records.zRange(this.keys.conversationsOf(chatbotId), 0, -1);
  }

  /** One conversation as an export carries it; undefined when it is gone (deleted meanwhile). */
  async conversation(chatbotId: string, sessionId: string): Promise<ConversationRecord | undefined> {
    const [createdAt, lastActivity] = await Promise.all([
      this.records.hGet(this.keys.conversation(chatbotId, sessionId), 'created_at'),
      this.records.zScore(this.keys.conversationsOf(chatbotId), sessionId),
    ]);
    if (!createdAt) return undefined;
    const transcript = await this.conversations.transcript(chatbotId, sessionId);
    return {
      ...transcript,
      created_at: formatTimestamp(Number(createdAt)),
      last_activity_at: formatTimestamp(lastActivity ?? Number(createdAt)),
    };
  }

  /**
   * Writes a conversation of another install into the chatbot as it was; false, nothing written, when
   * the chatbot has a conversation under its session already. Times must be timestamps as exports
   * write them (checked before).
   */
  async restore(chatbotId: string, record: ConversationRecord): Promise<boolean> {
    const micros = (text: string) => String(parseTimestamp(text));
    const failures: Record<string, string> = {};
    const ratings: Array<[string, Rating, string]> = [];
    const messages: string[] = [];
    for (const message of record.messages) {
      const raw: RawMessage = { role: message.role, content: message.content, at: parseTimestamp(message.created_at)! };
      if (message.citations?.length) raw.citations = message.citations;
      if (message.agent) raw.agent = message.agent;
      messages.push(JSON.stringify(raw), String(raw.at));
      if (message.failure !== undefined && message.role === 'user') failures[message.created_at] = message.failure;
      if (message.feedback && message.role === 'assistant') {
        ratings.push([message.created_at, message.feedback, message.created_at.slice(0, 7)]);
      }
    }
    const k = this.keys;
    const session = record.session_id;
    const written = await RESTORE.run(
      this.redis,
      [
        k.conversation(chatbotId, session),
        k.conversationMessages(chatbotId, session),
        k.conversationFailures(chatbotId, session),
        k.conversationFeedback(chatbotId, session),
        k.conversationsOf(chatbotId),
        k.conversationIds(chatbotId),
        k.ratings(chatbotId),
      ],
      [
        record.conversation_id,
        chatbotId,
        session,
        record.source,
        micros(record.created_at),
        record.escalated_at === null ? '' : micros(record.escalated_at),
        record.taken_over_by ?? '',
        micros(record.last_activity_at),
        JSON.stringify(failures),
        JSON.stringify(ratings),
        ...messages,
      ],
    );
    return written === 1;
  }
}
