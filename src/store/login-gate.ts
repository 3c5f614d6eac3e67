import { createHash, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { LuaScript } from './lua-script.ts';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/** Sign-in attempts allowed per email address and per client address in any `windowMs`. */
export interface LoginLimits {
  perEmail: number;
  perAddress: number;
  windowMs: number;
}

/** What the gate said about one sign-in attempt. */
export type LoginAdmission = { kind: 'admitted'; ticket: LoginTicket } | { kind: 'limited'; retryAfterSeconds: number };

/** An admitted attempt; a successful sign-in gives it back with {@link LoginGate.forgive}. */
export interface LoginTicket {
  keys: [string, string];
  member: string;
}

// KEYS: email window, address window. ARGV: email limit, address limit, window µs, nonce.
// Both windows are checked and counted in one script with the server's clock, so the limits are
// exact however many gateways take sign-ins at once. Returns {1} or {0, µs until a slot frees}.
const ADMIT = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[3])
local wait = 0
for i = 1, 2 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[i]) then
    local oldest = tonumber(redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')[2])
    wait = math.max(wait, oldest + window - now)
  end
end
if wait > 0 then return {0, wait} end
local member = now .. ':' .. ARGV[4]
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], now, member)
  redis.call('PEXPIRE', KEYS[i], math.ceil(window / 1000))
end
return {1, member}
`);

/**
 * What a client address is counted as: an IPv4 address as itself, an IPv6 address as its /64. One
 * home or one server is handed a whole /64 and picks any of its 2^64 addresses at will, so counting
 * single IPv6 addresses would give each of them a fresh limit.
 */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const parsed = ipaddr.IPv6.parse(address);
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  return `${new ipaddr.IPv6([...parsed.parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}

/**
 * Rate limits dashboard sign-ins per email address and per client address (sliding windows in
 * Redis). Every attempt is counted when it is admitted, so concurrent guesses cannot slip past the
 * limit; a successful sign-in takes its attempt back, so only failures add up. All windows share the
 * `{login}` hash tag: one script reads both (sign-ins are rare next to chat traffic).
 */
export class LoginGate {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly limits: LoginLimits;

  constructor(redis: RedisClient, keys: RedisKeys, limits: LoginLimits) {
    this.redis = redis;
    this.keys = keys;
    this.limits = limits;
  }

  async admit(email: string, address: string): Promise<LoginAdmission> {
    const keys: [string, string] = [
      this.keys.loginAttemptsByEmail(createHash('sha256').update(email).digest('hex')),
      this.keys.loginAttemptsByAddress(addressKey(address)),
    ];
    const { perEmail, perAddress, windowMs } = this.limits;
    const [admitted, value] = (await ADMIT.run(this.redis, keys, [
      perEmail,
      perAddress,
      windowMs * 1000,
      randomUUID(),
    ])) as [number, string | number];
    if (admitted === 1) return { kind: 'admitted', ticket: { keys, member: String(value) } };
    return { kind: 'limited', retryAfterSeconds: Math.ceil(Number(value) / 1_000_000) };
  }

  /** Takes a successful attempt out of both windows. */
  async forgive(ticket: LoginTicket): Promise<void> {
    await this.redis.multi().zRem(ticket.keys[0], ticket.member).zRem(ticket.keys[1], ticket.member).exec();
  }
}
