import { randomBytes } from 'node:crypto';
import { NotFoundError } from '../../errors.ts';
import { ProcessLease } from '../../redis/process-lease.ts';
import type { RedisClient } from '../../redis/redis-client.ts';
import type { RedisKeys } from '../../redis/redis-keys.ts';

/** How a chatbot's Telegram bot receives updates. */
export type TelegramMode = 'webhook' | 'polling';

/** A chatbot's Telegram connection. The token is a credential: it is never logged or shown again. */
export interface TelegramConnection {
  chatbotId: string;
  token: string;
  mode: TelegramMode;
  /** Telegram sends it back in `X-Telegram-Bot-Api-Secret-Token` on every webhook call. */
  secretToken: string;
  /** The bot's own `getMe` answer, as Telegram gave it (grammY needs it to handle updates). */
  botInfo: Record<string, unknown>;
}

/** How long an update id is remembered (Telegram keeps unconfirmed updates for 24 hours). */
const UPDATE_MEMORY_SECONDS = 48 * 3600;

/** Per-chatbot Telegram connections, and the update ids already taken in. */
export class TelegramStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly lease: ProcessLease;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
    this.lease = new ProcessLease(redis);
  }

  /** Connects (or reconnects) a chatbot; a new secret token each time. */
  async connect(input: Omit<TelegramConnection, 'secretToken'>): Promise<TelegramConnection> {
    const connection = { ...input, secretToken: randomBytes(24).toString('base64url') };
    // Listed first, then written (two hash slots): a listed id without a connection is skipped.
    await this.redis.sAdd(this.keys.telegramBots(), input.chatbotId);
    await this.redis.hSet(this.keys.telegram(input.chatbotId), {
      token: connection.token,
      mode: connection.mode,
      secret_token: connection.secretToken,
      bot_info: JSON.stringify(connection.botInfo),
    });
    return connection;
  }

  async get(chatbotId: string): Promise<TelegramConnection> {
    const connection = await this.find(chatbotId);
    if (!connection) throw new NotFoundError('Telegram is not connected for this chatbot.');
    return connection;
  }

  async find(chatbotId: string): Promise<TelegramConnection | undefined> {
    const row = await this.redis.hGetAll(this.keys.telegram(chatbotId));
    if (!row.token) return undefined;
    return {
      chatbotId,
      token: row.token,
      mode: row.mode === 'polling' ? 'polling' : 'webhook',
      secretToken: row.secret_token ?? '',
      botInfo: JSON.parse(row.bot_info ?? '{}') as Record<string, unknown>,
    };
  }

  /** Every connected chatbot's connection. */
  async list(): Promise<TelegramConnection[]> {
    const ids = await this.redis.sMembers(this.keys.telegramBots());
    const found = await Promise.all(ids.map((id) => this.find(id)));
    return found.filter((connection): connection is TelegramConnection => connection !== undefined);
  }

  async disconnect(chatbotId: string): Promise<boolean> {
    const removed = await this.redis.del(this.keys.telegram(chatbotId));
    await this.redis.sRem(this.keys.telegramBots(), chatbotId);
    return removed === 1;
  }

  /** True the first time an update id is seen for the chatbot, in any process; false for a re-sent one. */
  async firstSight(chatbotId: string, updateId: number): Promise<boolean> {
    const set = await this.redis.set(this.keys.telegramUpdate(chatbotId, updateId), '1', {
      NX: true,
      EX: UPDATE_MEMORY_SECONDS,
    });
    return set === 'OK';
  }

  /**
   * Takes or renews the right to long-poll the chatbot's bot for `ttlMs` (Telegram allows one
   * getUpdates caller per bot); true while this `holder` has it.
   */
  async holdPoller(chatbotId: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.lease.hold(this.keys.telegramPoller(chatbotId), holder, ttlMs);
  }

  /** Lets go of the poller right if this holder has it. */
  async releasePoller(chatbotId: string, holder: string): Promise<void> {
    await this.lease.release(this.keys.telegramPoller(chatbotId), holder);
  }
}
