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

/**
 * Records one time a visitor question went unanswered, for one reason, in one step:
 * 1. the same visitor message seen before (another reason for it) joins the group it went to, if
 *    that is still open, and counts only the new reason;
 * 2. the same normalized text as an open group's joins it;
 * 3. a `target` group (the caller's nearest neighbour) joins it, if still open; else `retry`;
 * 4. otherwise a new group is created, unless an embedding was added or removed since the caller
 *    read them (`version`): then `retry`, so the caller matches against the new ones. `force` skips
 *    both retries (the caller's last attempt). Beyond `cap` open groups, the least recently asked
 *    one is dropped.
 */
export const RECORD = new LuaScript<{
  keys: [groups: string, open: string, texts: string, vectors: string, version: string, seen: string];
  args: [
    key: string,
    target: string,
    version: string,
    newId: string,
    question: string,
    reason: string,
    at: string,
    session: string,
    vector: string,
    cap: number,
    maxExamples: number,
    maxKeys: number,
    force: '0' | '1',
  ];
  reply: RecordReply;
}>(`${UNINDEX}
local groups, open, texts, vectors, version, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local key, target, seenVersion, newId, question, reason, at, session, vector =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local cap, maxExamples, maxKeys, force = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12]), ARGV[13]

local function openGroup(id)
  local raw = redis.call('HGET', groups, id)
  if not raw then return nil end
  local g = cjson.decode(raw)
  if g.status ~= 'open' then return nil end
  return g
end
local function save(g)
  redis.call('HSET', groups, g.id, cjson.encode(g))
  redis.call('ZADD', open, tonumber(g.last), g.id)
end

local occurrence = redis.call('HGET', seen, at)
if occurrence then
  local id, reasons = string.match(occurrence, '^(%S+) (.*)$')
  local g = openGroup(id)
  if g then
    if string.find(',' .. reasons .. ',', ',' .. reason .. ',', 1, true) then return {'duplicate', id} end
    g.reasons[reason] = (g.reasons[reason] or 0) + 1
    redis.call('HSET', groups, id, cjson.encode(g))
    redis.call('HSET', seen, at, id .. ' ' .. reasons .. ',' .. reason)
    return {'joined', id}
  end
end

local function join(g, newText)
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
      redis.call('HSET', texts, key, g.id)
    end
  end
  save(g)
  redis.call('HSET', seen, at, g.id .. ' ' .. reason)
  return {'joined', g.id}
end

local same = redis.call('HGET', texts, key)
if same then
  local g = openGroup(same)
  if g then return join(g, false) end
  redis.call('HDEL', texts, key)
end
if target ~= '' then
  local g = openGroup(target)
  if g then return join(g, true) end
  if force ~= '1' then return {'retry'} end
elseif force ~= '1' and seenVersion ~= '' and (redis.call('GET', version) or '0') ~= seenVersion then
  return {'retry'}
end

while redis.call('ZCARD', open) >= cap do
  local oldest = redis.call('ZRANGE', open, 0, 0)[1]
  local g = openGroup(oldest)
  if g then unindex(g, texts, vectors, open, version) else redis.call('ZREM', open, oldest) end
  redis.call('HDEL', groups, oldest)
end
local reasons = {}
reasons[reason] = 1
save({
  id = newId, question = question, key = key, count = 1, first = at, last = at, session = session,
  status = 'open', reasons = reasons, examples = {question}, keys = {key}
})
redis.call('HSET', texts, key, newId)
if vector ~= '' then
  redis.call('HSET', vectors, newId, vector)
  redis.call('INCR', version)
end
redis.call('HSET', seen, at, newId .. ' ' .. reason)
return {'created', newId}
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
