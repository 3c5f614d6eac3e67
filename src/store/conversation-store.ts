import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { ScriptSignal } from '../redis/signal-bus.ts';
import type {
  AgentPersona,
  Citation,
  Conversation as ConversationView,
  ConversationActivity,
  Message as StoredMessage,
  MessageDelivery,
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
  RELEASE_OWN_LEASE,
  RENEW_LEASE,
  TAKE_OVER,
  type AppendKeys,
  type HoldKeys,
  type HoldReply,
} from './conversation-scripts.ts';
import type { PendingEventStore } from './pending-event-store.ts';
import { plainConnection, type RedisClient } from '../redis/redis-client.ts';
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
      /** Whether the script that stored the user message published its signal (the `announce` option). */
      announced: boolean;
      /** The lease token; the turn's later writes are fenced by it. */
      token: string;
      /** Up to `historySize` messages before the new one, oldest first. */
      history: StoredMessage[];
      /**
       * The pending entry of this message's events, as the script recorded it; none when the turn was
       * told no webhook listens for them (`recordEvents: false`).
       */
      entry?: StoredPendingEntry;
      /** Overdue pending entries of the chatbot, now this turn's to write deliveries for. */
      overdue: StoredPendingEntry[];
    };

/** What became of a reply at the end of a turn. */
export type ReplyFate = 'stored' | 'discarded' | 'lost-lease';

/** The end of a turn: what became of the reply, when it was stored, and the fallback streak. */
export interface TurnEnd {
  outcome: ReplyFate;
  createdAt: string;
  /** Whether the script that stored the reply published its signal (the `announce` option). */
  announced: boolean;
  /** Consecutive fallback replies, this one included (0 when the reply was not the fallback). */
  fallbackStreak: number;
}

/**
 * The signal of a message a turn stores (given the time it is stored at), for the script that stores
 * it to publish; undefined when the caller must publish it after (see SignalBus.forScript).
 */
export type Announce = (createdAt: string) => Promise<ScriptSignal | undefined>;

/** Limits a turn is checked against. */
export interface TurnLimits {
  rateLimit: number;
  rateWindowMs: number;
  leaseMs: number;
  historySize: number;
}

/** Overdue pending entries one turn takes over at most (the sweeper takes the rest). */
const OVERDUE_PER_TURN = 5;

/** How much of the conversations' recent messages one process keeps for its next turns (UTF-16 units). */
const HELD_HISTORY_SIZE = 8 * 1024 * 1024;

/** A conversation's last messages as this process last saw them, and what they are of. */
interface HeldHistory {
  conversationId: string;
  /** The conversation's message count with the last of `messages`. */
  count: number;
  /** The `historySize` they were kept for. */
  historySize: number;
  messages: StoredMessage[];
}

/** A message as a conversation's list stores it (its time in microseconds). */
export interface RawMessage {
  role: MessageRole;
  content: string;
  at: number;
  citations?: Citation[];
  agent?: AgentPersona;
}

/** What a conversation's hand-off state is read from. */
export interface HandoffRecord {
  takenOverBy: string | null;
  /** When the visitor last asked for a human while none held the conversation (µs), 0 if never. */
  humanRequestedAt: number;
  /** When an agent last took it over (µs), 0 if never. */
  humanServedAt: number;
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
 * A takeover or release: the conversation as it is now, and the pending entry of its event when it
 * changed who holds the conversation (none when it changed nothing).
 */
export interface HoldOutcome {
  conversation: ConversationView;
  entry: StoredPendingEntry | undefined;
}

/**
 * Conversations in Redis: turns that begin and end under a fenced per-conversation lease, takeover,
 * release and escalation, and transcripts. Redis is the record; conversation actors cache it.
 */
export class ConversationStore {
  private readonly redis: RedisClient;
  /**
   * Where a conversation's keys are read: the turn's scripts write them there (plainConnection), so
   * a read that follows a turn sees it, and none of them enters the client-side cache.
   */
  private readonly records: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Clock;
  /** Distinguishes this process's lease tokens from every other process's. */
  private readonly processId = randomUUID();
  /** Where the pending entries of the events these scripts record are kept (and when they fall due). */
  private readonly pending: PendingEventStore;
  /**
   * The recent messages of the conversations this process ran turns of, by conversation key, so the
   * next turn need not read them: BEGIN_TURN reads them only when the conversation's id or message
   * count is no longer the one held (another process or an agent wrote since, or it was erased).
   */
  private readonly histories = new LRUCache<string, HeldHistory>({
    maxSize: HELD_HISTORY_SIZE,
    sizeCalculation: (held) => held.messages.reduce((size, message) => size + 64 + message.content.length, 64),
  });

  constructor(redis: RedisClient, keys: RedisKeys, clock: Clock, pending: PendingEventStore) {
    this.redis = redis;
    this.records = plainConnection(redis);
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
    options: { recordEvents?: boolean; announce?: Announce } = {},
  ): Promise<TurnStart> {
    const recordEvents = options.recordEvents ?? true;
    const key = this.keys.conversation(chatbotId, sessionId);
    const held = this.histories.get(key);
    const holds = held?.historySize === limits.historySize ? held : undefined;
    const now = this.clock.nowMicros();
    const signal = await options.announce?.(formatTimestamp(now));
    const message: RawMessage = { role: 'user', content: input.content, at: now };
    const entryId = randomUUID();
    const reply = await BEGIN_TURN.run(
      this.redis,
      [
        key,
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
        recordEvents ? entryId : '',
        this.pending.dueAt(now),
        recordEvents ? OVERDUE_PER_TURN : 0,
        signal?.channel ?? '',
        signal?.message ?? '',
        holds?.conversationId ?? '',
        holds?.count ?? 0,
      ],
    );
    if (reply[0] === 'leased') return { kind: 'leased' };
    if (reply[0] === 'rate-limited') return { kind: 'rate-limited' };
    const [, id, isNew, source, takenOverBy, token, rawHistory, escalatedAt, entry, overdue, count] = reply;
    if (rawHistory === 0 && !holds) throw new Error('BEGIN_TURN kept a history this process does not hold');
    const history = rawHistory === 0 ? [...holds!.messages] : rawHistory.map(parseMessage);
    const messages = [...history, parseMessage(JSON.stringify(message))].slice(-limits.historySize);
    this.histories.set(key, { conversationId: id, count, historySize: limits.historySize, messages });
    return {
      kind: 'started',
      conversationId: id,
      isNew: isNew === 1,
      source,
      takenOverBy: takenOverBy || null,
      escalated: escalatedAt !== '',
      createdAt: formatTimestamp(now),
      announced: signal !== undefined,
      token,
      history,
      ...(recordEvents ? { entry: { id: entryId, json: entry } } : {}),
      overdue: overdue.map(([overdueId, json]) => ({ id: overdueId, json })),
    };
  }

  /**
   * Ends a turn: stores the reply unless a human holds the conversation, the lease was lost or
   * `discard` says so (a reply cut short by a takeover): then it is kept aside as discarded. Releases
   * the lease.
   */
  async endTurn(
    chatbotId: string,
    sessionId: string,
    token: string,
    reply: { role: MessageRole; content: string; citations?: Citation[]; fallback?: boolean; discard?: boolean } | null,
    announce?: Announce,
  ): Promise<TurnEnd> {
    const now = this.clock.nowMicros();
    const signal = reply ? await announce?.(formatTimestamp(now)) : undefined;
    const raw: RawMessage | null = reply && { role: reply.role, content: reply.content, at: now };
    if (raw && reply?.citations?.length) raw.citations = reply.citations;
    const json = raw ? JSON.stringify(raw) : '';
    const [outcome, streak, countBefore] = await END_TURN.run(
      this.redis,
      [
        this.keys.conversation(chatbotId, sessionId),
        this.keys.conversationLease(chatbotId, sessionId),
        this.keys.conversationMessages(chatbotId, sessionId),
        this.keys.conversationDiscarded(chatbotId, sessionId),
        this.keys.conversationsOf(chatbotId),
      ],
      [
        token,
        json,
        now,
        reply?.fallback ? '1' : '0',
        reply?.discard ? '1' : '0',
        sessionId,
        signal?.channel ?? '',
        signal?.message ?? '',
      ],
    );
    this.holdReply(this.keys.conversation(chatbotId, sessionId), countBefore, outcome === 'stored' ? json : '');
    const announced = signal !== undefined && outcome === 'stored';
    return { outcome, createdAt: formatTimestamp(now), fallbackStreak: streak, announced };
  }

  /**
   * Keeps the held history of a conversation whose turn ended true: with the stored reply (`json`,
   * '' for none) when nothing else was written since the turn began, else forgotten.
   */
  private holdReply(key: string, countBefore: string, json: string): void {
    const held = this.histories.get(key);
    if (!held) return;
    if (countBefore !== String(held.count)) {
      this.histories.delete(key);
      return;
    }
    if (json === '') return;
    const messages = [...held.messages, parseMessage(json)].slice(-held.historySize);
    this.histories.set(key, { ...held, count: held.count + 1, messages });
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

  /**
   * Lets go of the conversation's lease if this process holds it: for a turn an outage cut off (its
   * release, or the reply to its BEGIN_TURN, lost), once Redis answers again, so that other processes
   * need not wait for the lease to lapse. Only while this process has no turn of it in flight. True
   * when a lease was released.
   */
  async releaseOwnLease(chatbotId: string, sessionId: string): Promise<boolean> {
    const released = await RELEASE_OWN_LEASE.run(
      this.redis,
      [this.keys.conversationLease(chatbotId, sessionId)],
      [this.processId],
    );
    return released === 1;
  }

  /**
   * Puts a human agent in charge; another agent's hold is a conflict naming the holder. A takeover
   * that changed the holder records the pending entry of its `conversation.taken_over`.
   */
  async takeOver(chatbotId: string, sessionId: string, agent: string): Promise<HoldOutcome> {
    return this.changeHold(TAKE_OVER, chatbotId, sessionId, agent);
  }

  /**
   * Hands the conversation back to the AI (`agent` '' releases whoever holds it). A release that
   * ended a hold records the pending entry of its `conversation.released`.
   */
  async release(chatbotId: string, sessionId: string, agent: string): Promise<HoldOutcome> {
    return this.changeHold(RELEASE, chatbotId, sessionId, agent);
  }

  private async changeHold(
    script: typeof TAKE_OVER | typeof RELEASE,
    chatbotId: string,
    sessionId: string,
    agent: string,
  ): Promise<HoldOutcome> {
    const now = this.clock.nowMicros();
    const entryId = randomUUID();
    const keys: HoldKeys = [
      this.keys.conversation(chatbotId, sessionId),
      this.keys.pendingEvents(chatbotId),
      this.keys.pendingEventsDue(chatbotId),
    ];
    const reply = await script.run(this.redis, keys, [agent, now, entryId, this.pending.dueAt(now)]);
    if (Array.isArray(reply) && reply[0] === 'changed') {
      return { conversation: await this.get(chatbotId, sessionId), entry: { id: entryId, json: reply[1] } };
    }
    this.checkHold(reply);
    return { conversation: await this.get(chatbotId, sessionId), entry: undefined };
  }

  /** Stores a human agent's reply, with how they show; the agent must hold the conversation. */
  async appendAgentReply(
    chatbotId: string,
    sessionId: string,
    agent: string,
    content: string,
    persona?: AgentPersona,
  ): Promise<StoredMessage> {
    const now = this.clock.nowMicros();
    const reply = await APPEND_AGENT.run(this.redis, this.appendKeys(chatbotId, sessionId), [
      agent,
      agentMessage(content, now, persona),
      now,
    ]);
    if (reply === 'not-held') throw new ConflictError('Take over the conversation before replying.');
    this.checkHold(reply);
    return { role: 'agent', content, created_at: formatTimestamp(now), ...(persona ? { agent: persona } : {}) };
  }

  /** What the conversation's hand-off state is read from; undefined when there is no conversation. */
  async handoff(chatbotId: string, sessionId: string): Promise<HandoffRecord | undefined> {
    const [id, holder, requested, served] = await this.records.hmGet(this.keys.conversation(chatbotId, sessionId), [
      'id',
      'taken_over_by',
      'human_requested_at',
      'human_served_at',
    ]);
    if (!id) return undefined;
    return {
      takenOverBy: holder || null,
      humanRequestedAt: Number(requested || 0),
      humanServedAt: Number(served || 0),
    };
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
   * conversation over for `holder` if nobody holds it (recording the pending entry of its
   * `conversation.taken_over`); undefined when there is no such conversation (the owner's private
   * chats are none of the chatbot's business).
   */
  async appendOwnerMessage(
    chatbotId: string,
    sessionId: string,
    holder: string,
    content: string,
  ): Promise<
    { message: StoredMessage; holder: string; tookOver: boolean; entry: StoredPendingEntry | undefined } | undefined
  > {
    const now = this.clock.nowMicros();
    const entryId = randomUUID();
    const reply = await APPEND_OWNER.run(
      this.redis,
      [
        ...this.appendKeys(chatbotId, sessionId),
        this.keys.pendingEvents(chatbotId),
        this.keys.pendingEventsDue(chatbotId),
      ],
      [holder, agentMessage(content, now), now, entryId, this.pending.dueAt(now)],
    );
    if (reply === 'missing') return undefined;
    const [current, took, entry] = reply;
    return {
      message: { role: 'agent', content, created_at: formatTimestamp(now) },
      holder: current,
      tookOver: took === 1,
      entry: took === 1 ? { id: entryId, json: entry } : undefined,
    };
  }

  /**
   * The chatbot's conversations with the newest activity first, at most `limit` from the `offset`th,
   * each with its last message.
   */
  async recent(chatbotId: string, limit: number, offset = 0): Promise<Array<ConversationView & ConversationActivity>> {
    const index = this.keys.conversationsOf(chatbotId);
    const sessions = await this.records.zRangeWithScores(index, offset, offset + limit - 1, { REV: true });
    const rows = await Promise.all(
      sessions.map(async ({ value: sessionId, score }) => {
        const [meta, last] = await Promise.all([
          this.records.hGetAll(this.keys.conversation(chatbotId, sessionId)),
          this.records.lRange(this.keys.conversationMessages(chatbotId, sessionId), -1, -1),
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
    return this.records.zCard(this.keys.conversationsOf(chatbotId));
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
    return (await this.records.exists(this.keys.conversation(chatbotId, sessionId))) === 1;
  }

  async get(chatbotId: string, sessionId: string): Promise<ConversationView> {
    const meta = await this.records.hGetAll(this.keys.conversation(chatbotId, sessionId));
    if (!meta.id) throw new NotFoundError('Conversation not found.');
    return toView(meta);
  }

  async transcript(chatbotId: string, sessionId: string): Promise<ConversationTranscript> {
    const view = await this.get(chatbotId, sessionId);
    const [raw, failures, ratings, deliveries] = await Promise.all([
      this.records.lRange(this.keys.conversationMessages(chatbotId, sessionId), 0, -1),
      this.records.hGetAll(this.keys.conversationFailures(chatbotId, sessionId)),
      this.records.hGetAll(this.keys.conversationFeedback(chatbotId, sessionId)),
      this.records.hGetAll(this.keys.conversationDelivery(chatbotId, sessionId)),
    ]);
    const messages = raw.map(parseMessage).map((message) => {
      const failure = message.role === 'user' ? failures[message.created_at] : undefined;
      return withDelivery(withRating(failure === undefined ? message : { ...message, failure }, ratings), deliveries);
    });
    return { ...view, messages };
  }

  /** The newest `limit` messages as the visitor sees them, oldest first: replies with the visitor's ratings. */
  async visitorHistory(chatbotId: string, sessionId: string, limit: number): Promise<StoredMessage[]> {
    const [raw, ratings] = await Promise.all([
      this.records.lRange(this.keys.conversationMessages(chatbotId, sessionId), -limit, -1),
      this.records.hGetAll(this.keys.conversationFeedback(chatbotId, sessionId)),
    ]);
    return raw.map((json) => withRating(parseMessage(json), ratings));
  }

  /**
   * Notes why the turn of the visitor message stored at `askedAt` got no answer from the chatbot's
   * provider; the transcript shows it on that message.
   */
  async noteFailure(chatbotId: string, sessionId: string, askedAt: string, reason: string): Promise<void> {
    await this.redis.hSet(this.keys.conversationFailures(chatbotId, sessionId), askedAt, reason);
  }

  /** The newest `limit` messages, oldest first; none when the conversation does not exist yet. */
  async recentMessages(chatbotId: string, sessionId: string, limit: number): Promise<StoredMessage[]> {
    const raw = await this.records.lRange(this.keys.conversationMessages(chatbotId, sessionId), -limit, -1);
    return raw.map(parseMessage);
  }

  /** Replies that were produced but never delivered (a human took over, or the lease was lost). */
  async discarded(chatbotId: string, sessionId: string): Promise<StoredMessage[]> {
    const raw = await this.records.lRange(this.keys.conversationDiscarded(chatbotId, sessionId), 0, -1);
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
function agentMessage(content: string, at: number, persona?: AgentPersona): string {
  return JSON.stringify({ role: 'agent', content, at, ...(persona ? { agent: persona } : {}) } satisfies RawMessage);
}

/** An AI reply with the visitor's rating of it, when it has one. */
function withRating(message: StoredMessage, ratings: Record<string, string>): StoredMessage {
  const rating = message.role === 'assistant' ? ratings[message.created_at] : undefined;
  return rating === 'up' || rating === 'down' ? { ...message, feedback: rating } : message;
}

/** A reply with how far its messaging platform got it (WhatsApp's Cloud API statuses), when it was sent through one. */
function withDelivery(message: StoredMessage, deliveries: Record<string, string>): StoredMessage {
  const json = message.role === 'user' ? undefined : deliveries[message.created_at];
  if (json === undefined) return message;
  const { at, ...delivery } = JSON.parse(json) as Omit<MessageDelivery, 'at'> & { at: number };
  return { ...message, delivery: { ...delivery, at: formatTimestamp(at) } };
}

function parseMessage(json: string): StoredMessage {
  const raw = JSON.parse(json) as RawMessage;
  const message: StoredMessage = { role: raw.role, content: raw.content, created_at: formatTimestamp(raw.at) };
  if (raw.citations) message.citations = raw.citations;
  if (raw.agent) message.agent = raw.agent;
  return message;
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
