import { LuaScript } from '../redis/lua-script.ts';
import type { OwnerToken } from '../auth/owner-token.ts';
import { readPastCache, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { END_SESSIONS_LUA } from './session-store.ts';

// Sets the password and ends every session of the owner in one script (all keys are in the owner's
// `{u:<id>}` slot), so no crash can leave sessions opened with the old password alive after a change.
// With an invitation, it is checked and used up first, in the same script: a link raced from two tabs
// sets one password, and a used link has always set it.
// Returns the number of sessions ended, or -1 when the invitation is not (or no longer) pending.
const SET_PASSWORD = new LuaScript<{
  keys: [password: string, sessions: string] | [password: string, sessions: string, invitation: string];
  args: [hash: string, sessionPrefix: string] | [hash: string, sessionPrefix: string, invitationSecretSha256: string];
  reply: number;
}>(`
if KEYS[3] then
  if redis.call('GET', KEYS[3]) ~= ARGV[3] then return -1 end
  redis.call('DEL', KEYS[3])
end
redis.call('SET', KEYS[1], ARGV[1])
local sessions, prefix = KEYS[2], ARGV[2]
${END_SESSIONS_LUA}
return ended
`);

/** Owners' dashboard passwords, stored only as scrypt hashes (see src/dashboard/password-hash.ts). */
export class PasswordStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  /**
   * Sets (or replaces) the owner's password hash and ends every dashboard session of the owner, in
   * one step. With `invite`, only if it is the owner's pending invitation, which it uses up: false
   * (and nothing written) otherwise.
   */
  async set(userId: string, hash: string, invite?: OwnerToken): Promise<boolean> {
    const keys: [string, string] = [this.keys.password(userId), this.keys.dashboardSessionsOf(userId)];
    const args: [string, string] = [hash, this.keys.dashboardSession(userId, '')];
    if (invite === undefined) return (await SET_PASSWORD.run(this.redis, keys, args)) >= 0;
    if (invite.userId !== userId) return false;
    const ended = await SET_PASSWORD.run(this.redis, [...keys, this.keys.invite(userId)], [...args, invite.hash]);
    return ended >= 0;
  }

  /** The stored hash, or undefined when the owner has not set a password yet. */
  async get(userId: string): Promise<string | undefined> {
    // A password just changed through another gateway (or the CLI) must not still let the old one in.
    const hash = await readPastCache<string | null>(this.redis, (multi) => multi.get(this.keys.password(userId)));
    return hash ?? undefined;
  }
}
