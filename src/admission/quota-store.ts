import type { Clock } from '../clock.ts';
import { LuaScript } from '../redis/lua-script.ts';
import { plainConnection, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

// Counting and comparing in one step makes the quota exact under any race; the day counter (the
// dashboard's chart) is counted in the same call, so it costs no extra round trip. The caller gives the
// limit of the account's plan, read through the client-side cache (see QuotaStore.consume).
// `count_message` returns 1 when counted, 0 when the month's quota is used up. A fragment, so that the
// API gate's script can count a REST chat's message in the same round trip (see RequestGate).
export const COUNT_MESSAGE = `
-- Counted first and given back when over the limit: a message within it costs no read. A counter gets
-- its lifetime when this function creates it (every counter is created here).
local function count_message(month, day, limit, month_ttl, day_ttl)
  local used = redis.call('INCR', month)
  if used == 1 then redis.call('EXPIRE', month, month_ttl) end
  if used > tonumber(limit) then
    redis.call('DECR', month)
    return 0
  end
  if redis.call('INCR', day) == 1 then redis.call('EXPIRE', day, day_ttl) end
  return 1
end
`;

/** What counting one message takes: the month's and the day's counters, the limit and their lifetimes. */
export interface MessageCount {
  keys: [monthCounter: string, dayCounter: string];
  args: [limit: number, monthTtlSeconds: number, dayTtlSeconds: number];
}

const CONSUME = new LuaScript<{ keys: MessageCount['keys']; args: MessageCount['args']; reply: 0 | 1 }>(
  `${COUNT_MESSAGE}
return count_message(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
`,
  { plain: true },
);

// Gives back one message when the turn it was counted for was refused later.
const REFUND = new LuaScript<{ keys: [monthCounter: string, dayCounter: string]; args: []; reply: 1 }>(
  `
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 1
`,
  { plain: true },
);

/** How long a month's counter is kept: past the end of its month. */
const MONTH_TTL_SECONDS = 40 * 24 * 3600;
/** How long a day's counter is kept: the dashboard charts the last 30 days. */
const DAY_TTL_SECONDS = 40 * 24 * 3600;

/** What the quota said about one user message. */
export type QuotaDecision = 'counted' | 'exhausted' | 'unknown-account';

/**
 * The monthly message quota per account: calendar months in UTC, counting `role=user` messages from
 * every channel, limits per plan from PLAN_QUOTAS.
 */
export class QuotaStore {
  private readonly redis: RedisClient;
  /** Where the counters are read: the scripts that count write them there (plainConnection). */
  private readonly counts: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  private readonly quotas: Record<string, number>;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>, quotas: Record<string, number>) {
    this.redis = redis;
    this.counts = plainConnection(redis);
    this.keys = keys;
    this.clock = clock;
    this.quotas = quotas;
  }

  /**
   * Counts one user message if the account's plan still allows one this month. The plan is read
   * through the client-side cache (it changes only when an operator changes it, and Redis then tells
   * every gateway's cache), so a message costs the script alone: a new plan's limit applies from the
   * next message a gateway counts after it heard of the change. Counting and comparing are one step in
   * Redis, so no more messages are counted than the limit, whatever runs at once.
   */
  async consume(userId: string): Promise<QuotaDecision> {
    const plan = await this.redis.hGet(this.keys.user(userId), 'plan');
    const count = plan === null ? undefined : this.counting(userId, plan);
    if (count === undefined) return 'unknown-account';
    return (await CONSUME.run(this.redis, count.keys, count.args)) === 1 ? 'counted' : 'exhausted';
  }

  /**
   * What a script needs to count one message of an account on `plan` with `COUNT_MESSAGE` (this UTC
   * month's and day's counters, the plan's limit); undefined for a plan PLAN_QUOTAS does not name.
   */
  counting(userId: string, plan: string): MessageCount | undefined {
    const limit = Object.hasOwn(this.quotas, plan) ? this.quotas[plan] : undefined;
    if (limit === undefined) return undefined;
    return { keys: this.counters(userId), args: [limit, MONTH_TTL_SECONDS, DAY_TTL_SECONDS] };
  }

  /** Gives back a message counted for a turn that was then refused. */
  async refund(userId: string): Promise<void> {
    await REFUND.run(this.redis, this.counters(userId), []);
  }

  /** Messages counted this month. */
  async used(userId: string): Promise<number> {
    const [month] = this.counters(userId);
    return Number((await this.counts.get(month)) ?? 0);
  }

  /** The plan's monthly limit (undefined for a plan PLAN_QUOTAS does not name). */
  limitOf(plan: string): number | undefined {
    return this.quotas[plan];
  }

  /**
   * Messages counted on each of the last `days` UTC days, oldest first, today last.
   */
  async daily(userId: string, days: number): Promise<Array<{ date: string; messages: number }>> {
    const today = Date.parse(this.today());
    const dates = Array.from({ length: days }, (_, i) =>
      new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10),
    );
    const counts = await this.counts.mGet(dates.map((date) => this.keys.quotaDay(userId, date)));
    return dates.map((date, i) => ({ date, messages: Number(counts[i] ?? 0) }));
  }

  private today(): string {
    return new Date(this.clock.nowMicros() / 1000).toISOString().slice(0, 10);
  }

  /** The account's counters of this UTC month and day, from one reading of the clock. */
  private counters(userId: string): [string, string] {
    const day = this.today();
    return [this.keys.quota(userId, day.slice(0, 7)), this.keys.quotaDay(userId, day)];
  }
}
