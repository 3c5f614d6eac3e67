import { LuaScript } from '../redis/lua-script.ts';

// The scripts of ErasureStore: each runs in the chatbot's hash slot ({b:<id>}), every key declared.

/** Every key a conversation has, in the order DELETE_CONVERSATION takes them. */
export type ConversationKeys = [
  meta: string,
  lease: string,
  messages: string,
  failures: string,
  feedback: string,
  unansweredMarks: string,
  discarded: string,
  rateWindow: string,
  conversationIndex: string,
  idIndex: string,
  widgetSession: string,
  previewSessions: string,
  previewSession: string,
  /** A WhatsApp Cloud API chat's customer-service window (its key names the visitor's number). */
  cloudWindow: string,
];

/** What DELETE_CONVERSATION did: nothing to delete, kept (active since the cutoff), or deleted. */
export type ConversationDeletion = ['missing'] | ['active'] | ['deleted', messages: number, existed: 0 | 1];

// Deletes a conversation with everything keyed by it, in one step: its record, lease, messages,
// failure reasons, ratings, unanswered-inbox marks, discarded replies, rate window, its entries in the
// chatbot's conversation index and conversation-id lookup, a widget session still handed out under
// it, and its place among the preview's sessions. With a cutoff (retention), it is deleted only if its
// last activity is before the cutoff and no turn holds it now: a conversation that moved since
// the sweep read the index is kept, atomically with its writes (the turn scripts move the index score
// as they append). Without one (an erasure request) it is deleted whatever it is doing: a turn in
// flight then finds its lease gone and writes nothing. The chatbot's monthly rating counts are
// aggregates without a conversation and stay.
export const DELETE_CONVERSATION = new LuaScript<{
  keys: ConversationKeys;
  args: [session: string, cutoffMicros: string];
  reply: ConversationDeletion;
}>(`
local meta, lease, messages, index, ids = KEYS[1], KEYS[2], KEYS[3], KEYS[9], KEYS[10]
local session, cutoff = ARGV[1], ARGV[2]
local score = redis.call('ZSCORE', index, session)
local existed = redis.call('EXISTS', meta)
if not score and existed == 0 and redis.call('EXISTS', messages) == 0 then return {'missing'} end
if cutoff ~= '' then
  local last = score or redis.call('HGET', meta, 'last_message_at') or redis.call('HGET', meta, 'created_at')
  if last and tonumber(last) >= tonumber(cutoff) then return {'active'} end
  if redis.call('EXISTS', lease) == 1 then return {'active'} end
end
local count = redis.call('LLEN', messages)
local id = redis.call('HGET', meta, 'id')
if id and redis.call('HGET', ids, id) == session then redis.call('HDEL', ids, id) end
redis.call('UNLINK', meta, lease, messages, KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[11], KEYS[14])
redis.call('ZREM', index, session)
redis.call('SREM', KEYS[12], session)
if redis.call('GET', KEYS[13]) == session then redis.call('DEL', KEYS[13]) end
return {'deleted', count, existed}
`);

// Deletes a lead: its record, its place in the chatbot's list and, when it is the session's lead, the
// session's pointer to it. With a cutoff (retention), only a lead captured before it. 1 when a
// lead was deleted.
export const DELETE_LEAD = new LuaScript<{
  keys: [lead: string, chatbotLeads: string, sessionLead: string];
  args: [leadId: string, cutoffMicros: string];
  reply: 0 | 1;
}>(`
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] ~= '' and score and tonumber(score) >= tonumber(ARGV[2]) then return 0 end
redis.call('UNLINK', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('DEL', KEYS[3]) end
return 1
`);

// The unanswered inbox's groups name the session of the latest conversation that asked them (to
// open its transcript). Groups naming one of the deleted sessions (ARGV) name none afterwards; their
// questions stay, without who asked them. The session is replaced in the stored JSON as it is, not
// re-encoded. Returns how many groups changed.
export const UNLINK_SESSIONS = new LuaScript<{
  keys: [groups: string];
  args: string[];
  reply: number;
}>(`
local deleted = {}
for _, session in ipairs(ARGV) do deleted[session] = true end
local changed = 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local group = cjson.decode(all[i + 1])
  if group.session and deleted[group.session] then
    local named = '"session":' .. cjson.encode(group.session)
    local at = string.find(all[i + 1], named, 1, true)
    if at then
      local json = string.sub(all[i + 1], 1, at - 1) .. '"session":""' .. string.sub(all[i + 1], at + #named)
      redis.call('HSET', KEYS[1], all[i], json)
      changed = changed + 1
    end
  end
end
return changed
`);
