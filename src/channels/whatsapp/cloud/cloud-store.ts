import type { Clock } from '../../../clock.ts';
import type { SecretKeyring } from '../../../connections/secret-keyring.ts';
import type { DeliveryStatus } from '../../../contract/conversation.ts';
import { LuaScript } from '../../../redis/lua-script.ts';
import { readPastCache, type RedisClient } from '../../../redis/redis-client.ts';
import type { RedisKeys } from '../../../redis/redis-keys.ts';
import { INBOUND_MEMORY_SECONDS, SENT_MEMORY_SECONDS, SERVICE_WINDOW_MS } from './config.ts';

/** A chatbot's Cloud API connection, its secrets opened. Never logged, never shown whole. */
export interface CloudConnection {
  chatbotId: string;
  phoneNumberId: string;
  businessAccountId: string | null;
  /** The system user's access token. */
  token: string;
  /** The Meta app's secret: webhooks are signed with it. */
  appSecret: string;
  verifyToken: string;
  textOnlyNotice: string;
  displayPhoneNumber: string | null;
  verifiedName: string | null;
  /** µs. */
  connectedAt: number;
}

/** A reply's delivery as recorded: the status, when (µs), and a failure's code and meaning. */
export interface RecordedDelivery {
  status: DeliveryStatus;
  at: number;
  error_code?: number;
  error?: string;
}

// Takes a message id in once (SET NX, remembered while Meta may still retry it) and, the first time,
// moves the chat's window forward to the message's time (never back: Meta's retries and concurrent
// deliveries arrive in any order). Returns 1 the first time.
const TAKE_IN = new LuaScript<{
  keys: [inbound: string, window: string];
  args: [memorySeconds: number, atMs: number, messageId: string, windowTtlMs: number];
  reply: 0 | 1;
}>(`
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
local current = tonumber(redis.call('HGET', KEYS[2], 'at') or '0')
if tonumber(ARGV[2]) >= current then
  redis.call('HSET', KEYS[2], 'at', ARGV[2], 'message_id', ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
return 1
`);

// Records a status on a reply, forward only (sent → delivered → read), and `failed` as final: Meta's
// callbacks arrive in any order (a read may come before its delivered, or without it).
const RECORD = new LuaScript<{
  keys: [deliveries: string];
  args: [field: string, status: DeliveryStatus, json: string];
  reply: 0 | 1;
}>(`
local rank = { accepted = 0, sent = 1, delivered = 2, read = 3, failed = 4 }
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local was = cjson.decode(current).status
  if was == 'failed' or rank[was] >= rank[ARGV[2]] then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`);

/**
 * Per-chatbot Cloud API connections (the token and app secret sealed with the deployment's key, the
 * chatbot id and field name as associated data), the message ids taken in, each chat's
 * customer-service window, and the statuses of the replies sent.
 */
export class WhatsAppCloudStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  private readonly keyring: SecretKeyring;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>, keyring: SecretKeyring) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.keyring = keyring;
  }

  /** Stores a connection, replacing any earlier one of the chatbot. */
  async connect(connection: Omit<CloudConnection, 'connectedAt'>): Promise<CloudConnection> {
    const box = await this.keyring.box();
    const { chatbotId } = connection;
    const connectedAt = this.clock.nowMicros();
    const key = this.keys.whatsappCloud(chatbotId);
    await this.redis
      .multi()
      .del(key)
      .hSet(key, {
        phone_number_id: connection.phoneNumberId,
        business_account_id: connection.businessAccountId ?? '',
        token: box.seal(connection.token, `whatsapp-cloud:${chatbotId}:token`),
        app_secret: box.seal(connection.appSecret, `whatsapp-cloud:${chatbotId}:app_secret`),
        verify_token: connection.verifyToken,
        text_only_notice: connection.textOnlyNotice,
        display_phone_number: connection.displayPhoneNumber ?? '',
        verified_name: connection.verifiedName ?? '',
        connected_at: String(connectedAt),
      })
      .exec();
    return { ...connection, connectedAt };
  }

  /**
   * The chatbot's connection with its secrets opened, or undefined. Read past the client-side cache:
   * a webhook may come right after another process stored a new app secret.
   */
  async find(chatbotId: string): Promise<CloudConnection | undefined> {
    const row = await readPastCache<Record<string, string>>(this.redis, (multi) =>
      multi.hGetAll(this.keys.whatsappCloud(chatbotId)),
    );
    if (!row.phone_number_id) return undefined;
    const box = await this.keyring.box();
    return {
      chatbotId,
      phoneNumberId: row.phone_number_id,
      businessAccountId: row.business_account_id || null,
      token: box.open(row.token!, `whatsapp-cloud:${chatbotId}:token`),
      appSecret: box.open(row.app_secret!, `whatsapp-cloud:${chatbotId}:app_secret`),
      verifyToken: row.verify_token ?? '',
      textOnlyNotice: row.text_only_notice ?? '',
      displayPhoneNumber: row.display_phone_number || null,
      verifiedName: row.verified_name || null,
      connectedAt: Number(row.connected_at),
    };
  }

  /** Whether the chatbot's WhatsApp goes through the Cloud API (no secret opened). */
  async serves(chatbotId: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.whatsappCloud(chatbotId))) === 1;
  }

  /** Forgets the connection; false when there was none. */
  async disconnect(chatbotId: string): Promise<boolean> {
    return (await this.redis.del(this.keys.whatsappCloud(chatbotId))) === 1;
  }

  /**
   * True the first time a message id is seen for the chatbot, in any process; the chat's window is
   * then moved to the message's time (`atMs`) in the same script.
   */
  async takeIn(chatbotId: string, sessionId: string, messageId: string, atMs: number): Promise<boolean> {
    const taken = await TAKE_IN.run(
      this.redis,
      [this.keys.whatsappCloudInbound(chatbotId, messageId), this.keys.whatsappCloudWindow(chatbotId, sessionId)],
      // The window's record outlives the window twice over, so a late retry still finds it.
      [INBOUND_MEMORY_SECONDS, Math.round(atMs), messageId, 2 * SERVICE_WINDOW_MS],
    );
    return taken === 1;
  }

  /** When the chat's visitor last wrote (ms) and that message's id; undefined when never (or long ago). */
  async lastInbound(chatbotId: string, sessionId: string): Promise<{ atMs: number; messageId: string } | undefined> {
    const [at, messageId] = await this.redis.hmGet(this.keys.whatsappCloudWindow(chatbotId, sessionId), [
      'at',
      'message_id',
    ]);
    return at && messageId ? { atMs: Number(at), messageId } : undefined;
  }

  /** Remembers which stored reply a sent message (one part of it) belongs to, for its status callbacks. */
  async rememberSent(chatbotId: string, wamid: string, sessionId: string, createdAt: string): Promise<void> {
    await this.redis.set(
      this.keys.whatsappCloudSent(chatbotId, wamid),
      JSON.stringify({ session_id: sessionId, created_at: createdAt }),
      { EX: SENT_MEMORY_SECONDS },
    );
  }

  /** The stored reply a sent message belongs to; undefined for a notice, or one sent too long ago. */
  async sentReply(chatbotId: string, wamid: string): Promise<{ sessionId: string; createdAt: string } | undefined> {
    const json = await this.redis.get(this.keys.whatsappCloudSent(chatbotId, wamid));
    if (!json) return undefined;
    const { session_id, created_at } = JSON.parse(json) as { session_id: string; created_at: string };
    return { sessionId: session_id, createdAt: created_at };
  }

  /** Records how far a reply got (see RECORD); false when it already got as far, or failed. */
  async recordDelivery(
    chatbotId: string,
    sessionId: string,
    createdAt: string,
    delivery: RecordedDelivery,
  ): Promise<boolean> {
    const reply = await RECORD.run(
      this.redis,
      [this.keys.conversationDelivery(chatbotId, sessionId)],
      [createdAt, delivery.status, JSON.stringify(delivery)],
    );
    return reply === 1;
  }
}
