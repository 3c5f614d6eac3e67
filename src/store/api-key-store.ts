import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { ApiKey, CreatedApiKey } from '../contract/api-key.ts';
import { checkDisplayName } from '../display-name.ts';
import { LimitError, NotFoundError } from '../errors.ts';
import { formatTimestamp } from '../timestamp.ts';
import { API_PLAN, MAX_ACTIVE_KEYS, type KeyOwner } from '../auth/api-key.ts';
import { apiKeyPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from '../auth/api-key-token.ts';
import { LuaScript } from '../redis/lua-script.ts';
import { plainConnection, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

// Counting and inserting in one script makes the cap exact under concurrent creates.
const CREATE = new LuaScript<{
  keys: [user: string, keyIndex: string, newKey: string];
  args: [id: string, name: string, prefix: string, hash: string, createdAt: number, max: number, plan: string];
  reply: 'no_user' | 'plan' | 'cap' | 'ok';
}>(`
local plan = redis.call('HGET', KEYS[1], 'plan')
if not plan then return 'no_user' end
if plan ~= ARGV[7] then return 'plan' end
local active = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local key = string.sub(KEYS[3], 1, #KEYS[3] - #ARGV[1]) .. id
  if redis.call('HGET', key, 'active') == '1' then active = active + 1 end
end
if active >= tonumber(ARGV[6]) then return 'cap' end
redis.call('HSET', KEYS[3], 'id', ARGV[1], 'name', ARGV[2], 'prefix', ARGV[3], 'hash', ARGV[4],
  'created_at', ARGV[5], 'last_used_at', '', 'active', '1')
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
return 'ok'
`);

// Returns the key's hash (its lookup entry is dropped next), or null when there is no such key.
const REVOKE = new LuaScript<{ keys: [key: string]; args: [revokedAt: number]; reply: string | null }>(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[1], 'active', '0', 'revoked_at', ARGV[1])
return redis.call('HGET', KEYS[1], 'hash')
`);

/** API keys: creation under the 5-key cap and the Scale-plan rule, listing, revocation, lookup. */
export class ApiKeyStore {
  private readonly redis: RedisClient;
  /** Where key records are read: the gate's script writes their `last_used_at` there (plainConnection). */
  private readonly records: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>) {
    this.redis = redis;
    this.records = plainConnection(redis);
    this.keys = keys;
    this.clock = clock;
  }

  async create(userId: string, rawName: string): Promise<CreatedApiKey> {
    const name = checkDisplayName(rawName);
    const key = generateApiKey();
    const hash = hashApiKey(key);
    const id = randomUUID();
    const createdAt = this.clock.nowMicros();
    // The lookup entry first: without its record it authenticates nothing, so a crash in between is
    // harmless, while a record without a lookup entry would count toward the cap for nothing.
    await this.redis.set(this.keys.apiKeyByHash(hash), `${userId}:${id}`);
    const outcome = await CREATE.run(
      this.redis,
      [this.keys.user(userId), this.keys.apiKeys(userId), this.keys.apiKey(userId, id)],
      [id, name, apiKeyPrefix(key), hash, createdAt, MAX_ACTIVE_KEYS, API_PLAN],
    );
    if (outcome !== 'ok') {
      await this.redis.del(this.keys.apiKeyByHash(hash));
      if (outcome === 'no_user') throw new NotFoundError('User not found.');
      if (outcome === 'plan') throw new LimitError('API access requires the Scale plan.');
      throw new LimitError('Maximum 5 active API keys allowed.');
    }
    return { id, name, prefix: apiKeyPrefix(key), key, created_at: formatTimestamp(createdAt) };
  }

  async list(userId: string): Promise<ApiKey[]> {
    if ((await this.redis.exists(this.keys.user(userId))) === 0) throw new NotFoundError('User not found.');
    const ids = await this.redis.zRange(this.keys.apiKeys(userId), 0, -1, { REV: true });
    const records = await Promise.all(ids.map((id) => this.records.hGetAll(this.keys.apiKey(userId, id))));
    return records.filter((r) => r.id).map(toView);
  }

  /**
   * Revokes a key: its record says so at once (the gate refuses it from then on), then its lookup
   * entry goes, so a revoked key is an unknown key to `lookup` and its 401 does the same work
   * (issue 18). A crash in between leaves an entry the gate drops on the key's next use.
   */
  async revoke(userId: string, keyId: string): Promise<ApiKey> {
    const record = this.keys.apiKey(userId, keyId);
    const hash = await REVOKE.run(this.redis, [record], [this.clock.nowMicros()]);
    if (typeof hash !== 'string') throw new NotFoundError('API key not found.');
    await this.redis.del(this.keys.apiKeyByHash(hash));
    return toView(await this.records.hGetAll(record));
  }

  /**
   * The owner of a well-formed key whose hash is on record; undefined otherwise. Unknown and revoked
   * keys take the same path: one read that finds nothing.
   */
  async lookup(token: string): Promise<KeyOwner | undefined> {
    if (!isWellFormedApiKey(token)) return undefined;
    const value = await this.redis.get(this.keys.apiKeyByHash(hashApiKey(token)));
    if (!value) return undefined;
    const [userId, keyId] = value.split(':') as [string, string];
    return { userId, keyId };
  }

  /** Drops the lookup entry of a key the gate found inactive (revoked before entries were dropped). */
  async forget(token: string): Promise<void> {
    await this.redis.del(this.keys.apiKeyByHash(hashApiKey(token)));
  }
}

function toView(fields: Record<string, string>): ApiKey {
  return {
    id: fields.id!,
    name: fields.name!,
    prefix: fields.prefix!,
    last_used_at: fields.last_used_at ? formatTimestamp(Number(fields.last_used_at)) : null,
    created_at: formatTimestamp(Number(fields.created_at)),
    active: fields.active === '1',
  };
}
