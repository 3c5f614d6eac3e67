import { SLIDING_WINDOW } from '../admission/sliding-window.ts';
import { LuaScript } from '../redis/lua-script.ts';
import type { ReplyFate } from './conversation-store.ts';
import { PENDING_ENTRIES } from './pending-event-store.ts';

// The conversation scripts of ConversationStore: each runs in the chatbot's hash slot ({b:<id>}).

/** The keys of the scripts that append an agent's message. */
export type AppendKeys = [meta: string, messages: string, conversationIndex: string];

/** What a script that needs a conversation held by a given agent (or by nobody else) found. */
export type HoldReply = 'missing' | 'ok' | ['held', holder: string];

// Publishes the signal of a message a script stored (ScriptSignal), when the caller passed one.
const ANNOUNCE = `
local function announce(channel, message)
  if channel ~= '' then redis.call('PUBLISH', channel, message) end
end`;

// The one definition of a new conversation record, shared by the scripts that may create one.
export const CREATE_CONVERSATION = `
local function create_conversation(meta, ids, id, chatbot, session, source, now)
  redis.call('HSET', meta, 'id', id, 'chatbot_id', chatbot, 'session_id', session, 'source', source,
    'created_at', now, 'escalated_at', '', 'taken_over_by', '', 'message_count', 0)
  redis.call('HSET', ids, id, session)
end`;

// The one definition of a message appended to a conversation: its list, count, last activity and place
// in the chatbot's conversation index. A caller that has read the count passes it (the new count is
// then written with the rest in one HSET), and may pass more field/value pairs to write with it.
export const APPEND_MESSAGE = `
local function append_message(meta, messages, index, message, now, session, count, fields)
  redis.call('RPUSH', messages, message)
  local written = {'last_message_at', now}
  if count then
    table.insert(written, 'message_count')
    table.insert(written, tonumber(count) + 1)
  else
    redis.call('HINCRBY', meta, 'message_count', 1)
  end
  for _, value in ipairs(fields or {}) do table.insert(written, value) end
  redis.call('HSET', meta, unpack(written))
  redis.call('ZADD', index, now, session or redis.call('HGET', meta, 'session_id'))
end`;

// One script: lease (fenced), conversation rate limit, find-or-create, takeover state, history, the
// user message appended and the pending entry of its events recorded, so a turn starts with one round
// trip and nothing half-written. A turn that records an entry also hands the caller overdue entries of
// the chatbot (left by a process that died before writing their deliveries), due again a grace period
// later; one that records none leaves them to the sweeper (its chatbot is not kept registered as busy,
// so it goes quiet), which saves busy chatbots without webhooks a command per turn.
// Returns {'leased'}, {'rate-limited'} or {'started', conversation id, 1 if new, source, holder,
// lease token, history (0: the one the caller holds), escalated at, the entry as recorded, overdue
// {id, entry} pairs, message count}.
// A lease of the calling process (its token starts with the process id) does not hold the turn off:
// a process begins a conversation's turn only when none of its own is in flight (its one actor per
// conversation runs one turn at a time), so that lease is one a turn could not release, Redis having
// gone away under it (the release failed, or the reply to this script was lost). Waiting for it to
// lapse would stall the conversation for a whole lease after every outage; its token is fenced off
// like any other.
export const BEGIN_TURN = new LuaScript<{
  keys: [
    meta: string,
    lease: string,
    messages: string,
    rateWindow: string,
    conversationIndex: string,
    idIndex: string,
    pendingEvents: string,
    pendingEventsDue: string,
  ];
  args: [
    session: string,
    newConversationId: string,
    source: string,
    chatbot: string,
    nowMicros: number,
    userMessageJson: string,
    rateLimit: number,
    windowMicros: number,
    leaseMs: number,
    historySize: number,
    nonce: string,
    processId: string,
    /** Empty: record no pending entry (no webhook listens for the turn's events). */
    pendingEntryId: string,
    entryDueMicros: number,
    /** 0: take none. */
    overdueToTake: number,
    /** The stored message's signal (ScriptSignal), published with it; both '' for none. */
    signalChannel: string,
    signalMessage: string,
    /**
     * The conversation id and message count of the history the caller holds ('' and 0 for none): when
     * they are still the conversation's, the history is not read.
     */
    heldConversationId: string,
    heldCount: number,
  ];
  reply:
    | ['leased']
    | ['rate-limited']
    | [
        'started',
        conversationId: string,
        isNew: 0 | 1,
        source: string,
        holder: string,
        leaseToken: string,
        /** 0: the caller's history is the conversation's. */
        history: string[] | 0,
        escalatedAt: string,
        entry: string,
        overdue: Array<[id: string, entry: string]>,
        /** The conversation's message count with this message. */
        count: number,
      ];
}>(
  `${CREATE_CONVERSATION}${APPEND_MESSAGE}${PENDING_ENTRIES}${ANNOUNCE}${SLIDING_WINDOW}
local meta = redis.call('HMGET', KEYS[1], 'id', 'source', 'taken_over_by', 'escalated_at', 'message_count', 'fence')
local fence = (tonumber(meta[6]) or 0) + 1
local token = ARGV[12] .. ':' .. fence
-- Taken if free, and who holds it read, in one command. A lease of this process is taken over.
local held = redis.call('SET', KEYS[2], token, 'PX', ARGV[9], 'NX', 'GET')
if held then
  if string.sub(held, 1, #ARGV[12] + 1) ~= ARGV[12] .. ':' then return {'leased'} end
  redis.call('SET', KEYS[2], token, 'PX', ARGV[9])
end
local now = server_now()
local window = tonumber(ARGV[8])
if window_used(KEYS[4], now, window) >= tonumber(ARGV[7]) then
  redis.call('DEL', KEYS[2])
  return {'rate-limited'}
end
window_add(KEYS[4], now, window, now .. ':' .. ARGV[11])
if not meta[1] then
  create_conversation(KEYS[1], KEYS[6], ARGV[2], ARGV[4], ARGV[1], ARGV[3], ARGV[5])
  meta = {ARGV[2], ARGV[3], '', '', '0', false}
end
-- New means no message yet: a conversation escalated before its first message starts with that message.
local isNew = 0
if meta[5] == '0' then isNew = 1 end
-- Read unless the conversation has none, or the caller holds them (same conversation, same count).
local history = {}
if meta[5] ~= '0' then
  if ARGV[18] ~= '' and ARGV[18] == meta[1] and ARGV[19] == meta[5] then
    history = 0
  else
    history = redis.call('LRANGE', KEYS[3], -tonumber(ARGV[10]), -1)
  end
end
append_message(KEYS[1], KEYS[3], KEYS[5], ARGV[6], ARGV[5], ARGV[1], meta[5], {'fence', fence, 'turn', token})
announce(ARGV[16], ARGV[17])
local entry = '{"kind":"turn","at":"' .. ARGV[5] .. '","conversation_id":' .. cjson.encode(meta[1]) ..
  ',"session_id":' .. cjson.encode(ARGV[1]) .. ',"source":' .. cjson.encode(meta[2]) ..
  ',"is_new":' .. isNew .. ',"message":' .. ARGV[6] .. '}'
local overdue = {}
if tonumber(ARGV[15]) > 0 then overdue = claim_overdue(KEYS[7], KEYS[8], ARGV[5], ARGV[15], ARGV[14]) end
-- No entry id: no webhook listens for a turn's events, so there is nothing to deliver later.
if ARGV[13] ~= '' then record_entry(KEYS[7], KEYS[8], ARGV[13], entry, ARGV[14]) end
return {'started', meta[1], isNew, meta[2], meta[3], token, history, meta[4], entry, overdue, tonumber(meta[5]) + 1}
`,
  { plain: true },
);

// The takeover check happens here, atomically with the append: the AI never answers a conversation
// that a human holds, whatever any process's memory says. Returns {outcome, consecutive fallback
// replies, message count before the reply}.
export const END_TURN = new LuaScript<{
  keys: [meta: string, lease: string, messages: string, discarded: string, conversationIndex: string];
  args: [
    token: string,
    /** '' when the turn ends without one. */
    replyJson: string,
    nowMicros: number,
    fallback: '1' | '0',
    /** '1': the reply is kept aside as discarded whoever holds the conversation (cut short by a takeover). */
    discard: '1' | '0',
    session: string,
    /** The stored reply's signal (ScriptSignal), published when it is stored; both '' for none. */
    signalChannel: string,
    signalMessage: string,
  ];
  /** `countBefore`: the conversation's message count before the reply ('' when it is gone). */
  reply: [outcome: ReplyFate, fallbackStreak: number, countBefore: string];
}>(
  `${APPEND_MESSAGE}${ANNOUNCE}
local outcome = 'stored'
local meta = redis.call('HMGET', KEYS[1], 'taken_over_by', 'message_count', 'fallback_streak', 'turn')
-- The conversation's last turn is this one while its token is the one BEGIN_TURN wrote beside the lease
-- (only BEGIN_TURN sets the lease, and it writes both): read with the rest, that costs no command of its
-- own, and the lease, if it is still there, is this turn's to delete. A turn whose lease lapsed while
-- no other turn began still stores its reply; an erased conversation has no token.
if meta[4] ~= ARGV[1] then
  outcome = 'lost-lease'
elseif ARGV[2] ~= '' and (ARGV[5] == '1' or meta[1] ~= '') then
  outcome = 'discarded'
end
local streak = 0
if ARGV[2] ~= '' then
  if outcome == 'stored' then
    if ARGV[4] == '1' then streak = (tonumber(meta[3]) or 0) + 1 end
    append_message(KEYS[1], KEYS[3], KEYS[5], ARGV[2], ARGV[3], ARGV[6], meta[2], {'fallback_streak', streak})
    announce(ARGV[7], ARGV[8])
  else
    redis.call('RPUSH', KEYS[4], ARGV[2])
  end
end
if outcome ~= 'lost-lease' then redis.call('DEL', KEYS[2]) end
return {outcome, streak, meta[2] or ''}
`,
  { plain: true },
);

export const RENEW_LEASE = new LuaScript<{
  keys: [lease: string];
  args: [token: string, leaseMs: number];
  reply: 0 | 1;
}>(
  `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`,
  { plain: true },
);

// Deletes the conversation's lease when this process holds it (its token starts with the process id).
// Called only while the process has no turn of the conversation in flight, for a lease a turn cut off
// by an outage could not release: until then it held every other process's turns off (see BEGIN_TURN).
export const RELEASE_OWN_LEASE = new LuaScript<{
  keys: [lease: string];
  args: [processId: string];
  reply: 0 | 1;
}>(
  `
local held = redis.call('GET', KEYS[1])
if not held or string.sub(held, 1, #ARGV[1] + 1) ~= ARGV[1] .. ':' then return 0 end
redis.call('DEL', KEYS[1])
return 1
`,
  { plain: true },
);

// The entry of a hold's event (`conversation.taken_over` or `.released`), recorded beside the change.
const HOLD_ENTRY = `
local function hold_entry(kind, meta, agent, at)
  local ids = redis.call('HMGET', meta, 'id', 'session_id')
  return '{"kind":"' .. kind .. '","at":"' .. at .. '","conversation_id":' .. cjson.encode(ids[1]) ..
    ',"session_id":' .. cjson.encode(ids[2]) .. ',"agent":' .. cjson.encode(agent) .. '}'
end`;

/** The keys of the takeover and release scripts. */
export type HoldKeys = [meta: string, pendingEvents: string, pendingEventsDue: string];

/** A takeover or release that changed who holds the conversation: the entry of its event as recorded. */
export type HoldChanged = ['changed', entry: string];

// A takeover by the agent already holding the conversation changes nothing and records nothing.
export const TAKE_OVER = new LuaScript<{
  keys: HoldKeys;
  args: [agent: string, nowMicros: number, pendingEntryId: string, entryDueMicros: number];
  reply: HoldReply | HoldChanged;
}>(`${PENDING_ENTRIES}${HOLD_ENTRY}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local holder = redis.call('HGET', KEYS[1], 'taken_over_by')
if holder == ARGV[1] then return 'ok' end
if holder ~= '' then return {'held', holder} end
redis.call('HSET', KEYS[1], 'taken_over_by', ARGV[1], 'taken_over_at', ARGV[2], 'human_served_at', ARGV[2])
local entry = hold_entry('taken_over', KEYS[1], ARGV[1], ARGV[2])
record_entry(KEYS[2], KEYS[3], ARGV[3], entry, ARGV[4])
return {'changed', entry}
`);

// An agent of '' releases whoever holds the conversation (the entry names the holder). Releasing a
// conversation nobody holds changes nothing and records nothing.
export const RELEASE = new LuaScript<{
  keys: HoldKeys;
  args: [agent: string, nowMicros: number, pendingEntryId: string, entryDueMicros: number];
  reply: HoldReply | HoldChanged;
}>(`${PENDING_ENTRIES}${HOLD_ENTRY}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local holder = redis.call('HGET', KEYS[1], 'taken_over_by')
if holder == '' then return 'ok' end
if ARGV[1] ~= '' and holder ~= ARGV[1] then return {'held', holder} end
redis.call('HSET', KEYS[1], 'taken_over_by', '', 'taken_over_at', '')
local entry = hold_entry('released', KEYS[1], holder, ARGV[2])
record_entry(KEYS[2], KEYS[3], ARGV[3], entry, ARGV[4])
return {'changed', entry}
`);

// A missing conversation is created (a visitor asking for a human before saying anything) unless the
// new id is ''. Returns 'missing', {'already', at, record} or {'escalated', at, message count, record,
// the entry as recorded}, the record as HGETALL gives it; the first escalation records the entry of its
// event.
export const ESCALATE = new LuaScript<{
  keys: [meta: string, conversationIndex: string, idIndex: string, pendingEvents: string, pendingEventsDue: string];
  args: [
    nowMicros: number,
    newConversationId: string,
    chatbot: string,
    session: string,
    source: string,
    pendingEntryId: string,
    entryDueMicros: number,
  ];
  reply:
    | 'missing'
    | ['already', at: string, record: string[]]
    | ['escalated', at: string, messageCount: string, record: string[], entry: string];
}>(`${CREATE_CONVERSATION}${PENDING_ENTRIES}
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[2] == '' then return 'missing' end
  create_conversation(KEYS[1], KEYS[3], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[1])
  redis.call('HSET', KEYS[1], 'last_message_at', ARGV[1])
  redis.call('ZADD', KEYS[2], ARGV[1], ARGV[4])
end
-- Every request, first or not, has the visitor waiting for a human (again), unless one is there.
if redis.call('HGET', KEYS[1], 'taken_over_by') == '' then
  redis.call('HSET', KEYS[1], 'human_requested_at', ARGV[1])
end
local at = redis.call('HGET', KEYS[1], 'escalated_at')
if at ~= '' then return {'already', at, redis.call('HGETALL', KEYS[1])} end
redis.call('HSET', KEYS[1], 'escalated_at', ARGV[1])
local meta = redis.call('HMGET', KEYS[1], 'id', 'session_id', 'message_count')
local entry = '{"kind":"escalated","at":"' .. ARGV[1] .. '","conversation_id":' .. cjson.encode(meta[1]) ..
  ',"session_id":' .. cjson.encode(meta[2]) .. ',"message_count":' .. meta[3] .. '}'
record_entry(KEYS[4], KEYS[5], ARGV[6], entry, ARGV[7])
return {'escalated', ARGV[1], meta[3], redis.call('HGETALL', KEYS[1]), entry}
`);

// An agent writes only into a conversation it holds; no lease is needed, since END_TURN discards the
// AI's reply to a held conversation.
export const APPEND_AGENT = new LuaScript<{
  keys: AppendKeys;
  args: [agent: string, messageJson: string, nowMicros: number];
  reply: HoldReply | 'not-held';
}>(`${APPEND_MESSAGE}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local holder = redis.call('HGET', KEYS[1], 'taken_over_by')
if holder == '' then return 'not-held' end
if holder ~= ARGV[1] then return {'held', holder} end
append_message(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3])
return 'ok'
`);

// The owner wrote from the messaging account itself (WhatsApp's linked phone): the conversation is
// taken over by `holder` unless someone already holds it (then with the entry of its
// `conversation.taken_over`), and the message is stored as an agent's. Returns 'missing' or {holder,
// 1 when this message took it over, the entry as recorded or ''}.
export const APPEND_OWNER = new LuaScript<{
  keys: [...AppendKeys, pendingEvents: string, pendingEventsDue: string];
  args: [holder: string, messageJson: string, nowMicros: number, pendingEntryId: string, entryDueMicros: number];
  reply: 'missing' | [holder: string, tookOver: 0 | 1, entry: string];
}>(`${APPEND_MESSAGE}${PENDING_ENTRIES}${HOLD_ENTRY}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local holder = redis.call('HGET', KEYS[1], 'taken_over_by')
local took = 0
local entry = ''
if holder == '' then
  holder = ARGV[1]
  took = 1
  redis.call('HSET', KEYS[1], 'taken_over_by', holder, 'taken_over_at', ARGV[3], 'human_served_at', ARGV[3])
  entry = hold_entry('taken_over', KEYS[1], holder, ARGV[3])
  record_entry(KEYS[4], KEYS[5], ARGV[4], entry, ARGV[5])
end
append_message(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3])
return {holder, took, entry}
`);
