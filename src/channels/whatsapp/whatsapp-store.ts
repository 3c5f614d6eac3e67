import type { Clock } from '../../clock.ts';
import type { WhatsAppConnection, WhatsAppLinkState } from '../../contract/messaging-channels.ts';
import { NotFoundError } from '../../errors.ts';
import { formatTimestamp } from '../../timestamp.ts';
import { LuaScript } from '../../redis/lua-script.ts';
import { ProcessLease } from '../../redis/process-lease.ts';
import { readPastCache, type RedisClient } from '../../redis/redis-client.ts';
import type { RedisKeys } from '../../redis/redis-keys.ts';

// A connection goes to the CLI and the dashboard as it is stored.
export type { WhatsAppConnection };

/** How long a message id is remembered (WhatsApp re-delivers only recent messages). */
const MESSAGE_MEMORY_SECONDS = 48 * 3600;

// Changes a connection only while it exists (and is in the required state), so a late event of a
// socket never brings back a connection that was removed. Returns 1 when changed.
const UPDATE = new LuaScript<{
  keys: [record: string, creds: string, signalKeys: string];
  args: [requiredState: WhatsAppLinkState | '', forgetAuth: '1' | '0', ...fieldValuePairs: string[]];
  reply: 0 | 1;
}>(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 'state') ~= ARGV[1] then return 0 end
if ARGV[2] == '1' then redis.call('DEL', KEYS[2], KEYS[3]) end
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
return 1
`);

// Auth state is written only by the process that holds the socket's lease, and only while the
// connection exists: a socket that lost its lease (or whose connection was removed) never brings back
// creds or keys another process replaced or a disconnect deleted. Returns 1 when written.
const WRITE_AUTH = new LuaScript<{
  keys: [record: string, socketLease: string, creds: string, signalKeys: string];
  args: [
    holder: string,
    /** The creds JSON, '' to leave them. */
    creds: string,
    /** How many signal keys to write: that many field/value pairs follow, then the fields to delete. */
    sets: number,
    ...pairsThenRemovals: string[],
  ];
  reply: 0 | 1;
}>(`
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' then redis.call('SET', KEYS[3], ARGV[2]) end
local sets = tonumber(ARGV[3])
local pairs = {}
for i = 4, 3 + 2 * sets do pairs[#pairs + 1] = ARGV[i] end
if #pairs > 0 then redis.call('HSET', KEYS[4], unpack(pairs)) end
local removals = {}
for i = 4 + 2 * sets, #ARGV do removals[#removals + 1] = ARGV[i] end
if #removals > 0 then redis.call('HDEL', KEYS[4], unpack(removals)) end
return 1
`);

/** The auth state was not written: this process does not hold the socket, or the connection is gone. */
export class AuthWriteRefusedError extends Error {
  override name = 'AuthWriteRefusedError';
}

/**
 * Per-chatbot WhatsApp connections and the linked device's auth state (creds and signal keys,
 * serialized by the channel), plus the message ids already taken in and the socket's lease.
 */
export class WhatsAppStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  private readonly lease: ProcessLease;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.lease = new ProcessLease(redis);
  }

  /**
   * Starts linking anew: any earlier device's auth state is forgotten and the connection waits for
   * a QR scan, or for a pairing code on `phone`.
   */
  async requestLink(chatbotId: string, phone: string | null): Promise<WhatsAppConnection> {
    // Listed first, then written (two hash slots): a listed id without a connection is skipped.
    await this.redis.sAdd(this.keys.whatsappBots(), chatbotId);
    await this.redis
      .multi()
      .del([this.keys.whatsappCreds(chatbotId), this.keys.whatsappKeys(chatbotId), this.keys.whatsapp(chatbotId)])
      .hSet(this.keys.whatsapp(chatbotId), { ...this.blank('linking'), phone: phone ?? '' })
      .exec();
    return this.get(chatbotId);
  }

  async get(chatbotId: string): Promise<WhatsAppConnection> {
    const connection = await this.find(chatbotId);
    if (!connection) throw new NotFoundError('WhatsApp is not connected for this chatbot.');
    return connection;
  }

  async find(chatbotId: string): Promise<WhatsAppConnection | undefined> {
    // A process acts on a change signalled by another process (or written by itself a moment ago).
    const row = await readPastCache<Record<string, string>>(this.redis, (multi) =>
      multi.hGetAll(this.keys.whatsapp(chatbotId)),
    );
    if (!row.state) return undefined;
    return {
      chatbot_id: chatbotId,
      state: row.state as WhatsAppLinkState,
      phone: row.phone || null,
      jid: row.jid || null,
      qr: row.qr || null,
      pairing_code: row.pairing_code || null,
      reason: row.reason || null,
      updated_at: formatTimestamp(Number(row.updated_at)),
    };
  }

  /** Every chatbot's connection, in any state. */
  async list(): Promise<WhatsAppConnection[]> {
    const ids = await this.redis.sMembers(this.keys.whatsappBots());
    const found = await Promise.all(ids.map((id) => this.find(id)));
    return found.filter((connection) => connection !== undefined);
  }

  /** A new QR code, or the pairing code, for a connection still linking. */
  async linkProgress(chatbotId: string, code: { qr: string } | { pairingCode: string }): Promise<boolean> {
    const fields: Record<string, string> = 'qr' in code ? { qr: code.qr } : { pairing_code: code.pairingCode };
    return this.update(chatbotId, 'linking', false, fields);
  }

  /** The socket opened: the device is linked to `jid`. */
  async linked(chatbotId: string, jid: string): Promise<boolean> {
    return this.update(chatbotId, '', false, { ...this.blank('linked'), jid });
  }

  /** Logged out, refused, or never linked in time: the auth state is forgotten; relinking starts over. */
  async unlinked(chatbotId: string, reason: string): Promise<boolean> {
    return this.update(chatbotId, '', true, { ...this.blank('unlinked'), reason });
  }

  /** Removes the connection and its auth state; false when there was none. */
  async disconnect(chatbotId: string): Promise<boolean> {
    const [removed] = (await this.redis
      .multi()
      .del(this.keys.whatsapp(chatbotId))
      .del([this.keys.whatsappCreds(chatbotId), this.keys.whatsappKeys(chatbotId)])
      .exec()) as unknown as [number, number];
    await this.redis.sRem(this.keys.whatsappBots(), chatbotId);
    return removed === 1;
  }

  /** True the first time a message id is seen for the chatbot, in any process. */
  async firstSight(chatbotId: string, messageId: string): Promise<boolean> {
    const set = await this.redis.set(this.keys.whatsappMessage(chatbotId, messageId), '1', {
      NX: true,
      EX: MESSAGE_MEMORY_SECONDS,
    });
    return set === 'OK';
  }

  /**
   * The serialized creds, or null before the first save. Auth state is read in transactions, never
   * from the client-side cache, which could answer with a value from before this process's last write.
   */
  async readCreds(chatbotId: string): Promise<string | null> {
    return readPastCache<string | null>(this.redis, (multi) => multi.get(this.keys.whatsappCreds(chatbotId)));
  }

  /** Writes the creds, as the socket lease's `holder` (see WRITE_AUTH). */
  async writeCreds(chatbotId: string, holder: string, json: string): Promise<void> {
    await this.writeAuth(chatbotId, holder, json, {}, []);
  }

  /** Serialized signal keys by field (`<type>-<id>`), null where there is none. */
  async readKeys(chatbotId: string, fields: string[]): Promise<Array<string | null>> {
    if (fields.length === 0) return [];
    return readPastCache<Array<string | null>>(this.redis, (multi) =>
      multi.hmGet(this.keys.whatsappKeys(chatbotId), fields),
    );
  }

  /**
   * Writes and deletes signal keys in one script (a key update is never half applied), as the socket
   * lease's `holder`.
   */
  async writeKeys(chatbotId: string, holder: string, set: Record<string, string>, remove: string[]): Promise<void> {
    await this.writeAuth(chatbotId, holder, '', set, remove);
  }

  private async writeAuth(
    chatbotId: string,
    holder: string,
    creds: string,
    set: Record<string, string>,
    remove: string[],
  ): Promise<void> {
    const entries = Object.entries(set);
    const written = await WRITE_AUTH.run(
      this.redis,
      [
        this.keys.whatsapp(chatbotId),
        this.keys.whatsappSocket(chatbotId),
        this.keys.whatsappCreds(chatbotId),
        this.keys.whatsappKeys(chatbotId),
      ],
      [holder, creds, entries.length, ...entries.flat(), ...remove],
    );
    if (written !== 1)
      throw new AuthWriteRefusedError(`WhatsApp auth state of chatbot ${chatbotId} not written: not the socket holder`);
  }

  /** Takes or renews the right to run the chatbot's WhatsApp socket. */
  holdSocket(chatbotId: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.lease.hold(this.keys.whatsappSocket(chatbotId), holder, ttlMs);
  }

  releaseSocket(chatbotId: string, holder: string): Promise<void> {
    return this.lease.release(this.keys.whatsappSocket(chatbotId), holder);
  }

  /** Whether some process runs the chatbot's socket now. */
  socketRunning(chatbotId: string): Promise<boolean> {
    return this.lease.held(this.keys.whatsappSocket(chatbotId));
  }

  private blank(state: WhatsAppLinkState): Record<string, string> {
    return { state, qr: '', pairing_code: '', reason: '', updated_at: String(this.clock.nowMicros()) };
  }

  private async update(
    chatbotId: string,
    requiredState: WhatsAppLinkState | '',
    forgetAuth: boolean,
    fields: Record<string, string>,
  ): Promise<boolean> {
    const pairs = Object.entries({ ...fields, updated_at: String(this.clock.nowMicros()) }).flat();
    const reply = await UPDATE.run(
      this.redis,
      [this.keys.whatsapp(chatbotId), this.keys.whatsappCreds(chatbotId), this.keys.whatsappKeys(chatbotId)],
      [requiredState, forgetAuth ? '1' : '0', ...pairs],
    );
    return reply === 1;
  }
}
