import { LuaScript } from '../redis/lua-script.ts';

// The unanswered inbox's scripts. A group is a JSON record in the chatbot's groups hash: id, question
// (the representative), key (its normalized text), count, first and last (microseconds, as strings:
// cjson keeps 14 significant digits of a number), session, status, reasons (reason → count),
// examples, keys (the normalized texts indexed to it), and once resolved, resolution, resolved and
// source. All keys are the chatbot's ({b:<id>}), declared.

// Shared by both scripts: takes an open group out of matching (its texts, its embedding, the open
// set) and counts the change, so a writer that matched against the old embeddings tries again.
const UNINDEX = `
local function unindex(g, texts, vectors, open, version)
  for _, k in ipairs(g.keys) do
    if redis.call('HGET', texts, k) == g.id then redis.call('HDEL', texts, k) end
  end
  redis.call('HDEL', vectors, g.id)
  redis.call('ZREM', open, g.id)
  redis.call('INCR', version)
end
`;

/** What recording a question did: joined or created a group, counted nothing new, or must match again. */
export type RecordReply = ['joined' | 'created' | 'duplicate', string] | ['retry'];

/** The values each occurrence adds to RECORD's arguments, in this order. */
export type RecordOccurrenceArgs = [
  seen: number,
  key: string,
  target: string,
  version: string,
  newId: string,
  question: string,
  reason: string,
  at: string,
  session: string,
  vector: string,
  force: '0' | '1',
];

/**
 * Records occurrences of unanswered visitor questions, each as if recorded alone, in order:
 * 1. the same visitor message seen before (another reason for it) joins the group it went to, if
 *    that is still open, and counts only the new reason;
 * 2. the same normalized text as an open group's joins it;
 * 3. a `target` group (the caller's nearest neighbour) joins it, if still open; else `retry`;
 * 4. otherwise a new group is created, unless an embedding was added or removed since the caller
 *    read them (`version`): then `retry`, so the caller matches against the new ones. `force` skips
 *    both retries (the caller's last attempt). Beyond `cap` open groups, the least recently asked
 *    one is dropped.
 * Replies one RecordReply per occurrence. `seen` is the index in KEYS of the occurrence's session's
 * hash of recorded messages (KEYS[6] on); `vector`, the question's embedding as stored, or `=<i>` for
 * the one in ARGV[i] (an earlier occurrence with the same key: the same text is sent once).
 *
 * A batch pays per group, not per occurrence: each group it touches is read and decoded once and
 * written once at the end (its record and its place in the open set), and a message not seen before
 * is marked with one HSETNX. Creating a group writes what is held first, as it reads the open set.
 */
export const RECORD = new LuaScript<{
  keys: [groups: string, open: string, texts: string, vectors: string, version: string, ...seen: string[]];
  args: [cap: number, maxExamples: number, maxKeys: number, ...occurrences: Array<string | number>];
  reply: RecordReply[];
}>(`${UNINDEX}
local groups, open, texts, vectors, version = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local cap, maxExamples, maxKeys = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])

-- The groups read (false: none), those changed since last written, in order; the text index read.
local held, dirty, changedOrder, textOf = {}, {}, {}, {}

local function openGroup(id)
  local g = held[id]
  if g == nil then
    local raw = redis.call('HGET', groups, id)
    g = raw and cjson.decode(raw) or false
    held[id] = g
  end
  if g and g.status == 'open' then return g end
  return nil
end
local function changed(g)
  if not dirty[g.id] then
    dirty[g.id] = true
    table.insert(changedOrder, g.id)
  end
end
local function flush()
  if #changedOrder == 0 then return end
  local records, places = {}, {}
  for _, id in ipairs(changedOrder) do
    local g = held[id]
    table.insert(records, id)
    table.insert(records, cjson.encode(g))
    table.insert(places, tonumber(g.last))
    table.insert(places, id)
  end
  redis.call('HSET', groups, unpack(records))
  redis.call('ZADD', open, unpack(places))
  dirty, changedOrder = {}, {}
end
local function textGroup(k)
  local id = textOf[k]
  if id == nil then
    id = redis.call('HGET', texts, k) or false
    textOf[k] = id
  end
  return id
end
local function indexText(k, id)
  redis.call('HSET', texts, k, id)
  textOf[k] = id
end

-- The message recorded before, for another reason or this one, in a group still open.
local function seenBefore(seen, at, reason)
  local occurrence = redis.call('HGET', seen, at)
  if not occurrence then return nil end
  local id, reasons = string.match(occurrence, '^(%S+) (.*)$')
  local g = openGroup(id)
  if not g then return nil end
  if string.find(',' .. reasons .. ',', ',' .. reason .. ',', 1, true) then return {'duplicate', id} end
  g.reasons[reason] = (g.reasons[reason] or 0) + 1
  changed(g)
  redis.call('HSET', seen, at, id .. ' ' .. reasons .. ',' .. reason)
  return {'joined', id}
end

local function record(seen, key, target, seenVersion, newId, question, reason, at, session, vector, force)
  -- Where the question goes if its message is new.
  local g, newText, retry = nil, false, false
  local same = textGroup(key)
  if same then
    g = openGroup(same)
    if not g then
      redis.call('HDEL', texts, key)
      textOf[key] = false
    end
  end
  if not g then
    if target ~= '' then
      g = openGroup(target)
      newText = true
      if not g and force ~= '1' then retry = true end
    elseif force ~= '1' and seenVersion ~= '' and (redis.call('GET', version) or '0') ~= seenVersion then
      retry = true
    end
  end
  if retry then return seenBefore(seen, at, reason) or {'retry'} end
  local mark = (g and g.id or newId) .. ' ' .. reason
  if redis.call('HSETNX', seen, at, mark) == 0 then
    local before = seenBefore(seen, at, reason)
    if before then return before end
    redis.call('HSET', seen, at, mark)
  end

  if g then
    g.count = g.count + 1
    g.reasons[reason] = (g.reasons[reason] or 0) + 1
    if tonumber(at) >= tonumber(g.last) then
      g.last = at
      g.session = session
    end
    if tonumber(at) < tonumber(g.first) then g.first = at end
    if newText then
      if #g.examples < maxExamples then table.insert(g.examples, question) end
      if #g.keys < maxKeys then
        table.insert(g.keys, key)
        indexText(key, g.id)
      end
    end
    changed(g)
    return {'joined', g.id}
  end

  flush()
  local dropped = false
  while redis.call('ZCARD', open) >= cap do
    local oldest = redis.call('ZRANGE', open, 0, 0)[1]
    local old = openGroup(oldest)
    if old then unindex(old, texts, vectors, open, version) else redis.call('ZREM', open, oldest) end
    redis.call('HDEL', groups, oldest)
    held[oldest] = false
    dropped = true
  end
  if dropped then textOf = {} end
  local reasons = {}
  reasons[reason] = 1
  local created = {
    id = newId, question = question, key = key, count = 1, first = at, last = at, session = session,
    status = 'open', reasons = reasons, examples = {question}, keys = {key}
  }
  held[newId] = created
  changed(created)
  indexText(key, newId)
  if string.sub(vector, 1, 1) == '=' then vector = ARGV[tonumber(string.sub(vector, 2))] end
  if vector ~= '' then
    redis.call('HSET', vectors, newId, vector)
    redis.call('INCR', version)
  end
  return {'created', newId}
end

local replies = {}
for i = 4, #ARGV, 11 do
  table.insert(replies, record(KEYS[tonumber(ARGV[i])], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4],
    ARGV[i + 5], ARGV[i + 6], ARGV[i + 7], ARGV[i + 8], ARGV[i + 9], ARGV[i + 10]))
end
flush()
return replies
`);

/** What resolving a group did: its record now, or why not. */
export type ResolveReply = ['resolved', string] | ['missing'] | ['answered'];

/**
 * Resolves a group: `answered` (with its source) or `dismissed`. An open or dismissed group can be
 * answered; an answered one is left as it is (`answered`); dismissing a resolved group changes
 * nothing. A group that leaves the open set leaves matching; beyond `cap` resolved groups, the
 * oldest resolved one is dropped.
 */
export const RESOLVE = new LuaScript<{
  keys: [groups: string, open: string, resolved: string, texts: string, vectors: string, version: string];
  args: [id: string, resolution: 'answered' | 'dismissed', source: string, now: string, cap: number];
  reply: ResolveReply;
}>(`${UNINDEX}
local groups, open, resolved, texts, vectors, version = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id, resolution, source, now, cap = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local raw = redis.call('HGET', groups, id)
if not raw then return {'missing'} end
local g = cjson.decode(raw)
if g.resolution == 'answered' then return {'answered'} end
if g.status == 'resolved' and resolution == 'dismissed' then return {'resolved', raw} end
if g.status == 'open' then unindex(g, texts, vectors, open, version) end
g.status = 'resolved'
g.resolution = resolution
g.resolved = now
if source ~= '' then g.source = source end
local encoded = cjson.encode(g)
redis.call('HSET', groups, id, encoded)
redis.call('ZADD', resolved, tonumber(now), id)
while redis.call('ZCARD', resolved) > cap do
  local oldest = redis.call('ZRANGE', resolved, 0, 0)[1]
  redis.call('ZREM', resolved, oldest)
  redis.call('HDEL', groups, oldest)
end
return {'resolved', encoded}
`);
