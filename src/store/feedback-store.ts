import type { Rating } from '../contract/conversation.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { parseTimestamp } from '../timestamp.ts';

/** Messages of a conversation the rating script reads at a time, newest first, looking for the reply. */
const PAGE = 100;

// A rating is kept only for an AI reply of the conversation (found by its time, newest first), once
// per reply; a change moves the month's count from the old rating to the new one, in one step. A
// reply newly rated down answers with the visitor message before it (its content and time), which
// goes to the unanswered inbox.
const RATE = new LuaScript<{
  keys: [messages: string, feedback: string, ratings: string];
  args: [atMicros: number, createdAt: string, rating: Rating | '', month: string, page: number];
  reply: 'ok' | 'missing' | ['down', content: string, atMicros: string];
}>(`
local found
local last = redis.call('LLEN', KEYS[1]) - 1
local page = tonumber(ARGV[5])
while last >= 0 and not found do
  local first = math.max(0, last - page + 1)
  local messages = redis.call('LRANGE', KEYS[1], first, last)
  for i = #messages, 1, -1 do
    local message = cjson.decode(messages[i])
    if message.role == 'assistant' and string.format('%.0f', message.at) == ARGV[1] then
      found = first + i - 1
      break
    end
  end
  last = first - 1
end
if not found then return 'missing' end
local before = redis.call('HGET', KEYS[2], ARGV[2])
if before == ARGV[3] or (not before and ARGV[3] == '') then return 'ok' end
if before then redis.call('HINCRBY', KEYS[3], ARGV[4] .. ':' .. before, -1) end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[2], ARGV[2])
else
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
  redis.call('HINCRBY', KEYS[3], ARGV[4] .. ':' .. ARGV[3], 1)
end
if ARGV[3] ~= 'down' then return 'ok' end
last = found - 1
while last >= 0 do
  local first = math.max(0, last - page + 1)
  local messages = redis.call('LRANGE', KEYS[1], first, last)
  for i = #messages, 1, -1 do
    local message = cjson.decode(messages[i])
    if message.role == 'user' then return {'down', message.content, string.format('%.0f', message.at)} end
  end
  last = first - 1
end
return 'ok'
`);

/** How many replies of a chatbot were rated up and down in a month. */
export interface RatingCounts {
  up: number;
  down: number;
}

/**
 * Visitors' ratings of AI replies: one per reply (changeable, or taken back), kept beside the
 * conversation by the reply's timestamp and joined onto it in transcripts; each chatbot counts its
 * replies rated up and down per month (the month the reply was written).
 */
export class FeedbackStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  /**
   * Rates the AI reply written at `createdAt` in the conversation (`null` takes a rating back). A
   * time that names no AI reply of it is `Message not found.` When the rating newly turned the reply
   * down, resolves with the visitor question it answered (its text and time, in microseconds).
   */
  async rate(
    chatbotId: string,
    sessionId: string,
    createdAt: string,
    rating: Rating | null,
  ): Promise<{ question: string; askedAt: number } | undefined> {
    const at = parseTimestamp(createdAt);
    if (at === undefined) throw new ValidationError('created_at must be the timestamp of a reply.');
    const result = await RATE.run(
      this.redis,
      [
        this.keys.conversationMessages(chatbotId, sessionId),
        this.keys.conversationFeedback(chatbotId, sessionId),
        this.keys.ratings(chatbotId),
      ],
      [at, createdAt, rating ?? '', createdAt.slice(0, 7), PAGE],
    );
    if (result === 'missing') throw new NotFoundError('Message not found.');
    return Array.isArray(result) ? { question: result[1], askedAt: Number(result[2]) } : undefined;
  }

  /** The conversation's ratings, by the rated reply's timestamp. */
  async of(chatbotId: string, sessionId: string): Promise<Record<string, Rating>> {
    return (await this.redis.hGetAll(this.keys.conversationFeedback(chatbotId, sessionId))) as Record<string, Rating>;
  }

  /** The chatbot's replies rated up and down in `month` (`YYYY-MM`). */
  async counts(chatbotId: string, month: string): Promise<RatingCounts> {
    const [up, down] = await this.redis.hmGet(this.keys.ratings(chatbotId), [`${month}:up`, `${month}:down`]);
    return { up: Number(up ?? 0), down: Number(down ?? 0) };
  }
}
