import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
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
      /** The lease token; the turn's later writes are fenced by it. */
      token: string;
      /** Up to `historySize` messages before the new one, oldest first. */
      history: StoredMessage[];
    };

/** What became of a reply at the end of a turn. */
export type TurnEnd = 'stored' | 'discarded' | 'lost-lease';

/** Limits a turn is checked against. */
export interface TurnLimits {
  rateLimit: number;
  rateWindowMs: number;
  leaseMs: number;
  historySize: number;
}

interface RawMessage {
  role: MessageRole;
  content: string;
  at: number;
}

// KEYS: meta, lease, messages, rate window, conversation index, id index.
// ARGV: session, new conversation id, source, chatbot, now µs, user message JSON, rate limit,
//       window µs, lease ms, history size, nonce, process id.
// One script: lease (fenced), conversation rate limit, find-or-create, takeover state, history, and
// the user message appended, so a turn starts with one round trip and nothing half-written.
const BEGIN_TURN = new LuaScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return {'leased'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[8])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - window)
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[7]) then return {'rate-limited'} end
redis.call('ZADD', KEYS[4], now, now .. ':' .. ARGV[11])
redis.call('PEXPIRE', KEYS[4], math.ceil(window / 1000))
local isNew = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  isNew = 1
  redis.call('HSET', KEYS[1], 'id', ARGV[2], 'chatbot_id', ARGV[4], 'session_id', ARGV[1],
    'source', ARGV[3], 'created_at', ARGV[5], 'escalated_at', '', 'taken_over_by', '', 'message_count', 0)
  redis.call('HSET', KEYS[6], ARGV[2], ARGV[1])
end
local token = ARGV[12] .. ':' .. redis.call('HINCRBY', KEYS[1], 'fence', 1)
redis.call('SET', KEYS[2], token, 'PX', ARGV[9])
local history = redis.call('LRANGE', KEYS[3], -tonumber(ARGV[10]), -1)
redis.call('RPUSH', KEYS[3], ARGV[6])
redis.call('HINCRBY', KEYS[1], 'message_count', 1)
redis.call('HSET', KEYS[1], 'last_message_at', ARGV[5])
redis.call('ZADD', KEYS[5], ARGV[5], ARGV[1])
local meta = redis.call('HMGET', KEYS[1], 'id', 'source', 'taken_over_by')
return {'started', meta[1], isNew, meta[2], meta[3], token, history}
`);

// KEYS: meta, lease, messages, discarded, conversation index.
// ARGV: token, reply JSON ('' when the turn ends without one), now µs.
// The takeover check happens here, atomically with the append: the AI never answers a conversation
// that a human holds, whatever any process's memory says.
const END_TURN = new LuaScript(`
local outcome = 'stored'
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  outcome = 'lost-lease'
elseif ARGV[2] ~= '' and redis.call('HGET', KEYS[1], 'taken_over_by') ~= '' then
  outcome = 'discarded'
end
if ARGV[2] ~= '' then
  if outcome == 'stored' then
    redis.call('RPUSH', KEYS[3], ARGV[2])
    redis.call('HINCRBY', KEYS[1], 'message_count', 1)
    redis.call('HSET', KEYS[1], 'last_message_at', ARGV[3])
    redis.call('ZADD', KEYS[5], ARGV[3], redis.call('HGET', KEYS[1], 'session_id'))
  else
    redis.call('RPUSH', KEYS[4], ARGV[2])
  end
end
if outcome ~= 'lost-lease' then redis.call('DEL', KEYS[2]) end
return outcome
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

// KEYS: meta. ARGV: now µs. Returns 'missing', {'already', at} or {'escalated', at, message_count}.
const ESCALATE = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local at = redis.call('HGET', KEYS[1], 'escalated_at')
if at ~= '' then return {'already', at} end
redis.call('HSET', KEYS[1], 'escalated_at', ARGV[1])
return {'escalated', ARGV[1], redis.call('HGET', KEYS[1], 'message_count')}
`);

/** The outcome of an escalation request. */
export type EscalationResult =
  | { first: true; escalatedAt: string; messageCount: number; conversation: ConversationView }
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

  constructor(redis: RedisClient, keys: RedisKeys, clock: Clock) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
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
    const reply = (await BEGIN_TURN.run(
      this.redis,
      [
        this.keys.conversation(chatbotId, sessionId),
        this.keys.conversationLease(chatbotId, sessionId),
        this.keys.conversationMessages(chatbotId, sessionId),
        this.keys.conversationRateWindow(chatbotId, sessionId),
        this.keys.conversationsOf(chatbotId),
        this.keys.conversationIds(chatbotId),
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
      ],
    )) as [string, ...unknown[]];
    if (reply[0] === 'leased') return { kind: 'leased' };
    if (reply[0] === 'rate-limited') return { kind: 'rate-limited' };
    const [, id, isNew, source, takenOverBy, token, history] = reply as [
      string,
      string,
      number,
      string,
      string,
      string,
      string[],
    ];
    return {
      kind: 'started',
      conversationId: id,
      isNew: isNew === 1,
      source,
      takenOverBy: takenOverBy || null,
      token,
      history: history.map(parseMessage),
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
    reply: { role: MessageRole; content: string } | null,
  ): Promise<TurnEnd> {
    const now = this.clock.nowMicros();
    const json = reply ? JSON.stringify({ ...reply, at: now } satisfies RawMessage) : '';
    return (await END_TURN.run(
      this.redis,
      [
        this.keys.conversation(chatbotId, sessionId),
        this.keys.conversationLease(chatbotId, sessionId),
        this.keys.conversationMessages(chatbotId, sessionId),
        this.keys.conversationDiscarded(chatbotId, sessionId),
        this.keys.conversationsOf(chatbotId),
      ],
      [token, json, now],
    )) as TurnEnd;
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

  /** Flags the conversation as needing a human; only the first call is `first`. */
  async escalate(chatbotId: string, sessionId: string): Promise<EscalationResult> {
    const reply = await ESCALATE.run(
      this.redis,
      [this.keys.conversation(chatbotId, sessionId)],
      [this.clock.nowMicros()],
    );
    if (reply === 'missing') throw new NotFoundError('Conversation not found.');
    const [kind, at, count] = reply as [string, string, string?];
    const conversation = await this.get(chatbotId, sessionId);
    const escalatedAt = formatTimestamp(Number(at));
    return kind === 'escalated'
      ? { first: true, escalatedAt, messageCount: Number(count), conversation }
      : { first: false, escalatedAt, conversation };
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
