import type { Clock } from '../clock.ts';
import type { Delivery, DeliveryAttempt } from '../contract/webhook.ts';
import type {
  AttemptOutcome,
  AttemptRecord,
  AttemptVerdict,
  ClaimedDelivery,
  NewDelivery,
} from '../webhooks/delivery.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { formatTimestamp } from '../timestamp.ts';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import { LEGACY_DELIVERY_SHARD, type RedisKeys } from '../redis/redis-keys.ts';

// Deliveries of one order key (one webhook, one conversation or lead) wait for their first attempt in
// a sorted set `order:<key>`, in the order they were written; only its first may be claimed for a
// first attempt, on whichever gateway, so while receivers answer they receive them in that order. A
// first attempt that fails does not hold the next up: its retries come later, as they would anyway.
// The next one is due at once when the attempt before it is recorded.
const DELIVERY_ORDER = `
local function order_key(prefix, key)
  return prefix .. 'order:' .. key
end
-- Whether a delivery must wait for an earlier one of its order key; earlier ones that are no longer
-- pending (gone, which only an operator's hand does) are dropped and hold nothing up.
local function waits_its_turn(prefix, key, id)
  local order = order_key(prefix, key)
  local rank = redis.call('ZRANK', order, id)
  if not rank or rank == 0 then return false end
  for _, earlier in ipairs(redis.call('ZRANGE', order, 0, rank - 1)) do
    if redis.call('HGET', prefix .. 'delivery:' .. earlier, 'status') == 'pending' then return true end
    redis.call('ZREM', order, earlier)
  end
  return false
end
-- The delivery's first attempt is recorded: the next of its order key is due now.
local function first_attempt_done(prefix, key, id, due, now)
  local order = order_key(prefix, key)
  if redis.call('ZREM', order, id) == 0 then return end
  local next = redis.call('ZRANGE', order, 0, 0)[1]
  if not next then return end
  local at = redis.call('ZSCORE', due, next)
  if at and tonumber(at) > tonumber(now) then redis.call('ZADD', due, now, next) end
end`;

// The record, its place in the due queue and in its order key's line, and the log entry are written
// together: once this returns, the delivery exists and will be attempted, whatever happens to this
// process. A delivery id that exists already is left as it is (the same event emitted again). Returns
// 1 when written.
const ENQUEUE = new LuaScript<{
  keys: [due: string, webhookLog: string];
  args: [
    id: string,
    webhookId: string,
    chatbotId: string,
    event: string,
    body: string,
    nowMicros: number,
    maxAttempts: number,
    orderKey: string,
    logCutoffMicros: number,
    keyPrefix: string,
  ];
  reply: 0 | 1;
}>(`${DELIVERY_ORDER}
local record = ARGV[10] .. 'delivery:' .. ARGV[1]
if redis.call('EXISTS', record) == 1 then return 0 end
redis.call('HSET', record, 'id', ARGV[1], 'webhook_id', ARGV[2], 'chatbot_id', ARGV[3], 'event', ARGV[4],
  'body', ARGV[5], 'status', 'pending', 'attempts', 0, 'max_attempts', ARGV[7], 'next_at', ARGV[6],
  'created_at', ARGV[6], 'order_key', ARGV[8], 'claim', '')
redis.call('ZADD', KEYS[1], ARGV[6], ARGV[1])
local order = order_key(ARGV[10], ARGV[8])
local last = redis.call('ZRANGE', order, -1, -1, 'WITHSCORES')[2]
redis.call('ZADD', order, last and tonumber(last) + 1 or 1, ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[9])
return 1
`);

// Claiming moves a delivery's due time to the end of the claim: if this process dies mid-attempt, the
// delivery becomes due again and is retried under the same id. A delivery waiting for an earlier one
// of its order key is not claimed; it is looked at again at the end of a claim (the earlier one's
// recorded attempt makes it due sooner).
const CLAIM = new LuaScript<{
  keys: [due: string];
  args: [nowMicros: number, limit: number, claimUntilMicros: number, token: string, keyPrefix: string];
  reply: Array<
    [id: string, webhookId: string, chatbotId: string, event: string, body: string, attempt: number, orderKey: string]
  >;
}>(`${DELIVERY_ORDER}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  local record = ARGV[5] .. 'delivery:' .. id
  local f = redis.call('HMGET', record, 'webhook_id', 'chatbot_id', 'event', 'body', 'attempts', 'status', 'order_key')
  if not f[1] or f[6] ~= 'pending' then
    redis.call('ZREM', KEYS[1], id)
  elseif f[7] and waits_its_turn(ARGV[5], f[7], id) then
    redis.call('ZADD', KEYS[1], ARGV[3], id)
  else
    redis.call('ZADD', KEYS[1], ARGV[3], id)
    redis.call('HSET', record, 'claim', ARGV[4])
    table.insert(out, {id, f[1], f[2], f[3], f[4], tonumber(f[5]) + 1, f[7]})
  end
end
return out
`);

// Records a batch of attempts in one round trip; each is skipped if its claim was lost meanwhile.
const COMPLETE = new LuaScript<{
  keys: [due: string];
  args: [
    keyPrefix: string,
    retentionSeconds: number,
    nowMicros: number,
    /** Five per attempt: id, token, attempt JSON, verdict, next µs. */
    ...attempts: Array<string | number>,
  ];
  reply: AttemptOutcome[];
}>(`${DELIVERY_ORDER}
local out = {}
for i = 4, #ARGV, 5 do
  local id = ARGV[i]
  local record = ARGV[1] .. 'delivery:' .. id
  local attemptsKey = record .. ':attempts'
  if redis.call('HGET', record, 'claim') ~= ARGV[i + 1] then
    table.insert(out, 'stale')
  else
    redis.call('RPUSH', attemptsKey, ARGV[i + 2])
    local key = redis.call('HGET', record, 'order_key')
    if key then first_attempt_done(ARGV[1], key, id, KEYS[1], ARGV[3]) end
    local attempts = redis.call('HINCRBY', record, 'attempts', 1)
    local verdict = ARGV[i + 3]
    if verdict == 'retry' and attempts >= tonumber(redis.call('HGET', record, 'max_attempts')) then verdict = 'failed' end
    if verdict == 'retry' then
      redis.call('HSET', record, 'next_at', ARGV[i + 4], 'claim', '')
      redis.call('ZADD', KEYS[1], ARGV[i + 4], id)
    else
      redis.call('HSET', record, 'status', verdict, 'next_at', '', 'claim', '')
      redis.call('ZREM', KEYS[1], id)
      redis.call('EXPIRE', record, ARGV[2])
      redis.call('EXPIRE', attemptsKey, ARGV[2])
    end
    table.insert(out, verdict)
  end
end
return out
`);

// Gives a claim back without an attempt.
const RELEASE = new LuaScript<{
  keys: [due: string, record: string];
  args: [id: string, token: string, dueMicros: number];
  reply: 0 | 1;
}>(`
if redis.call('HGET', KEYS[2], 'claim') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[2], 'claim', '')
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
`);

// A finished delivery gets one more attempt.
const REDELIVER = new LuaScript<{
  keys: [due: string, record: string, attempts: string];
  args: [id: string, nowMicros: number];
  reply: 'missing' | 'pending' | 'ok';
}>(`
local status = redis.call('HGET', KEYS[2], 'status')
if not status then return 'missing' end
if status == 'pending' then return 'pending' end
local attempts = tonumber(redis.call('HGET', KEYS[2], 'attempts'))
redis.call('HSET', KEYS[2], 'status', 'pending', 'max_attempts', attempts + 1, 'next_at', ARGV[2], 'claim', '')
redis.call('PERSIST', KEYS[2])
redis.call('PERSIST', KEYS[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 'ok'
`);

/** Where a claim looks: these shards first, then (with `rest`) all the others. */
export interface ClaimScope {
  shards?: string[];
  rest?: boolean;
}

/**
 * The durable outbox of webhook deliveries: enqueue, claim with a lease, record each attempt and
 * reschedule or finish, redeliver, and the per-webhook delivery log. Deliveries are spread over the
 * shards of RedisKeys.deliveryShard by chatbot; each script works inside one shard.
 */
export class DeliveryStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  private readonly retentionSeconds: number;
  /** Where the next claim over every shard starts, so that no shard waits behind the others. */
  private nextShard = 0;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>, retentionDays: number) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.retentionSeconds = retentionDays * 24 * 3600;
  }

  /** Writes a pending delivery, due now; returns its id. */
  async enqueue(input: NewDelivery): Promise<string> {
    const id = input.id;
    const shard = this.keys.deliveryShard(input.chatbotId);
    const now = this.clock.nowMicros();
    await ENQUEUE.run(
      this.redis,
      [this.keys.deliveriesDue(shard), this.keys.deliveryLog(shard, input.webhookId)],
      [
        id,
        input.webhookId,
        input.chatbotId,
        input.event,
        input.body,
        now,
        input.maxAttempts,
        input.orderKey,
        now - this.retentionSeconds * 1_000_000,
        this.keys.deliveryPrefix(shard),
      ],
    );
    return id;
  }

  /** The shard a chatbot's deliveries are written to. */
  shardFor(chatbotId: string): string {
    return this.keys.deliveryShard(chatbotId);
  }

  /**
   * Claims up to `limit` due deliveries for `claimMs`, one shard after another until the limit: the
   * scope's shards first, then (with `rest`) every other shard, starting one further each time so
   * that none waits behind the others.
   */
  async claim(
    limit: number,
    claimMs: number,
    token: string,
    scope: ClaimScope = { rest: true },
  ): Promise<ClaimedDelivery[]> {
    const first = scope.shards ?? [];
    const order = [...first];
    if (scope.rest) {
      const all = this.keys.deliveryShards();
      const start = this.nextShard;
      this.nextShard = (start + 1) % all.length;
      for (const shard of [...all.slice(start), ...all.slice(0, start)]) if (!first.includes(shard)) order.push(shard);
    }
    const claimed: ClaimedDelivery[] = [];
    for (const shard of order) {
      if (claimed.length >= limit) break;
      claimed.push(...(await this.claimFrom(shard, limit - claimed.length, claimMs, token)));
    }
    return claimed;
  }

  private async claimFrom(shard: string, limit: number, claimMs: number, token: string): Promise<ClaimedDelivery[]> {
    const now = this.clock.nowMicros();
    const rows = await CLAIM.run(
      this.redis,
      [this.keys.deliveriesDue(shard)],
      [now, limit, now + claimMs * 1000, token, this.keys.deliveryPrefix(shard)],
    );
    return rows.map(([id, webhookId, chatbotId, event, body, attempt, orderKey]) => ({
      id,
      webhookId,
      chatbotId,
      event,
      body,
      attempt,
      token,
      orderKey,
      shard,
    }));
  }

  /**
   * Records attempts (one round trip for the whole batch); returns what became of each delivery, or
   * 'stale' where the claim was lost.
   */
  async complete(
    attempts: Array<{
      delivery: ClaimedDelivery;
      attempt: AttemptRecord;
      verdict: AttemptVerdict;
    }>,
  ): Promise<AttemptOutcome[]> {
    // One script per shard the batch touches, each answering for its attempts in their order.
    const byShard = new Map<string, number[]>();
    attempts.forEach(({ delivery }, i) => {
      const indexes = byShard.get(delivery.shard);
      if (indexes === undefined) byShard.set(delivery.shard, [i]);
      else indexes.push(i);
    });
    const outcomes: AttemptOutcome[] = new Array<AttemptOutcome>(attempts.length);
    const now = this.clock.nowMicros();
    await Promise.all(
      [...byShard].map(async ([shard, indexes]) => {
        const batch = indexes.flatMap((i) => {
          const { delivery, attempt, verdict } = attempts[i]!;
          const { atMicros, ...rest } = attempt;
          return [
            delivery.id,
            delivery.token,
            JSON.stringify({ ...rest, at: atMicros }),
            verdict.kind,
            verdict.kind === 'retry' ? verdict.atMicros : 0,
          ];
        });
        const replies = await COMPLETE.run(
          this.redis,
          [this.keys.deliveriesDue(shard)],
          [this.keys.deliveryPrefix(shard), this.retentionSeconds, now, ...batch],
        );
        indexes.forEach((i, n) => (outcomes[i] = replies[n]!));
      }),
    );
    return outcomes;
  }

  /** Gives a claimed delivery back, unattempted, due at `atMicros`. */
  async release(delivery: ClaimedDelivery, atMicros: number): Promise<void> {
    await RELEASE.run(
      this.redis,
      [this.keys.deliveriesDue(delivery.shard), this.keys.delivery(delivery.shard, delivery.id)],
      [delivery.id, delivery.token, atMicros],
    );
  }

  /** Gives a delivered or failed delivery one more attempt, now. */
  async redeliver(deliveryId: string): Promise<Delivery> {
    const shard = await this.shardOf(deliveryId);
    if (shard === undefined) throw new NotFoundError('Delivery not found.');
    const reply = await REDELIVER.run(
      this.redis,
      [
        this.keys.deliveriesDue(shard),
        this.keys.delivery(shard, deliveryId),
        this.keys.deliveryAttempts(shard, deliveryId),
      ],
      [deliveryId, this.clock.nowMicros()],
    );
    if (reply === 'missing') throw new NotFoundError('Delivery not found.');
    if (reply === 'pending') throw new ValidationError('Delivery is still pending.');
    return this.read(shard, deliveryId);
  }

  async get(deliveryId: string): Promise<Delivery> {
    const shard = await this.shardOf(deliveryId);
    if (shard === undefined) throw new NotFoundError('Delivery not found.');
    return this.read(shard, deliveryId);
  }

  private async read(shard: string, deliveryId: string): Promise<Delivery> {
    // One transaction, never the client-side cache: two separate reads could pair a fresh record with
    // a cached attempt list from before the attempt that finished it.
    const [record, attempts] = (await this.redis
      .multi()
      .hGetAll(this.keys.delivery(shard, deliveryId))
      .lRange(this.keys.deliveryAttempts(shard, deliveryId), 0, -1)
      .exec()) as unknown as [Record<string, string>, string[]];
    if (!record.id) throw new NotFoundError('Delivery not found.');
    return toView(record, attempts);
  }

  /**
   * The shard holding a delivery, asked of every shard at once (the id alone does not say: the
   * CLI's and the dashboard's redelivery name only the delivery).
   */
  private async shardOf(deliveryId: string): Promise<string | undefined> {
    const shards = this.keys.deliveryShards();
    const found = await Promise.all(shards.map((shard) => this.redis.exists(this.keys.delivery(shard, deliveryId))));
    return shards[found.findIndex((count) => count > 0)];
  }

  /**
   * The delivery log of a webhook, newest first, one page at a time: its chatbot's shard, merged with
   * what the outbox's tag before sharding still holds. An entry whose delivery expired (past
   * retention) is skipped; any other failure is an error, never a silently shorter log.
   */
  async log(webhookId: string, page: { offset?: number; limit?: number } = {}): Promise<Delivery[]> {
    const offset = page.offset ?? 0;
    const limit = Math.min(page.limit ?? 100, 1000);
    // The webhook's chatbot names its shard (WebhookStore writes this lookup with the webhook).
    const chatbotId = await this.redis.get(this.keys.webhookOwner(webhookId));
    const shards = chatbotId ? [this.keys.deliveryShard(chatbotId), LEGACY_DELIVERY_SHARD] : [LEGACY_DELIVERY_SHARD];
    const lists = await Promise.all(
      shards.map(async (shard) => {
        const key = this.keys.deliveryLog(shard, webhookId);
        const entries = await this.redis.zRangeWithScores(key, 0, offset + limit - 1, { REV: true });
        return entries.map((entry) => ({ shard, id: entry.value, score: entry.score }));
      }),
    );
    const newestFirst = lists.flat().sort((a, b) => b.score - a.score);
    const views = await Promise.all(
      newestFirst.slice(offset, offset + limit).map((entry) =>
        this.read(entry.shard, entry.id).catch((error: unknown) => {
          if (error instanceof NotFoundError) return undefined;
          throw error;
        }),
      ),
    );
    return views.filter((view): view is Delivery => view !== undefined);
  }

  /** The chatbot whose webhook a delivery belongs to (undefined when there is no such delivery). */
  async chatbotOf(deliveryId: string): Promise<string | undefined> {
    const shard = await this.shardOf(deliveryId);
    if (shard === undefined) return undefined;
    return (await this.redis.hGet(this.keys.delivery(shard, deliveryId), 'chatbot_id')) ?? undefined;
  }

  /** Deliveries waiting in the due queues (pending, including claimed ones). */
  async pendingCount(): Promise<number> {
    const counts = await Promise.all(
      this.keys.deliveryShards().map((shard) => this.redis.zCard(this.keys.deliveriesDue(shard))),
    );
    return counts.reduce((sum, count) => sum + count, 0);
  }
}

function toView(record: Record<string, string>, attempts: string[]): Delivery {
  return {
    id: record.id!,
    event: record.event!,
    status: record.status as Delivery['status'],
    next_attempt_at: record.next_at ? formatTimestamp(Number(record.next_at)) : null,
    attempts: attempts.map((json) => {
      const raw = JSON.parse(json) as Omit<DeliveryAttempt, 'at'> & { at: number };
      return {
        attempt: raw.attempt,
        at: formatTimestamp(raw.at),
        status_code: raw.status_code,
        error: raw.error,
        duration_ms: raw.duration_ms,
        response_body: raw.response_body,
      };
    }),
  };
}
