import { randomUUID } from 'node:crypto';
import type {
  Conversation as ConversationView,
  ConversationActivity,
  Message as StoredMessage,
  MessageRole,
} from '../contract/conversation.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { StoredPendingEntry } from '../webhooks/pending-event.ts';
import { formatTimestamp } from '../timestamp.ts';
import {
  APPEND_AGENT,
  APPEND_OWNER,
  BEGIN_TURN,
  END_TURN,
  ESCALATE,
  RELEASE,
  RENEW_LEASE,
  TAKE_OVER,
  type AppendKeys,
  type HoldReply,
} from './conversation-scripts.ts';
import type { PendingEventStore } from './pending-event-store.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/** A message of a transcript, the conversation record and its activity, as the contract has them. */
export type {
  MessageRole,
  Message as StoredMessage,
  Conversation as ConversationView,
  ConversationActivity,
} from '../contract/conversation.ts';

/** A conversation with its transcript (`conversation show`). */
export interface ConversationTranscript extends ConversationView {
  messages: StoredMessage[];
}

/** What a turn found when it began. */
export type TurnStart =
  | { kind: 'leased' }
  | { kind: 'rate-limited' }
  | {
      kind: 'started';
      conversationId: string;
      isNew: boolean;
      source: string;
      takenOverBy: string | null;
      escalated: boolean;
      /** When the user message was stored. */
      createdAt: string;
      /** The lease token; the turn's later writes are fenced by it. */
      token: string;
      /** Up to `historySize` messages before the new one, oldest first. */
      history: StoredMessage[];
      /** The pending entry of this message's events, as the script recorded it. */
      entry: StoredPendingEntry;
      /** Overdue pending entries of the chatbot, now this turn's to write deliveries for. */
      overdue: StoredPendingEntry[];
    };

/** What became of a reply at the end of a turn. */
export type ReplyFate = 'stored' | 'discarded' | 'lost-lease';

/** The end of a turn: what became of the reply, when it was stored, and the fallback streak. */
export interface TurnEnd {
  outcome: ReplyFate;
  createdAt: string;
  /** Consecutive fallback replies, this one included (0 when the reply was not the fallback). */
  fallbackStreak: number;
}

/** Limits a turn is checked against. */
export interface TurnLimits {
  rateLimit: number;
  rateWindowMs: number;
  leaseMs: number;
  historySize: number;
}

/** Overdue pending entries one turn takes over at most (the sweeper takes the rest). */
const OVERDUE_PER_TURN = 5;

interface RawMessage {
  role: MessageRole;
  content: string;
  at: number;
}

/** The outcome of an escalation request. */
export type EscalationResult =
  | {
      first: true;
      escalatedAt: string;
      messageCount: number;
      conversation: ConversationView;
      /** The pending entry of the `conversation.escalated` event, as the script recorded it. */
      entry: StoredPendingEntry;
    }
  | { first: false; escalatedAt: string; conversation: ConversationView };

/**
 * Conversations in Redis: turns that begin and end under a fenced per-conversation lease, takeover,
 * release and escalation, and transcripts. Redis is the record; conversation actors cache it.
 */
export class ConversationStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Clock;
  /** Distinguishes this process's lease tokens from every other process's. */
  private readonly processId = randomUUID();
  /** Where the pending entries of the events these scripts record are kept (and when they fall due). */
  private readonly pending: PendingEventStore;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Clock, pending: PendingEventStore) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.pending = pending;
  }

  /**
   * Begins a turn for a user message: takes the conversation's lease, applies the conversation rate
   * limit, creates the conversation when new, and appends the message. The caller has no turn of
   * this conversation in flight: a lease this process still holds is one an outage left behind, and
   * is taken over (see BEGIN_TURN).
   */
  async beginTurn(
    chatbotId: string,
    sessionId: string,
    input: { content: string; source: string },
    limits: TurnLimits,
  ): Promise<TurnStart> {
    const now = this.clock.nowMicros();
    const message: RawMessage = { role: 'user', content: input.content, at: now };
    const entryId = randomUUID();
    const reply = await BEGIN_TURN.run(
      this.redis,
      [
        this.keys.conversation(chatbotId, sessionId),
        this.keys.conversationLease(chatbotId, sessionId),
        this.keys.conversationMessages(chatbotId, sessionId),
        this.keys.conversationRateWindow(chatbotId, sessionId),
        this.keys.conversationsOf(chatbotId),
        this.keys.conversationIds(chatbotId),
        this.keys.pendingEvents(chatbotId),
        this.keys.pendingEventsDue(chatbotId),
      ],
      [
        sessionId,
        randomUUID(),
        input.source,
        chatbotId,
        now,
        JSON.stringify(message),
        limits.rateLimit,
        limits.rateWindowMs * 1000,
        limits.leaseMs,
        limits.historySize,
        randomUUID(),
        this.processId,
        entryId,
        this.pending.dueAt(now),
        OVERDUE_PER_TURN,
      ],
    );
    if (reply[0] === 'leased') return { kind: 'leased' };
    if (reply[0] === 'rate-limited') return { kind: 'rate-limited' };
    const [, id, isNew, source, takenOverBy, token, history, escalatedAt, entry, overdue] = reply;
    return {
      kind: 'started',
      conversationId: id,
      isNew: isNew === 1,
      source,
      takenOverBy: takenOverBy || null,
      escalated: escalatedAt !== '',
      createdAt: formatTimestamp(now),
      token,
      history: history.map(parseMessage),
      entry: { id: entryId, json: entry },
      overdue: overdue.map(([overdueId, json]) => ({ id: overdueId, json })),
    };
  }

  /**
   * Ends a turn: stores the reply unless a human holds the conversation or the lease was lost (then
   * it is kept aside as discarded), and releases the lease.
   */
  async endTurn(
    chatbotId: string,
    sessionId: string,
    token: string,
    reply: { role: MessageRole; content: string; fallback?: boolean } | null,
  ): Promise<TurnEnd> {
    const now = this.clock.nowMicros();
    const json = reply
      ? JSON.stringify({ role: reply.role, content: reply.content, at: now } satisfies RawMessage)
      : '';
    const [outcome, streak] = await END_TURN.run(
      this.redis,
      [
        this.keys.conversation(chatbotId, sessionId),
        this.keys.conversationLease(chatbotId, sessionId),
        this.keys.conversationMessages(chatbotId, sessionId),
        this.keys.conversationDiscarded(chatbotId, sessionId),
        this.keys.conversationsOf(chatbotId),
      ],
      [token, json, now, reply?.fallback ? '1' : '0'],
    );
    return { outcome, createdAt: formatTimestamp(now), fallbackStreak: streak };
  }

  /** Extends a held lease; false when it is no longer ours. */
  async renewLease(chatbotId: string, sessionId: string, token: string, leaseMs: number): Promise<boolean> {
    const renewed = await RENEW_LEASE.run(
      this.redis,
      [this.keys.conversationLease(chatbotId, sessionId)],
      [token, leaseMs],
    );
    return renewed === 1;
  }

  /** Puts a human agent in charge; another agent's hold is a conflict naming the holder. */
  async takeOver(chatbotId: string, sessionId: string, agent: string): Promise<ConversationView> {
    const reply = await TAKE_OVER.run(
      this.redis,
      [this.keys.conversation(chatbotId, sessionId)],
      [agent, this.clock.nowMicros()],
    );
    this.checkHold(reply);
    return this.get(chatbotId, sessionId);
  }

  /** Hands the conversation back to the AI (`agent` '' releases whoever holds it). */
  async release(chatbotId: string, sessionId: string, agent: string): Promise<ConversationView> {
    const reply = await RELEASE.run(this.redis, [this.keys.conversation(chatbotId, sessionId)], [agent]);
    this.checkHold(reply);
    return this.get(chatbotId, sessionId);
  }

  /** Stores a human agent's reply; the agent must hold the conversation. */
  async appendAgentReply(chatbotId: string, sessionId: string, agent: string, content: string): Promise<StoredMessage> {
    const now = this.clock.nowMicros();
    const reply = await APPEND_AGENT.run(this.redis, this.appendKeys(chatbotId, sessionId), [
      agent,
      agentMessage(content, now),
      now,
    ]);
    if (reply === 'not-held') throw new ConflictError('Take over the conversation before replying.');
    this.checkHold(reply);
    return { role: 'agent', content, created_at: formatTimestamp(now) };
  }

  /** The keys of the scripts that append an agent's message: meta, messages, conversation index. */
  private appendKeys(chatbotId: string, sessionId: string): AppendKeys {
    return [
      this.keys.conversation(chatbotId, sessionId),
      this.keys.conversationMessages(chatbotId, sessionId),
      this.keys.conversationsOf(chatbotId),
    ];
  }

  /**
   * Stores what the owner wrote from the channel's own account as an agent message, taking the
   * conversation over for `holder` if nobody holds it; undefined when there is no such conversation
   * (the owner's private chats are none of the chatbot's business).
   */
  async appendOwnerMessage(
    chatbotId: string,
    sessionId: string,
    holder: string,
    content: string,
  ): Promise<{ message: StoredMessage; holder: string; tookOver: boolean } | undefined> {
    const now = this.clock.nowMicros();
    const reply = await APPEND_OWNER.run(this.redis, this.appendKeys(chatbotId, sessionId), [
      holder,
      agentMessage(content, now),
      now,
    ]);
    if (reply === 'missing') return undefined;
    const [current, took] = reply;
    return {
      message: { role: 'agent', content, created_at: formatTimestamp(now) },
      holder: current,
      tookOver: took === 1,
    };
  }

  /**
   * The chatbot's conversations with the newest activity first, at most `limit` from the `offset`th,
   * each with its last message.
   */
  async recent(chatbotId: string, limit: number, offset = 0): Promise<Array<ConversationView & ConversationActivity>> {
    const index = this.keys.conversationsOf(chatbotId);
    const sessions = await this.redis.zRangeWithScores(index, offset, offset + limit - 1, { REV: true });
    const rows = await Promise.all(
      sessions.map(async ({ value: sessionId, score }) => {
        const [meta, last] = await Promise.all([
          this.redis.hGetAll(this.keys.conversation(chatbotId, sessionId)),
          this.redis.lRange(this.keys.conversationMessages(chatbotId, sessionId), -1, -1),
        ]);
        if (!meta.id) return undefined;
        const activity: ConversationActivity = {
          last_message: last[0] ? parseMessage(last[0]) : null,
          last_activity_at: formatTimestamp(score),
        };
        return { ...toView(meta), ...activity };
      }),
    );
    return rows.filter((row) => row !== undefined);
  }

  /** How many conversations the chatbot has. */
  count(chatbotId: string): Promise<number> {
    return this.redis.zCard(this.keys.conversationsOf(chatbotId));
  }

  /**
   * Flags the conversation as needing a human; only the first call is `first`. With `create`, a
   * conversation without messages yet is created (its first message will still start it).
   */
  async escalate(chatbotId: string, sessionId: string, create?: { source: string }): Promise<EscalationResult> {
    const now = this.clock.nowMicros();
    const entryId = randomUUID();
    const reply = await ESCALATE.run(
      this.redis,
      [
        this.keys.conversation(chatbotId, sessionId),
        this.keys.conversationsOf(chatbotId),
        this.keys.conversationIds(chatbotId),
        this.keys.pendingEvents(chatbotId),
        this.keys.pendingEventsDue(chatbotId),
      ],
      [now, create ? randomUUID() : '', chatbotId, sessionId, create?.source ?? '', entryId, this.pending.dueAt(now)],
    );
    if (reply === 'missing') throw new NotFoundError('Conversation not found.');
    if (reply[0] === 'already') {
      const [, at, record] = reply;
      return { first: false, escalatedAt: formatTimestamp(Number(at)), conversation: toView(fields(record)) };
    }
    const [, at, count, record, entry] = reply;
    return {
      first: true,
      escalatedAt: formatTimestamp(Number(at)),
      messageCount: Number(count),
      conversation: toView(fields(record)),
      entry: { id: entryId, json: entry },
    };
  }

  async exists(chatbotId: string, sessionId: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.conversation(chatbotId, sessionId))) === 1;
  }

  async get(chatbotId: string, sessionId: string): Promise<ConversationView> {
    const meta = await this.redis.hGetAll(this.keys.conversation(chatbotId, sessionId));
    if (!meta.id) throw new NotFoundError('Conversation not found.');
    return toView(meta);
  }

  async transcript(chatbotId: string, sessionId: string): Promise<ConversationTranscript> {
    const view = await this.get(chatbotId, sessionId);
    const raw = await this.redis.lRange(this.keys.conversationMessages(chatbotId, sessionId), 0, -1);
    return { ...view, messages: raw.map(parseMessage) };
  }

  /** The newest `limit` messages, oldest first; none when the conversation does not exist yet. */
  async recentMessages(chatbotId: string, sessionId: string, limit: number): Promise<StoredMessage[]> {
    const raw = await this.redis.lRange(this.keys.conversationMessages(chatbotId, sessionId), -limit, -1);
    return raw.map(parseMessage);
  }

  /** Replies that were produced but never delivered (a human took over, or the lease was lost). */
  async discarded(chatbotId: string, sessionId: string): Promise<StoredMessage[]> {
    const raw = await this.redis.lRange(this.keys.conversationDiscarded(chatbotId, sessionId), 0, -1);
    return raw.map(parseMessage);
  }

  private checkHold(reply: HoldReply): void {
    if (reply === 'missing') throw new NotFoundError('Conversation not found.');
    if (Array.isArray(reply)) throw new ConflictError(`Conversation is already taken over by ${reply[1]}.`);
  }
}

/** A hash as HGETALL returns it inside a script: field, value, field, value… */
function fields(flat: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) record[flat[i]!] = flat[i + 1]!;
  return record;
}

/** An agent's message as a conversation's list stores it. */
function agentMessage(content: string, at: number): string {
  return JSON.stringify({ role: 'agent', content, at } satisfies RawMessage);
}

function parseMessage(json: string): StoredMessage {
  const raw = JSON.parse(json) as RawMessage;
  return { role: raw.role, content: raw.content, created_at: formatTimestamp(raw.at) };
}

function toView(meta: Record<string, string>): ConversationView {
  return {
    conversation_id: meta.id!,
    chatbot_id: meta.chatbot_id!,
    session_id: meta.session_id!,
    source: meta.source!,
    escalated_at: meta.escalated_at ? formatTimestamp(Number(meta.escalated_at)) : null,
    taken_over_by: meta.taken_over_by || null,
  };
}
