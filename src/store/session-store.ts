import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { NotFoundError } from '../errors.ts';
import { LuaScript } from '../redis/lua-script.ts';
import { newOwnerToken, parseOwnerToken } from '../auth/owner-token.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/** How long dashboard sessions last: unused for `idleMs`, or `maxAgeMs` after sign-in, they end. */
export interface SessionLifetime {
  idleMs: number;
  maxAgeMs: number;
}

/** A new session: the cookie value (shown to the browser only) and its CSRF token. */
export interface NewSession {
  token: string;
  csrfToken: string;
}

/** A valid session. `id` is the SHA-256 of its secret: what Redis knows it by. */
export interface DashboardSession {
  id: string;
  userId: string;
  csrfToken: string;
}

type CreateKeys = [session: string, sessions: string, user: string];
type CreateArgs = [
  id: string,
  csrf: string,
  nowMicros: number,
  endsMicros: number,
  idleMs: number,
  sessionPrefix: string,
];

// Sessions that expired meanwhile are dropped from the owner's set, so it only holds live ones. With
// the password key and the hash the session is opened with: a password changed since it was checked
// (a sign-in waits for its turn at scrypt) opens nothing, the change has just ended every session.
// Returns 1, 0 when there is no such user, -1 for a changed password.
const CREATE = new LuaScript<{
  keys: CreateKeys | [...CreateKeys, password: string];
  args: CreateArgs | [...CreateArgs, passwordHash: string];
  reply: -1 | 0 | 1;
}>(`
if redis.call('EXISTS', KEYS[3]) == 0 then return 0 end
if KEYS[4] and redis.call('GET', KEYS[4]) ~= ARGV[7] then return -1 end
for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if redis.call('EXISTS', ARGV[6] .. id) == 0 then redis.call('SREM', KEYS[2], id) end
end
redis.call('HSET', KEYS[1], 'csrf', ARGV[2], 'created_at', ARGV[3], 'ends_at', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
`);

// Each use of a session keeps it alive for another idle period. Returns its CSRF token, or null when
// it ended.
const TOUCH = new LuaScript<{
  keys: [session: string];
  args: [nowMicros: number, idleMs: number];
  reply: string | null;
}>(`
local f = redis.call('HMGET', KEYS[1], 'csrf', 'ends_at')
if not f[1] then return false end
if tonumber(f[2]) <= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return false
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return f[1]
`);

/**
 * Lua that ends every session of an owner, for the scripts that must do so together with another
 * write (a new password). Expects the locals `sessions` (the owner's session set) and `prefix` (the
 * session key prefix); leaves the number of sessions ended in `ended`.
 */
export const END_SESSIONS_LUA = `
local ids = redis.call('SMEMBERS', sessions)
for _, id in ipairs(ids) do redis.call('DEL', prefix .. id) end
redis.call('DEL', sessions)
local ended = #ids
`;

// Ends every session of the owner at once; returns how many there were.
const END_ALL = new LuaScript<{ keys: [sessions: string]; args: [sessionPrefix: string]; reply: number }>(`
local sessions, prefix = KEYS[1], ARGV[1]
${END_SESSIONS_LUA}
return ended
`);

/**
 * Dashboard sessions in Redis. The browser holds a random secret; Redis holds only its SHA-256, so a
 * copy of the database opens no session. Every session of an owner is listed in one set in the
 * owner's hash slot, which is how "sign out everywhere" ends them all in one script.
 */
export class SessionStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  readonly lifetime: SessionLifetime;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>, lifetime: SessionLifetime) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.lifetime = lifetime;
  }

  /**
   * Opens a session for the owner. With `passwordHash` (the stored hash a sign-in was checked
   * against), only while that is still the owner's password: undefined once it has changed.
   */
  create(userId: string): Promise<NewSession>;
  create(userId: string, passwordHash: string): Promise<NewSession | undefined>;
  async create(userId: string, passwordHash?: string): Promise<NewSession | undefined> {
    const { token, hash: id } = newOwnerToken(userId);
    const csrfToken = randomBytes(32).toString('base64url');
    const now = this.clock.nowMicros();
    const keys: CreateKeys = [
      this.keys.dashboardSession(userId, id),
      this.keys.dashboardSessionsOf(userId),
      this.keys.user(userId),
    ];
    const args: CreateArgs = [
      id,
      csrfToken,
      now,
      now + this.lifetime.maxAgeMs * 1000,
      this.lifetime.idleMs,
      this.sessionPrefix(userId),
    ];
    const created =
      passwordHash === undefined
        ? await CREATE.run(this.redis, keys, args)
        : await CREATE.run(this.redis, [...keys, this.keys.password(userId)], [...args, passwordHash]);
    if (created === 0) throw new NotFoundError('User not found.');
    return created === 1 ? { token, csrfToken } : undefined;
  }

  /** The session a cookie value opens, kept alive for another idle period; undefined if none. */
  async authenticate(token: string | undefined): Promise<DashboardSession | undefined> {
    const presented = parseOwnerToken(token);
    if (!presented) return undefined;
    const { userId, hash: id } = presented;
    const csrf = await TOUCH.run(
      this.redis,
      [this.keys.dashboardSession(userId, id)],
      [this.clock.nowMicros(), this.lifetime.idleMs],
    );
    return typeof csrf === 'string' ? { id, userId, csrfToken: csrf } : undefined;
  }

  /** Ends one session. */
  async end(session: DashboardSession): Promise<void> {
    await this.redis
      .multi()
      .del(this.keys.dashboardSession(session.userId, session.id))
      .sRem(this.keys.dashboardSessionsOf(session.userId), session.id)
      .exec();
  }

  /** Ends every session of the owner; returns how many there were. */
  async endAll(userId: string): Promise<number> {
    return END_ALL.run(this.redis, [this.keys.dashboardSessionsOf(userId)], [this.sessionPrefix(userId)]);
  }

  private sessionPrefix(userId: string): string {
    return this.keys.dashboardSession(userId, '');
  }
}
