import { randomUUID } from 'node:crypto';
import { checkCannedText, checkShortcut, MAX_CANNED_REPLIES, type CannedReply } from '../agents/canned-reply.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, LimitError, NotFoundError } from '../errors.ts';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import type { SignalBus } from '../redis/signal-bus.ts';
import { formatTimestamp } from '../timestamp.ts';
import { isUuid } from '../uuid.ts';

/** A reply as kept in Redis: times in µs, as strings (Lua's cjson would round numbers this large). */
interface StoredReply {
  id: string;
  shortcut: string;
  text: string;
  created_at: string;
  updated_at: string;
}

// The cap and the shortcut's uniqueness are checked where the reply is written, so concurrent
// creates (two dashboards, the CLI) can pass neither.
const CREATE = new LuaScript<{
  keys: [user: string, replies: string, shortcuts: string];
  args: [id: string, shortcut: string, json: string, max: number];
  reply: 'no_user' | 'cap' | 'taken' | 'ok';
}>(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no_user' end
if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[4]) then return 'cap' end
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then return 'taken' end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
return 'ok'
`);

// Changes the fields given ('' leaves the shortcut, has_text '0' the text) on the stored record, so two
// edits of different fields both land; a new shortcut moves the reply's index entry.
const UPDATE = new LuaScript<{
  keys: [replies: string, shortcuts: string];
  args: [id: string, shortcut: string, hasText: '0' | '1', text: string, updatedAt: string];
  /** `missing`, `taken`, or the changed record's JSON. */
  reply: string;
}>(`
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 'missing' end
local reply = cjson.decode(raw)
if ARGV[2] ~= '' and ARGV[2] ~= reply.shortcut then
  if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 'taken' end
  redis.call('HDEL', KEYS[2], reply.shortcut)
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
  reply.shortcut = ARGV[2]
end
if ARGV[3] == '1' then reply.text = ARGV[4] end
reply.updated_at = ARGV[5]
local encoded = cjson.encode(reply)
redis.call('HSET', KEYS[1], ARGV[1], encoded)
return encoded
`);

const DELETE = new LuaScript<{ keys: [replies: string, shortcuts: string]; args: [id: string]; reply: number }>(`
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local shortcut = cjson.decode(raw).shortcut
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('HGET', KEYS[2], shortcut) == ARGV[1] then redis.call('HDEL', KEYS[2], shortcut) end
return 1
`);

const NOT_FOUND = 'Canned reply not found.';

/**
 * An owner's canned replies (`{u:<user>}`: a hash of replies by id and one of ids by shortcut). Every
 * change is signalled, so agents' consoles on any gateway read them again.
 */
export class CannedReplyStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  private readonly signals: Pick<SignalBus, 'publish'>;

  constructor(
    redis: RedisClient,
    keys: RedisKeys,
    clock: Pick<Clock, 'nowMicros'>,
    signals: Pick<SignalBus, 'publish'>,
  ) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.signals = signals;
  }

  /** The owner's canned replies, ordered by shortcut. */
  async list(userId: string): Promise<CannedReply[]> {
    const rows = await this.redis.hVals(this.keys.cannedReplies(userId));
    return rows
      .map((row) => toView(JSON.parse(row) as StoredReply))
      .sort((a, b) => (a.shortcut < b.shortcut ? -1 : a.shortcut > b.shortcut ? 1 : 0));
  }

  /** One of the owner's replies; another owner's id, an unknown or a malformed one is not found. */
  async get(userId: string, id: unknown): Promise<CannedReply> {
    const replyId = idOf(id);
    const raw = await this.redis.hGet(this.keys.cannedReplies(userId), replyId);
    if (!raw) throw new NotFoundError(NOT_FOUND);
    return toView(JSON.parse(raw) as StoredReply);
  }

  async create(userId: string, input: { shortcut: unknown; text: unknown }): Promise<CannedReply> {
    const shortcut = checkShortcut(input.shortcut);
    const text = checkCannedText(input.text);
    const now = String(this.clock.nowMicros());
    const stored: StoredReply = { id: randomUUID(), shortcut, text, created_at: now, updated_at: now };
    const outcome = await CREATE.run(
      this.redis,
      [this.keys.user(userId), this.keys.cannedReplies(userId), this.keys.cannedShortcuts(userId)],
      [stored.id, shortcut, JSON.stringify(stored), MAX_CANNED_REPLIES],
    );
    if (outcome === 'no_user') throw new NotFoundError('User not found.');
    if (outcome === 'cap') throw new LimitError(`Maximum ${MAX_CANNED_REPLIES} canned replies allowed.`);
    if (outcome === 'taken') throw taken(shortcut);
    await this.changed(userId);
    return toView(stored);
  }

  /** Changes the shortcut, the text or both (a field left out, or `undefined`, stays). */
  async update(userId: string, id: unknown, input: { shortcut?: unknown; text?: unknown }): Promise<CannedReply> {
    const replyId = idOf(id);
    const shortcut = input.shortcut === undefined ? '' : checkShortcut(input.shortcut);
    const text = input.text === undefined ? undefined : checkCannedText(input.text);
    const outcome = await UPDATE.run(
      this.redis,
      [this.keys.cannedReplies(userId), this.keys.cannedShortcuts(userId)],
      [replyId, shortcut, text === undefined ? '0' : '1', text ?? '', String(this.clock.nowMicros())],
    );
    if (outcome === 'missing') throw new NotFoundError(NOT_FOUND);
    if (outcome === 'taken') throw taken(shortcut);
    await this.changed(userId);
    return toView(JSON.parse(outcome) as StoredReply);
  }

  async delete(userId: string, id: unknown): Promise<void> {
    const replyId = idOf(id);
    const deleted = await DELETE.run(
      this.redis,
      [this.keys.cannedReplies(userId), this.keys.cannedShortcuts(userId)],
      [replyId],
    );
    if (deleted !== 1) throw new NotFoundError(NOT_FOUND);
    await this.changed(userId);
  }

  private changed(userId: string): Promise<void> {
    return this.signals.publish({ kind: 'canned-replies', user_id: userId });
  }
}

function taken(shortcut: string): ConflictError {
  return new ConflictError(`A canned reply /${shortcut} already exists.`);
}

function idOf(id: unknown): string {
  if (typeof id !== 'string' || !isUuid(id)) throw new NotFoundError(NOT_FOUND);
  return id.toLowerCase();
}

function toView(stored: StoredReply): CannedReply {
  return {
    id: stored.id,
    shortcut: stored.shortcut,
    text: stored.text,
    created_at: formatTimestamp(Number(stored.created_at)),
    updated_at: formatTimestamp(Number(stored.updated_at)),
  };
}
