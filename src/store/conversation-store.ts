import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { PendingEntry, StoredPendingEntry } from '../events/pending-event.ts';
import { formatTimestamp } from '../timestamp.ts';
import { LuaScript } from './lua-script.ts';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/** Who wrote a stored message. Agent messages reach the LLM as assistant turns. */
export type MessageRole = 'user' | 'assistant' | 'agent';

/** A message of a transcript. */
export interface StoredMessage {
  role: MessageRole;
  content: string;
  created_at: string;
}

/** The conversation record that the CLI and agents see. */
export interface ConversationView {
  conversation_id: string;
  chatbot_id: string;
  session_id: string;
  source: string;
  escalated_at: string | null;
  taken_over_by: string | null;
}

/** When a conversation last moved, and its last message. */
export interface ConversationActivity {
  last_message: StoredMessage | null;
  last_activity_at: string;
}

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
      /** The pending entry of this message's events (as the script recorded it); `endTurn` acknowledges it. */
      entryId: string;
      entry: PendingEntry;
      /** Overdue pending entries of the chatbot, now this turn's to write deliveries for. */
      overdue: StoredPendingEntry[];
    };

/** What became of a reply at the end of a turn. */
export type TurnOutcomeInStore = 'stored' | 'discarded' | 'lost-lease';

/** The end of a turn: what became of the reply, when it was stored, and the fallback streak. */
export interface TurnEnd {
  outcome: TurnOutcomeInStore;
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

// The one definition of a new conversation record, shared by the scripts that may create one.
const CREATE_CONVERSATION = `
local function create_conversation(meta, ids, id, chatbot, session, source, now)
  redis.call('HSET', meta, 'id', id, 'chatbot_id', chatbot, 'session_id', session, 'source', source,
    'created_at', now, 'escalated_at', '', 'taken_over_by', '', 'message_count', 0)
  redis.call('HSET', ids, id, session)
end`;

// KEYS: meta, lease, messages, rate window, conversation index, id index, pending events, their due times.
// ARGV: session, new conversation id, source, chatbot, now µs, user message JSON, rate limit,
//       window µs, lease ms, history size, nonce, process id, pending entry id, entry due µs,
//       how many overdue entries to take over.
// One script: lease (fenced), conversation rate limit, find-or-create, takeover state, history, the
// user message appended and the pending entry of its events recorded, so a turn starts with one round
// trip and nothing half-written. It also hands the caller overdue entries of the chatbot (left by a
// process that died before writing their deliveries), due again a grace period later.
const BEGIN_TURN = new LuaScript(`${CREATE_CONVERSATION}
if redis.call('EXISTS', KEYS[2]) == 1 then return {'leased'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[8])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - window)
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[7]) then return {'rate-limited'} end
redis.call('ZADD', KEYS[4], now, now .. ':' .. ARGV[11])
redis.call('PEXPIRE', KEYS[4], math.ceil(window / 1000))
if redis.call('EXISTS', KEYS[1]) == 0 then
  create_conversation(KEYS[1], KEYS[6], ARGV[2], ARGV[4], ARGV[1], ARGV[3], ARGV[5])
end
-- New means no message yet: a conversation escalated before its first message starts with that message.
local isNew = 0
if redis.call('HGET', KEYS[1], 'message_count') == '0' then isNew = 1 end
local token = ARGV[12] .. ':' .. redis.call('HINCRBY', KEYS[1], 'fence', 1)
redis.call('SET', KEYS[2], token, 'PX', ARGV[9])
local history = redis.call('LRANGE', KEYS[3], -tonumber(ARGV[10]), -1)
redis.call('RPUSH', KEYS[3], ARGV[6])
redis.call('HINCRBY', KEYS[1], 'message_count', 1)
redis.call('HSET', KEYS[1], 'last_message_at', ARGV[5])
redis.call('ZADD', KEYS[5], ARGV[5], ARGV[1])
local meta = redis.call('HMGET', KEYS[1], 'id', 'source', 'taken_over_by', 'escalated_at')
redis.call('HSET', KEYS[7], ARGV[13], '{"kind":"turn","at":"' .. ARGV[5] .. '","conversation_id":' ..
  cjson.encode(meta[1]) .. ',"session_id":' .. cjson.encode(ARGV[1]) .. ',"source":' .. cjson.encode(meta[2]) ..
  ',"is_new":' .. isNew .. ',"message":' .. ARGV[6] .. '}')
local overdue = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[8], '-inf', ARGV[5], 'LIMIT', 0, tonumber(ARGV[15]))) do
  local entry = redis.call('HGET', KEYS[7], id)
  if entry then
    table.insert(overdue, {id, entry})
    redis.call('ZADD', KEYS[8], ARGV[14], id)
  else
    redis.call('ZREM', KEYS[8], id)
  end
end
redis.call('ZADD', KEYS[8], ARGV[14], ARGV[13])
return {'started', meta[1], isNew, meta[2], meta[3], token, history, meta[4], overdue}
`);

// KEYS: meta, lease, messages, discarded, conversation index, pending events, their due times.
// ARGV: token, reply JSON ('' when the turn ends without one), now µs, '1' when the reply is the
// fallback message, the turn's pending entry id (its deliveries are written by now).
// Returns {outcome, consecutive fallback replies}.
// The takeover check happens here, atomically with the append: the AI never answers a conversation
// that a human holds, whatever any process's memory says.
const END_TURN = new LuaScript(`
local outcome = 'stored'
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  outcome = 'lost-lease'
elseif ARGV[2] ~= '' and redis.call('HGET', KEYS[1], 'taken_over_by') ~= '' then
  outcome = 'discarded'
end
local streak = 0
if ARGV[2] ~= '' then
  if outcome == 'stored' then
    redis.call('RPUSH', KEYS[3], ARGV[2])
    redis.call('HINCRBY', KEYS[1], 'message_count', 1)
    redis.call('HSET', KEYS[1], 'last_message_at', ARGV[3])
    redis.call('ZADD', KEYS[5], ARGV[3], redis.call('HGET', KEYS[1], 'session_id'))
    if ARGV[4] == '1' then
      streak = redis.call('HINCRBY', KEYS[1], 'fallback_streak', 1)
    else
      redis.call('HSET', KEYS[1], 'fallback_streak', 0)
    end
  else
    redis.call('RPUSH', KEYS[4], ARGV[2])
  end
end
if outcome ~= 'lost-lease' then redis.call('DEL', KEYS[2]) end
redis.call('HDEL', KEYS[6], ARGV[5])
redis.call('ZREM', KEYS[7], ARGV[5])
return {outcome, streak}
`);

// KEYS: lease. ARGV: token, lease ms.
const RENEW_LEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`);

// KEYS: meta. ARGV: agent, now µs. Returns 'missing', {'held', holder} or 'ok'.
const TAKE_OVER = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local holder = redis.call('HGET', KEYS[1], 'taken_over_by')
if holder ~= '' and holder ~= ARGV[1] then return {'held', holder} end
redis.call('HSET', KEYS[1], 'taken_over_by', ARGV[1], 'taken_over_at', ARGV[2])
return 'ok'
`);

// KEYS: meta. ARGV: agent ('' = any holder). Returns 'missing', {'held', holder} or 'ok'.
const RELEASE = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local holder = redis.call('HGET', KEYS[1], 'taken_over_by')
if ARGV[1] ~= '' and holder ~= '' and holder ~= ARGV[1] then return {'held', holder} end
redis.call('HSET', KEYS[1], 'taken_over_by', '', 'taken_over_at', '')
return 'ok'
`);

// KEYS: meta, conversation index, id index, pending events, their due times. ARGV: now µs, and to
// create a missing conversation (a visitor asking for a human before saying anything): new id ('' not
// to create one), chatbot, session, source; then the pending entry id and its due µs.
// Returns 'missing', {'already', at} or {'escalated', at, message_count}; the first escalation records
// the pending entry of its event.
const ESCALATE = new LuaScript(`${CREATE_CONVERSATION}
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[2] == '' then return 'missing' end
  create_conversation(KEYS[1], KEYS[3], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[1])
  redis.call('HSET', KEYS[1], 'last_message_at', ARGV[1])
  redis.call('ZADD', KEYS[2], ARGV[1], ARGV[4])
end
local at = redis.call('HGET', KEYS[1], 'escalated_at')
if at ~= '' then return {'already', at} end
redis.call('HSET', KEYS[1], 'escalated_at', ARGV[1])
local meta = redis.call('HMGET', KEYS[1], 'id', 'session_id', 'message_count')
redis.call('HSET', KEYS[4], ARGV[6], '{"kind":"escalated","at":"' .. ARGV[1] .. '","conversation_id":' ..
  cjson.encode(meta[1]) .. ',"session_id":' .. cjson.encode(meta[2]) .. ',"message_count":' .. meta[3] .. '}')
redis.call('ZADD', KEYS[5], ARGV[7], ARGV[6])
return {'escalated', ARGV[1], meta[3]}
`);

// KEYS: meta, messages, conversation index. ARGV: agent, message JSON, now µs.
// An agent writes only into a conversation it holds; no lease is needed, since END_TURN discards the
// AI's reply to a held conversation.
const APPEND_AGENT = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local holder = redis.call('HGET', KEYS[1], 'taken_over_by')
if holder == '' then return 'not-held' end
if holder ~= ARGV[1] then return {'held', holder} end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'message_count', 1)
redis.call('HSET', KEYS[1], 'last_message_at', ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[3], redis.call('HGET', KEYS[1], 'session_id'))
return 'ok'
`);

// KEYS: meta, messages, conversation index. ARGV: holder, message JSON, now µs.
// The owner wrote from the messaging account itself (WhatsApp's linked phone): the conversation is
// taken over by `holder` unless someone already holds it, and the message is stored as an agent's.
// Returns 'missing' or {holder, 1 when this message took it over}.
const APPEND_OWNER = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local holder = redis.call('HGET', KEYS[1], 'taken_over_by')
local took = 0
if holder == '' then
  holder = ARGV[1]
  took = 1
  redis.call('HSET', KEYS[1], 'taken_over_by', holder, 'taken_over_at', ARGV[3])
end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'message_count', 1)
redis.call('HSET', KEYS[1], 'last_message_at', ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[3], redis.call('HGET', KEYS[1], 'session_id'))
return {holder, took}
`);

/** The outcome of an escalation request. */
export type EscalationResult =
  | {
      first: true;
      escalatedAt: string;
      messageCount: number;
      conversation: ConversationView;
      /** The pending entry of the `conversation.escalated` event (as the script recorded it). */
      entryId: string;
      entry: PendingEntry;
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
  /** How long a pending entry waits for its deliveries before another process writes them. */
  private readonly pendingGraceMs: number;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Clock, options: { pendingGraceMs: number }) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.pendingGraceMs = options.pendingGraceMs;
  }

  /**
   * Begins a turn for a user message: takes the conversation's lease, applies the conversation rate
   * limit, creates the conversation when new, and appends the message.
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
    const reply = (await BEGIN_TURN.run(
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
        now + this.pendingGraceMs * 1000,
        OVERDUE_PER_TURN,
      ],
    )) as [string, ...unknown[]];
    if (reply[0] === 'leased') return { kind: 'leased' };
    if (reply[0] === 'rate-limited') return { kind: 'rate-limited' };
    const [, id, isNew, source, takenOverBy, token, history, escalatedAt, overdue] = reply as [
      string,
      string,
      number,
      string,
      string,
      string,
      string[],
      string,
      Array<[string, string]>,
    ];
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
      entryId,
      entry: {
        kind: 'turn',
        at: String(now),
        conversation_id: id,
        session_id: sessionId,
        source,
        is_new: isNew,
        message: { content: input.content },
      },
      overdue: overdue.map(([overdueId, json]) => ({ id: overdueId, entry: JSON.parse(json) as PendingEntry })),
    };
  }

  /**
   * Ends a turn: stores the reply unless a human holds the conversation or the lease was lost (then
   * it is kept aside as discarded), and releases the lease.
   */
  async endTurn(
    chatbotId: string,
    sessionId: string,
    turn: { token: string; entryId: string },
    reply: { role: MessageRole; content: string; fallback?: boolean } | null,
  ): Promise<TurnEnd> {
    const now = this.clock.nowMicros();
    const json = reply
      ? JSON.stringify({ role: reply.role, content: reply.content, at: now } satisfies RawMessage)
      : '';
    const [outcome, streak] = (await END_TURN.run(
      this.redis,
      [
        this.keys.conversation(chatbotId, sessionId),
        this.keys.conversationLease(chatbotId, sessionId),
        this.keys.conversationMessages(chatbotId, sessionId),
        this.keys.conversationDiscarded(chatbotId, sessionId),
        this.keys.conversationsOf(chatbotId),
        this.keys.pendingEvents(chatbotId),
        this.keys.pendingEventsDue(chatbotId),
      ],
      [turn.token, json, now, reply?.fallback ? '1' : '0', turn.entryId],
    )) as [TurnOutcomeInStore, number];
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
    const reply = await APPEND_AGENT.run(
      this.redis,
      [
        this.keys.conversation(chatbotId, sessionId),
        this.keys.conversationMessages(chatbotId, sessionId),
        this.keys.conversationsOf(chatbotId),
      ],
      [agent, JSON.stringify({ role: 'agent', content, at: now } satisfies RawMessage), now],
    );
    if (reply === 'not-held') throw new ConflictError('Take over the conversation before replying.');
    this.checkHold(reply);
    return { role: 'agent', content, created_at: formatTimestamp(now) };
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
    const reply = await APPEND_OWNER.run(
      this.redis,
      [
        this.keys.conversation(chatbotId, sessionId),
        this.keys.conversationMessages(chatbotId, sessionId),
        this.keys.conversationsOf(chatbotId),
      ],
      [holder, JSON.stringify({ role: 'agent', content, at: now } satisfies RawMessage), now],
    );
    if (reply === 'missing') return undefined;
    const [current, took] = reply as [string, number];
    return {
      message: { role: 'agent', content, created_at: formatTimestamp(now) },
      holder: current,
      tookOver: took === 1,
    };
  }

  /**
   * The chatbot's conversations with the newest activity first, at most `limit`, each with its last
   * message.
   */
  async recent(chatbotId: string, limit: number): Promise<Array<ConversationView & ConversationActivity>> {
    const sessions = await this.redis.zRangeWithScores(this.keys.conversationsOf(chatbotId), 0, limit - 1, {
      REV: true,
    });
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
      [
        now,
        create ? randomUUID() : '',
        chatbotId,
        sessionId,
        create?.source ?? '',
        entryId,
        now + this.pendingGraceMs * 1000,
      ],
    );
    if (reply === 'missing') throw new NotFoundError('Conversation not found.');
    const [kind, at, count] = reply as [string, string, string?];
    const conversation = await this.get(chatbotId, sessionId);
    const escalatedAt = formatTimestamp(Number(at));
    return kind === 'escalated'
      ? {
          first: true,
          escalatedAt,
          messageCount: Number(count),
          conversation,
          entryId,
          entry: {
            kind: 'escalated',
            at: String(now),
            conversation_id: conversation.conversation_id,
            session_id: sessionId,
            message_count: Number(count),
          },
        }
      : { first: false, escalatedAt, conversation };
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

  private checkHold(reply: unknown): void {
    if (reply === 'missing') throw new NotFoundError('Conversation not found.');
    if (Array.isArray(reply)) {
      throw new ConflictError(`Conversation is already taken over by ${String(reply[1])}.`);
    }
  }
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
